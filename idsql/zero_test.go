package idsql_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// What real code sends beyond plain INSERTs (issue 13), on PostgreSQL.

const zeroSchema = `
CREATE TABLE z (id bigint PRIMARY KEY, n int UNIQUE, s text);
CREATE TABLE keep (id bigint PRIMARY KEY, n int);
CREATE TABLE "Mixed Case" ("Key" bigint PRIMARY KEY, n int);
CREATE SCHEMA {SHOP};
CREATE TABLE {SHOP}."Order Items" (id bigint PRIMARY KEY, n int);
CREATE TABLE narrow4 (id integer PRIMARY KEY, n int);
CREATE TABLE narrow2 (id smallint PRIMARY KEY, n int);
CREATE TABLE nokey (ident bigint PRIMARY KEY, n int);
CREATE TABLE src (v int);
`

// zeroConfig is read from YAML: the quoted names are part of the test.
const zeroConfig = `
namespace: zero
tables:
  z: {strategy: snowflake}
  keep: {strategy: snowflake, fill_zero: false}
  '"Mixed Case"': {strategy: snowflake, column: Key}
  '{SHOP}."Order Items"': {strategy: segment, step: 10}
  narrow4: {strategy: snowflake}
  narrow2: {strategy: snowflake}
  nokey: {strategy: snowflake}
`

// zeroSetup makes zeroSchema in a fresh schema and returns the name of
// its second schema, quoted, for {SHOP}.
func zeroSetup(t *testing.T) (raw *sql.DB, dsn, shop string) {
	t.Helper()
	raw, dsn = pgtest.Open(t)
	var cur string
	if err := raw.QueryRow("SELECT current_schema()").Scan(&cur); err != nil {
		t.Fatal(err)
	}
	shop = `"` + cur + `_Shop"`
	t.Cleanup(func() { raw.Exec("DROP SCHEMA IF EXISTS " + shop + " CASCADE") })
	if _, err := raw.Exec(strings.ReplaceAll(zeroSchema, "{SHOP}", shop)); err != nil {
		t.Fatal(err)
	}
	return raw, dsn, shop
}

func openZero(t *testing.T) (*idsql.DB, *sql.DB, *keyset.Config) {
	t.Helper()
	raw, dsn, shop := zeroSetup(t)
	ctx := context.Background()
	cfg, err := keyset.Parse("zero.yaml", []byte(strings.ReplaceAll(zeroConfig, "{SHOP}", shop)), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, raw, cfg
}

// keysByN reads table's keys by n.
func keysByN(t *testing.T, raw *sql.DB, table, key string) map[int64]int64 {
	t.Helper()
	rows, err := raw.Query("SELECT n, " + key + " FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[int64]int64{}
	for rows.Next() {
		var n, k int64
		if err := rows.Scan(&n, &k); err != nil {
			t.Fatal(err)
		}
		m[n] = k
	}
	return m
}

// isGenerated checks that key is a snowflake key of table issued now.
func isGenerated(t *testing.T, cfg *keyset.Config, base int64, table string, key int64) {
	t.Helper()
	layout, _ := cfg.SnowflakeLayout()
	p, err := layout.Decode(key, time.Now(), time.Second)
	if want := tableWorker(cfg, base, table); err != nil || p.Worker != want || time.Since(p.Time) > time.Minute {
		t.Errorf("%s: key %d decodes to %+v, %v; want a key of worker %d issued now", table, key, p, err, want)
	}
}

func TestFillZeroPostgres(t *testing.T) {
	db, raw, cfg := openZero(t)
	ctx := context.Background()
	gen := func(n ...int64) {
		t.Helper()
		keys := keysByN(t, raw, "z", "id")
		for _, n := range n {
			isGenerated(t, cfg, 3, "z", keys[n])
		}
	}

	// DEFAULT (bun), a bind value 0 (gorm), NULL, a literal 0, mixed with
	// a caller's key in one statement.
	res, err := db.ExecContext(ctx, `INSERT INTO z (id, n, s) VALUES (DEFAULT, $1, 'a')`, 1)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := res.LastInsertId()
	if keysByN(t, raw, "z", "id")[1] != first {
		t.Fatalf("LastInsertId %d is not the row's key", first)
	}
	res, err = db.ExecContext(ctx, `INSERT INTO z (id, n) VALUES ($1, $2), ($3, $4), ($5, $6), (0, 7), (NULL, 8), (DEFAULT, 9)`,
		int64(0), 2, int64(42), 3, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != keysByN(t, raw, "z", "id")[2] {
		t.Errorf("LastInsertId %d, want the first row's generated key", id)
	}
	if n, _ := res.RowsAffected(); n != 6 {
		t.Errorf("RowsAffected %d", n)
	}
	gen(1, 2, 4, 7, 8, 9)
	if k := keysByN(t, raw, "z", "id")[3]; k != 42 {
		t.Errorf("caller's key 42 became %d", k)
	}
	// Without a column list, DEFAULT in the key's position.
	if _, err := db.ExecContext(ctx, `INSERT INTO z VALUES (DEFAULT, 10, 'x'), ($1, 11, 'y')`, int64(0)); err != nil {
		t.Fatal(err)
	}
	gen(10, 11)

	// A prepared statement decides per execution.
	st, err := db.PrepareContext(ctx, `INSERT INTO z (id, n) VALUES ($1, $2)`)
	if err != nil {
		t.Fatal(err)
	}
	for i, key := range []any{int64(0), int64(43), nil, uint64(0), sql.NullInt64{}, int64(44)} {
		if _, err := st.ExecContext(ctx, key, 20+i); err != nil {
			t.Fatalf("prepared execution %d (key %v): %v", i, key, err)
		}
	}
	st.Close()
	gen(20, 22, 23, 24)
	if k := keysByN(t, raw, "z", "id"); k[21] != 43 || k[25] != 44 {
		t.Errorf("caller's keys 43, 44 became %d, %d", k[21], k[25])
	}

	// RETURNING gives the keys the rows got.
	rows, err := db.QueryContext(ctx, `INSERT INTO z (id, n) VALUES (DEFAULT, 30), ($1, 31), ($2, 32) RETURNING id, n`, int64(0), int64(45))
	if err != nil {
		t.Fatal(err)
	}
	keys := keysByN(t, raw, "z", "id")
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		if keys[n] != id {
			t.Errorf("RETURNING gave %d for n=%d, the row has %d", id, n, keys[n])
		}
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	gen(30, 31)

	// Every key is distinct (the primary key says so) and positive.
	for n, k := range keysByN(t, raw, "z", "id") {
		if k <= 0 {
			t.Errorf("n=%d has key %d", n, k)
		}
	}
}

func TestFillZeroOffKeepsZero(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `INSERT INTO keep (id, n) VALUES ($1, 1)`, int64(0)); err != nil {
		t.Fatal(err)
	}
	if k := keysByN(t, raw, "keep", "id")[1]; k != 0 {
		t.Fatalf("fill_zero: false: key 0 became %d", k)
	}
	_, err := db.ExecContext(ctx, `INSERT INTO keep (id, n) VALUES (0, 2)`)
	if err == nil || !strings.Contains(err.Error(), "duplicate key") {
		t.Fatalf("a second key 0 with fill_zero off: %v, want the server's duplicate key error", err)
	}
	// Without the key the table is filled as ever.
	if _, err := db.ExecContext(ctx, `INSERT INTO keep (n) VALUES (3)`); err != nil {
		t.Fatal(err)
	}
}

func TestQuotedTableNames(t *testing.T) {
	db, raw, cfg := openZero(t)
	var shop string
	for name := range cfg.Tables {
		if strings.HasSuffix(name, `."Order Items"`) {
			shop = name
		}
	}
	ctx := context.Background()
	res, err := db.ExecContext(ctx, `INSERT INTO "Mixed Case" (n) VALUES ($1)`, 1)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	isGenerated(t, cfg, 3, `"Mixed Case"`, id)
	if _, err := db.ExecContext(ctx, `INSERT INTO "Mixed Case" ("Key", n) VALUES (DEFAULT, 2)`); err != nil {
		t.Fatal(err)
	}
	keys := keysByN(t, raw, `"Mixed Case"`, `"Key"`)
	if keys[1] != id || keys[2] == 0 || keys[2] == id {
		t.Errorf("keys %v", keys)
	}
	// A segment table in a schema, both names quoted.
	for i := range 3 {
		if _, err := db.ExecContext(ctx, `INSERT INTO `+shop+` (n) VALUES ($1)`, i); err != nil {
			t.Fatal(err)
		}
	}
	if got := keysByN(t, raw, shop, "id"); got[0] != 1 || got[1] != 2 || got[2] != 3 {
		t.Errorf("segment keys %v, want 1, 2, 3", got)
	}
	if next, err := db.NextID(ctx, shop); err != nil || next != 4 {
		t.Errorf("NextID = %d, %v", next, err)
	}
	// What the configuration refuses.
	for _, name := range []string{`"unterminated`, `a.b.c`, `""`, `"a" b`, `1abc`} {
		_, err := keyset.Parse("bad.yaml", []byte("namespace: n\ntables:\n  '"+name+"': {strategy: snowflake}\n"), time.Now())
		if err == nil || !strings.Contains(err.Error(), "not a valid table name") {
			t.Errorf("table name %s: %v", name, err)
		}
	}
}

func TestNarrowKeyRefusedPostgres(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	for _, c := range []struct{ table, typ string }{{"narrow4", "integer"}, {"narrow2", "smallint"}} {
		for _, q := range []string{"INSERT INTO " + c.table + " (n) VALUES (1)", "INSERT INTO " + c.table + " (id, n) VALUES (DEFAULT, 1)"} {
			_, err := db.ExecContext(ctx, q)
			if !errors.Is(err, idsql.ErrNarrowKey) {
				t.Fatalf("%s: %v, want ErrNarrowKey", q, err)
			}
			for _, want := range []string{"table " + c.table, "key column id is " + c.typ, "BIGINT", `ALTER TABLE "` + c.table + `" ALTER COLUMN "id" TYPE bigint`} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		}
		// A prepared statement listing the key: refused only when an
		// execution would generate a key.
		st, err := db.PrepareContext(ctx, "INSERT INTO "+c.table+" (id, n) VALUES ($1, $2)")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ExecContext(ctx, 5, 5); err != nil {
			t.Errorf("%s: explicit key: %v", c.table, err)
		}
		if _, err := st.ExecContext(ctx, 0, 6); !errors.Is(err, idsql.ErrNarrowKey) {
			t.Errorf("%s: zero key: %v, want ErrNarrowKey", c.table, err)
		}
		st.Close()
		if got := keysByN(t, raw, c.table, "id"); len(got) != 1 || got[5] != 5 {
			t.Errorf("%s: rows %v, want only the explicit one", c.table, got)
		}
	}
}

func TestMissingKeyColumnRefusedPostgres(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	_, err := db.ExecContext(ctx, "INSERT INTO nokey (ident, n) VALUES (1, 1)")
	if !errors.Is(err, idsql.ErrNoKeyColumn) {
		t.Fatalf("%v, want ErrNoKeyColumn", err)
	}
	for _, want := range []string{"table nokey", "no column id", "ident, n", "tables.nokey.column"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := db.PrepareContext(ctx, "INSERT INTO nokey (n) VALUES ($1)"); !errors.Is(err, idsql.ErrNoKeyColumn) {
		t.Errorf("Prepare: %v, want ErrNoKeyColumn", err)
	}
	var n int
	raw.QueryRow("SELECT count(*) FROM nokey").Scan(&n)
	if n != 0 {
		t.Errorf("%d rows written", n)
	}
}

func TestLastInsertIdNoRowPostgres(t *testing.T) {
	db, _, _ := openZero(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "INSERT INTO z (n) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	wroteNoRow(t, db, "INSERT INTO z (n) VALUES (1) ON CONFLICT (n) DO NOTHING",
		"INSERT INTO z (id, n) VALUES (DEFAULT, 1) ON CONFLICT DO NOTHING")
}

// wroteNoRow runs statements that insert nothing and checks that their
// results say so: no row affected, LastInsertId 0 and no error.
func wroteNoRow(t *testing.T, db *idsql.DB, queries ...string) {
	t.Helper()
	for _, q := range queries {
		res, err := db.ExecContext(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.RowsAffected()
		id, err := res.LastInsertId()
		if n != 0 || id != 0 || err != nil {
			t.Errorf("%s: RowsAffected %d, LastInsertId %d, %v; want 0, 0, nil", q, n, id, err)
		}
	}
}

func TestDDLWithInsertPassesPostgres(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	for _, q := range []string{
		`CREATE RULE r AS ON INSERT TO src DO ALSO INSERT INTO z (n) VALUES (new.v)`,
		`CREATE OR REPLACE RULE r2 AS ON UPDATE TO src DO ALSO (INSERT INTO z (n, s) VALUES (new.v, 'u'); INSERT INTO keep (n) VALUES (new.v))`,
		`CREATE FUNCTION f(v int) RETURNS void LANGUAGE sql BEGIN ATOMIC INSERT INTO z (n) VALUES (v); END`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	var n int
	raw.QueryRow("SELECT count(*) FROM pg_rules WHERE tablename = 'src'").Scan(&n)
	if n != 2 {
		t.Errorf("%d rules on src, want 2", n)
	}
}

type zrow struct {
	ID int64  `db:"id"`
	N  int    `db:"n"`
	S  string `db:"s"`
}

func TestNamedExecWritesKeysOnlyAfterSuccess(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	for _, q := range []string{
		"INSERT INTO z (n, s) VALUES (:n, :s)",
		"INSERT INTO z (id, n, s) VALUES (:id, :n, :s)",
	} {
		if _, err := raw.ExecContext(ctx, "TRUNCATE z"); err != nil {
			t.Fatal(err)
		}
		ok := &zrow{N: 1, S: "a"}
		if _, err := db.NamedExecContext(ctx, q, ok); err != nil {
			t.Fatal(err)
		}
		if k := keysByN(t, raw, "z", "id")[1]; ok.ID == 0 || ok.ID != k {
			t.Errorf("%s: struct key %d, row key %d", q, ok.ID, k)
		}
		// n is unique: the second row fails, and its struct keeps ID 0.
		dup := &zrow{N: 1, S: "b"}
		if _, err := db.NamedExecContext(ctx, q, dup); err == nil {
			t.Fatalf("%s: duplicate n inserted", q)
		}
		if dup.ID != 0 {
			t.Errorf("%s: failed INSERT wrote key %d into the struct", q, dup.ID)
		}
		// A batch: every struct gets its row's key; a caller's key stays.
		batch := []zrow{{N: 2}, {N: 3, ID: 77}, {N: 4}}
		if _, err := db.NamedExecContext(ctx, q, batch); err != nil {
			t.Fatal(err)
		}
		keys := keysByN(t, raw, "z", "id")
		for _, r := range batch {
			if r.ID == 0 || keys[int64(r.N)] != r.ID {
				t.Errorf("%s: batch row n=%d: struct key %d, row key %d", q, r.N, r.ID, keys[int64(r.N)])
			}
		}
		if batch[1].ID != 77 {
			t.Errorf("%s: caller's key 77 became %d", q, batch[1].ID)
		}
		// A failed batch leaves every struct as it was.
		failed := []zrow{{N: 5}, {N: 2}}
		if _, err := db.NamedExecContext(ctx, q, failed); err == nil {
			t.Fatal("duplicate batch inserted")
		}
		if failed[0].ID != 0 || failed[1].ID != 0 {
			t.Errorf("%s: failed batch wrote keys %d, %d", q, failed[0].ID, failed[1].ID)
		}
		// In a transaction, with a map.
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{"id": int64(0), "n": 6, "s": "m"}
		if _, err := tx.NamedExecContext(ctx, q, m); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if k := keysByN(t, raw, "z", "id")[6]; m["id"] != k {
			t.Errorf("%s: map key %v, row key %d", q, m["id"], k)
		}
	}
}

// TestKeepZeroNamedExecRestores: a table with fill_zero off gets keys
// for zero key fields before sqlx binds them, and puts them back when
// the statement fails.
func TestKeepZeroNamedExecRestores(t *testing.T) {
	db, raw, _ := openZero(t)
	ctx := context.Background()
	r := &zrow{N: 1}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO keep (id, n) VALUES (:id, :n)", r); err != nil {
		t.Fatal(err)
	}
	if k := keysByN(t, raw, "keep", "id")[1]; r.ID == 0 || k != r.ID {
		t.Fatalf("struct key %d, row key %d", r.ID, k)
	}
	bad := &zrow{N: 2}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO keep (id, n, nosuch) VALUES (:id, :n, :s)", bad); err == nil {
		t.Fatal("bad statement succeeded")
	}
	if bad.ID != 0 {
		t.Errorf("failed INSERT left key %d in the struct", bad.ID)
	}
}

func TestNoTablesConfigPassesThrough(t *testing.T) {
	raw, dsn, _ := zeroSetup(t)
	ctx := context.Background()
	cfg, err := keyset.Parse("empty.yaml", []byte("namespace: empty\n"), time.Now())
	if err != nil {
		t.Fatalf("a configuration without tables: %v", err)
	}
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Logger: log}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if lines := strings.Count(logged.String(), "\n"); lines != 1 || !strings.Contains(logged.String(), "no tables configured") {
		t.Errorf("log at Open: %q, want one line saying no tables are configured", logged.String())
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO z (id, n) VALUES (0, 1)"); err != nil {
		t.Fatal(err)
	}
	// Not filled: the server sees the statement as written.
	_, err = db.ExecContext(ctx, "INSERT INTO z (n) VALUES (2)")
	if err == nil || !strings.Contains(err.Error(), "null value") {
		t.Errorf("INSERT without a key through a wrapper without tables: %v, want the server's NOT NULL error", err)
	}
	if keys := keysByN(t, raw, "z", "id"); !slices.Equal([]int64{keys[1]}, []int64{0}) || len(keys) != 1 {
		t.Errorf("rows %v", keys)
	}
}
