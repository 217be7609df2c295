package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/pgtest"
)

const schemaSQL = `
CREATE TABLE orders (id bigint PRIMARY KEY, user_id int NOT NULL, total numeric(10,2), note text);
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL, tags text[]);
CREATE TABLE "Audit" ("Key" bigint PRIMARY KEY, what text);
CREATE TABLE with_default (id bigserial PRIMARY KEY, v int);
CREATE TABLE plain (id bigserial PRIMARY KEY, v int);
CREATE TABLE events (kind text NOT NULL, at int, id bigint PRIMARY KEY);
`

func testConfig() *keyset.Config {
	return &keyset.Config{
		Namespace: "shop",
		Tables: map[string]keyset.TableConfig{
			"orders":       {Strategy: keyset.Snowflake},
			"users":        {Strategy: keyset.Segment, Step: 100},
			"Audit":        {Strategy: keyset.Snowflake, Column: "Key"},
			"with_default": {Strategy: keyset.Snowflake},
			"events":       {Strategy: keyset.Snowflake},
		},
	}
}

// openTest returns an idsql.DB and a raw lib/pq handle on a fresh schema.
func openTest(t *testing.T) (*idsql.DB, *sql.DB) {
	t.Helper()
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, schemaSQL); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig()
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 5)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, raw
}

func TestInsertFillsSnowflakeKey(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	res, err := db.ExecContext(ctx, "INSERT INTO orders (user_id, total) VALUES ($1, $2)", 7, "12.50")
	if err != nil {
		t.Fatal(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	var got int64
	var user int
	if err := raw.QueryRowContext(ctx, "SELECT id, user_id FROM orders").Scan(&got, &user); err != nil {
		t.Fatal(err)
	}
	if got != id || user != 7 {
		t.Fatalf("row (%d, %d), LastInsertId %d", got, user, id)
	}
	p, err := snowflake.Leaf.Decode(id, time.Now(), time.Second)
	if want := tableWorker(testConfig(), 5, "orders"); err != nil || p.Worker != want || time.Since(p.Time) > time.Minute {
		t.Fatalf("key %d decodes to %+v, %v; want worker %d and now", id, p, err, want)
	}
}

func TestInsertFillsSegmentKey(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	var ids []int64
	for i := range 250 {
		res, err := db.ExecContext(ctx, "INSERT INTO users (name) VALUES ($1)", fmt.Sprint("u", i))
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	if !slices.IsSorted(ids) || ids[0] != 1 || ids[249] != 250 {
		t.Fatalf("segment keys %v, want 1..250 in order", ids)
	}
	var n int
	raw.QueryRowContext(ctx, "SELECT count(DISTINCT id) FROM users").Scan(&n)
	if n != 250 {
		t.Fatalf("%d distinct rows, want 250", n)
	}
}

func TestInsertForms(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	// Multi-row VALUES: one key per row, LastInsertId is the first.
	res, err := db.ExecContext(ctx, "INSERT INTO orders (user_id, note) VALUES ($1, 'a,b;c($1)'), ($2, $3), (3, E'it\\'s')", 1, 2, "x")
	if err != nil {
		t.Fatal(err)
	}
	first, _ := res.LastInsertId()
	rows := queryInts(t, raw, "SELECT id FROM orders ORDER BY user_id")
	if len(rows) != 3 || rows[0] != first || rows[0] == rows[1] || rows[1] == rows[2] {
		t.Fatalf("keys %v, first %d", rows, first)
	}
	if note := queryString(t, raw, "SELECT note FROM orders WHERE user_id = 1"); note != "a,b;c($1)" {
		t.Fatalf("literal became %q", note)
	}

	// RETURNING id returns the generated key.
	var returned int64
	if err := db.QueryRowContext(ctx, "INSERT INTO orders (user_id) VALUES ($1) RETURNING id", 4).Scan(&returned); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, "SELECT id FROM orders WHERE user_id = 4"); len(got) != 1 || got[0] != returned {
		t.Fatalf("RETURNING gave %d, row has %v", returned, got)
	}

	// Quoted names and a quoted key column.
	if _, err := db.ExecContext(ctx, `INSERT INTO "Audit" (what) VALUES ($1)`, "login"); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, `SELECT "Key" FROM "Audit"`); len(got) != 1 || got[0] <= 0 {
		t.Fatalf("Audit keys %v", got)
	}

	// Key column given: the caller's value stays.
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (id, user_id) VALUES ($1, $2)", 42, 5); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, "SELECT id FROM orders WHERE user_id = 5"); got[0] != 42 {
		t.Fatalf("explicit key became %v", got)
	}

	// ON CONFLICT and DEFAULT VALUES.
	if _, err := db.ExecContext(ctx, "INSERT INTO users (name) VALUES ($1) ON CONFLICT (id) DO NOTHING", "z"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO with_default DEFAULT VALUES"); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, "SELECT id FROM with_default"); got[0] < 1<<40 {
		t.Fatalf("DEFAULT VALUES got key %v, want a snowflake key", got)
	}

	// No column list: values go to the first columns in table order, as
	// PostgreSQL assigns them. A key among them is the caller's; a key
	// after them is filled.
	if _, err := db.ExecContext(ctx, "INSERT INTO users VALUES ($1, $2)", 999, "positional"); err != nil {
		t.Fatal(err)
	}
	if got := queryString(t, raw, "SELECT name FROM users WHERE id = 999"); got != "positional" {
		t.Fatalf("positional insert with its key: name %q", got)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO events VALUES ($1, $2)", "click", 3); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, "SELECT id FROM events WHERE kind = 'click' AND at = 3"); len(got) != 1 || got[0] < 1<<40 {
		t.Fatalf("positional insert without its key got %v", got)
	}

	// Unconfigured tables pass through.
	if _, err := db.ExecContext(ctx, "INSERT INTO plain (v) VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if got := queryInts(t, raw, "SELECT id FROM plain"); got[0] != 1 {
		t.Fatalf("plain table key %v, want the sequence's 1", got)
	}
}

func TestInsertSelect(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	// with_default has a default: INSERT ... SELECT passes unchanged.
	if _, err := db.ExecContext(ctx, "INSERT INTO with_default (v) SELECT 1"); err != nil {
		t.Fatal(err)
	}
	// orders has none: a clear error, nothing written.
	_, err := db.ExecContext(ctx, "INSERT INTO orders (user_id) SELECT 1")
	if err == nil || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("INSERT ... SELECT into orders = %v, want an error naming orders", err)
	}
	if n := queryInts(t, raw, "SELECT count(*) FROM orders"); n[0] != 0 {
		t.Fatalf("%d rows written", n[0])
	}
}

func TestPreparedFreshKeys(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	st, err := db.PrepareContext(ctx, "INSERT INTO orders (user_id) VALUES ($1)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 20 {
		if _, err := st.ExecContext(ctx, i); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryInts(t, raw, "SELECT count(DISTINCT id) FROM orders"); got[0] != 20 {
		t.Fatalf("%d distinct keys from 20 executions", got[0])
	}
	// Wrong argument count is database/sql's error, before any key is used.
	if _, err := st.ExecContext(ctx, 1, 2); err == nil {
		t.Fatal("two arguments for one placeholder accepted")
	}
}

func TestTransactions(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	tx, err := db.BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (user_id) VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := queryInts(t, raw, "SELECT count(*) FROM orders"); n[0] != 0 {
		t.Fatalf("rolled back insert left %d rows", n[0])
	}
	// Isolation level and read-only survive the wrapper.
	tx, err = db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var level string
	tx.QueryRowContext(ctx, "SHOW transaction_isolation").Scan(&level)
	if level != "serializable" {
		t.Errorf("isolation %q", level)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (user_id) VALUES (1)"); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("insert in a read-only transaction = %v", err)
	}
}

type user struct {
	ID   int64  `db:"id"`
	Name string `db:"name"`
}

func TestNamedExecFillsStructs(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	u := &user{Name: "ann"}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", u); err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", u.ID)) != "ann" {
		t.Fatalf("struct key %d does not name the inserted row", u.ID)
	}
	// A key listed in the statement is filled too.
	v := &user{Name: "bob"}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO users (id, name) VALUES (:id, :name)", v); err != nil {
		t.Fatal(err)
	}
	if v.ID == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", v.ID)) != "bob" {
		t.Fatalf("listed key %d does not name the inserted row", v.ID)
	}
	// A batch of structs.
	batch := []user{{Name: "c1"}, {Name: "c2"}, {Name: "c3"}}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", batch); err != nil {
		t.Fatal(err)
	}
	for _, b := range batch {
		if b.ID == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", b.ID)) != b.Name {
			t.Fatalf("batch row %+v does not match the table", b)
		}
	}
	// A map.
	m := map[string]any{"name": "dee"}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", m); err != nil {
		t.Fatal(err)
	}
	if id, _ := m["id"].(int64); id == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", id)) != "dee" {
		t.Fatalf("map key %v", m["id"])
	}
	// In a transaction.
	tx := db.MustBegin()
	w := &user{Name: "eve"}
	if _, err := tx.NamedExec("INSERT INTO users (name) VALUES (:name)", w); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if w.ID == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", w.ID)) != "eve" {
		t.Fatalf("tx struct key %d", w.ID)
	}
	// MustBeginTx gives idsql's Tx too (sqlx's would not write back).
	var _ *idsql.Tx = db.MustBeginTx(ctx, nil)
	tx = db.MustBeginTx(ctx, &sql.TxOptions{})
	x := &user{Name: "fay"}
	if _, err := tx.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", x); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if x.ID == 0 || queryString(t, raw, fmt.Sprintf("SELECT name FROM users WHERE id = %d", x.ID)) != "fay" {
		t.Fatalf("MustBeginTx struct key %d", x.ID)
	}
	// sqlx's free function inserts the row with a key but, as documented,
	// does not write it back.
	y := &user{Name: "gus"}
	if _, err := sqlx.NamedExecContext(ctx, db, "INSERT INTO users (name) VALUES (:name)", y); err != nil {
		t.Fatal(err)
	}
	if y.ID != 0 || queryString(t, raw, "SELECT count(*) FROM users WHERE name = 'gus' AND id > 0") != "1" {
		t.Fatalf("sqlx.NamedExecContext: struct key %d, want 0 and one row with a key", y.ID)
	}
}

func TestSqlxCompatibility(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	if db.DriverName() != "postgres" || db.Rebind("?") != "$1" {
		t.Fatalf("driver %q rebinds ? to %q; want postgres and $1", db.DriverName(), db.Rebind("?"))
	}
	for _, n := range []string{"a", "b", "c"} {
		if _, err := db.ExecContext(ctx, "INSERT INTO users (name) VALUES ($1)", n); err != nil {
			t.Fatal(err)
		}
	}
	var us []user
	if err := db.SelectContext(ctx, &us, "SELECT id, name FROM users ORDER BY name"); err != nil || len(us) != 3 {
		t.Fatalf("Select: %v, %v", us, err)
	}
	var one user
	if err := db.GetContext(ctx, &one, "SELECT id, name FROM users WHERE name = $1", "b"); err != nil || one.ID != us[1].ID {
		t.Fatalf("Get: %+v, %v", one, err)
	}
	q, args, err := sqlx.In("SELECT id, name FROM users WHERE name IN (?) ORDER BY name", []string{"a", "c"})
	if err != nil {
		t.Fatal(err)
	}
	var some []user
	if err := db.SelectContext(ctx, &some, db.Rebind(q), args...); err != nil || len(some) != 2 {
		t.Fatalf("In+Rebind: %v, %v", some, err)
	}
	rows, err := db.NamedQueryContext(ctx, "INSERT INTO users (name) VALUES (:name) RETURNING id", map[string]any{"name": "nq"})
	if err != nil {
		t.Fatal(err)
	}
	var nqID int64
	for rows.Next() {
		rows.Scan(&nqID)
	}
	rows.Close()
	if nqID == 0 {
		t.Fatal("NamedQuery RETURNING gave no key")
	}
	st, err := db.PreparexContext(ctx, "INSERT INTO orders (user_id) VALUES ($1) RETURNING id")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var a, b int64
	st.QueryRowxContext(ctx, 1).Scan(&a)
	st.QueryRowxContext(ctx, 2).Scan(&b)
	if a == 0 || a == b {
		t.Fatalf("Preparex keys %d, %d", a, b)
	}
	// lib/pq converts a []string argument through its NamedValueChecker.
	if _, err := db.ExecContext(ctx, "INSERT INTO users (name, tags) VALUES ($1, $2)", "tagged", pq.Array([]string{"x", "y"})); err != nil {
		t.Fatal(err)
	}
}

// pq.CopyIn keeps working through the wrapper: COPY is not an INSERT.
func TestCopyInPassesThrough(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tx.Prepare(pq.CopyIn("orders", "id", "user_id"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := st.Exec(int64(1000+i), i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Exec(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := queryInts(t, raw, "SELECT count(*) FROM orders"); n[0] != 10 {
		t.Fatalf("COPY wrote %d rows", n[0])
	}
}

func TestRawReachesInnerConn(t *testing.T) {
	db, _ := openTest(t)
	c, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var typ string
	c.Raw(func(dc any) error {
		typ = reflect.TypeOf(idsql.InnerConn(dc)).String()
		return nil
	})
	if typ != "*pq.conn" {
		t.Fatalf("inner connection is %s, want *pq.conn", typ)
	}
	if err := db.PingContext(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownTableKey(t *testing.T) {
	db, _ := openTest(t)
	_, err := db.NextID(context.Background(), "nope")
	if !errors.Is(err, keyset.ErrUnknownTable) || !strings.Contains(err.Error(), `"nope"`) {
		t.Fatalf("NextID(nope) = %v", err)
	}
}

// queryInts returns the first column of q's rows as integers.
func queryInts(t *testing.T, db *sql.DB, q string, args ...any) []int64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func queryString(t *testing.T, db *sql.DB, q string) string {
	t.Helper()
	var s string
	if err := db.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}
