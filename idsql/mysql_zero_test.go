package idsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

// Issue 13 on MySQL and MariaDB.

var mysqlZeroSchema = []string{
	"CREATE TABLE z (id BIGINT NOT NULL PRIMARY KEY, n INT UNIQUE, s TEXT)",
	"CREATE TABLE keep (id BIGINT NOT NULL PRIMARY KEY, n INT)",
	"CREATE TABLE `Mixed Case` (`Key` BIGINT NOT NULL PRIMARY KEY, n INT)",
	"CREATE TABLE nokey (ident BIGINT NOT NULL PRIMARY KEY, n INT)",
	"CREATE TABLE src (v INT)",
}

func mysqlZeroConfig() *keyset.Config {
	off := false
	return &keyset.Config{Namespace: "myzero", Tables: map[string]keyset.TableConfig{
		"z":            {Strategy: keyset.Snowflake},
		"keep":         {Strategy: keyset.Snowflake, FillZero: &off},
		`"Mixed Case"`: {Strategy: keyset.Snowflake, Column: "Key"},
		"nokey":        {Strategy: keyset.Snowflake},
	}}
}

// myKeysByN reads a table's keys by n.
func myKeysByN(t *testing.T, m *mysqlDB, table, key string) map[int64]int64 {
	t.Helper()
	return keysByN(t, m.raw, table, key)
}

func TestMySQLFillZero(t *testing.T) {
	m := openMySQL(t, mysqlZeroSchema, mysqlZeroConfig(), nil)
	ctx := context.Background()
	gen := func(n ...int64) {
		t.Helper()
		keys := myKeysByN(t, m, "z", "id")
		for _, n := range n {
			m.isKey(t, "z", keys[n])
		}
	}
	res, err := m.db.ExecContext(ctx, "INSERT INTO z (id, n) VALUES (DEFAULT, ?), (?, ?), (?, ?), (0, 4), (NULL, 5)",
		1, int64(0), 2, int64(42), 3)
	if err != nil {
		t.Fatal(err)
	}
	keys := myKeysByN(t, m, "z", "id")
	if id, _ := res.LastInsertId(); id != keys[1] {
		t.Errorf("LastInsertId %d, want the first generated key %d", id, keys[1])
	}
	gen(1, 2, 4, 5)
	if keys[3] != 42 {
		t.Errorf("caller's key 42 became %d", keys[3])
	}
	// The first row keeps its key: LastInsertId is the first generated one.
	res, err = m.db.ExecContext(ctx, "INSERT INTO z (id, n) VALUES (?, 6), (?, 7)", int64(43), nil)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != myKeysByN(t, m, "z", "id")[7] {
		t.Errorf("LastInsertId %d, want n=7's generated key", id)
	}
	// SET, and no column list.
	if _, err := m.db.ExecContext(ctx, "INSERT INTO z SET id = DEFAULT, n = ?", 8); err != nil {
		t.Fatal(err)
	}
	if _, err := m.db.ExecContext(ctx, "INSERT INTO z VALUES (DEFAULT, 9, 'x'), (?, 10, 'y')", uint64(0)); err != nil {
		t.Fatal(err)
	}
	gen(7, 8, 9, 10)
	// A prepared statement decides per execution.
	st, err := m.db.PrepareContext(ctx, "INSERT INTO z (id, n) VALUES (?, ?)")
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []any{int64(0), int64(44), nil} {
		if _, err := st.ExecContext(ctx, key, 20+i); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	gen(20, 22)
	// Quoted configured name.
	if _, err := m.db.ExecContext(ctx, "INSERT INTO `Mixed Case` (`Key`, n) VALUES (DEFAULT, 1), (?, 2)", 0); err != nil {
		t.Fatal(err)
	}
	for _, k := range myKeysByN(t, m, "`Mixed Case`", "`Key`") {
		m.isKey(t, `"Mixed Case"`, k)
	}
	// fill_zero off: 0 is kept.
	if _, err := m.db.ExecContext(ctx, "INSERT INTO keep (id, n) VALUES (?, 1)", 0); err != nil {
		t.Fatal(err)
	}
	if k := myKeysByN(t, m, "keep", "id")[1]; k != 0 {
		t.Errorf("fill_zero off: key 0 became %d", k)
	}
}

func TestMySQLMissingKeyColumnRefused(t *testing.T) {
	m := openMySQL(t, mysqlZeroSchema, mysqlZeroConfig(), nil)
	_, err := m.db.ExecContext(context.Background(), "INSERT INTO nokey (ident, n) VALUES (1, 1)")
	if !errors.Is(err, idsql.ErrNoKeyColumn) || !strings.Contains(err.Error(), "table nokey has no column id") {
		t.Fatalf("%v, want ErrNoKeyColumn naming the table and column", err)
	}
}

func TestMySQLLastInsertIdNoRow(t *testing.T) {
	m := openMySQL(t, mysqlZeroSchema, mysqlZeroConfig(), nil)
	ctx := context.Background()
	if _, err := m.db.ExecContext(ctx, "INSERT INTO z (n) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	wroteNoRow(t, m.db, "INSERT IGNORE INTO z (n) VALUES (1)", "INSERT IGNORE INTO z (id, n) VALUES (DEFAULT, 1)")
}

func TestMySQLDDLWithInsertPasses(t *testing.T) {
	m := openMySQL(t, mysqlZeroSchema, mysqlZeroConfig(), nil)
	ctx := context.Background()
	if _, err := m.db.ExecContext(ctx, "CREATE TRIGGER tr AFTER INSERT ON src FOR EACH ROW INSERT INTO z (n) VALUES (NEW.v)"); err != nil {
		t.Fatal(err)
	}
	if got := mysqlStrings(t, m.raw, "SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = database()"); len(got) != 1 {
		t.Errorf("triggers %v", got)
	}
}

func TestMySQLNoTablesConfig(t *testing.T) {
	cfg, err := keyset.Parse("empty.yaml", []byte("namespace: empty\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	m := openMySQL(t, mysqlZeroSchema, cfg, nil)
	if _, err := m.db.ExecContext(context.Background(), "INSERT INTO z (id, n) VALUES (0, 1)"); err != nil {
		t.Fatal(err)
	}
	if k := myKeysByN(t, m, "z", "id"); len(k) != 1 || k[1] != 0 {
		t.Errorf("rows %v, want key 0 as written", k)
	}
}
