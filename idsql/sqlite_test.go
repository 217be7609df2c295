package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/idsql/snowflake"
)

const sqliteSchema = `
CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, n INTEGER UNIQUE, s TEXT);
CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, n INTEGER UNIQUE, s TEXT);
CREATE TABLE events (n INTEGER, s TEXT, id BIGINT NOT NULL PRIMARY KEY);
CREATE TABLE plain (id INTEGER PRIMARY KEY, n INTEGER, s TEXT);
`

// openSQLite returns an idsql.DB over modernc.org/sqlite in a temporary
// file, a raw handle on the same file, and a function listing the ranges
// the segment store (in a file of its own) allocated for users.
func openSQLite(t *testing.T) (*idsql.DB, *sql.DB, func() [][2]int64) {
	t.Helper()
	ctx := context.Background()
	store, dir := sqliteStore(t)
	path := filepath.Join(dir, "app.db")
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	dsn := "file:" + path + "?" + q.Encode()
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	if _, err := raw.ExecContext(ctx, sqliteSchema); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "lite", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Snowflake},
		"users":  {Strategy: keyset.Segment, Step: 20},
		"events": {Strategy: keyset.Snowflake},
	}}
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Segments: store}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store, Holder: tableWorkers(cfg, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ranges := func() [][2]int64 {
		t.Helper()
		rows, err := store.DB().Query("SELECT first_id, last_id FROM idsql_alloc_log WHERE biz_tag = 'users'")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out [][2]int64
		for rows.Next() {
			var r [2]int64
			rows.Scan(&r[0], &r[1])
			out = append(out, r)
		}
		return out
	}
	return db, raw, ranges
}

// liteRow is one row of an n, s table.
type liteRow struct {
	ID int64          `db:"id"`
	N  int64          `db:"n"`
	S  sql.NullString `db:"s"`
}

func liteRows(t *testing.T, raw *sql.DB, table string) []liteRow {
	t.Helper()
	rows, err := raw.Query("SELECT id, n, s FROM " + table + " ORDER BY n")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []liteRow
	for rows.Next() {
		var r liteRow
		var n sql.NullInt64
		if err := rows.Scan(&r.ID, &n, &r.S); err != nil {
			t.Fatal(err)
		}
		r.N = n.Int64
		out = append(out, r)
	}
	return out
}

func checkSnowflake(t *testing.T, id int64) {
	t.Helper()
	p, err := snowflake.Leaf.Decode(id, time.Now(), time.Second)
	// tableWorkers(cfg, 1): events has worker 1, orders 2.
	if err != nil || p.Worker < 1 || p.Worker > 2 || time.Since(p.Time) > time.Minute {
		t.Errorf("key %d decodes to %+v, %v; want worker 1 or 2 and now", id, p, err)
	}
}

func TestSQLiteInserts(t *testing.T) {
	db, raw, ranges := openSQLite(t)
	ctx := context.Background()
	if db.DriverName() != "sqlite" || db.Rebind("?") != "?" {
		t.Fatalf("driver %q rebinds ? to %q", db.DriverName(), db.Rebind("?"))
	}

	// ? arguments, a literal row in between, a ? inside a string: the IDs
	// go to the right positions among the caller's arguments.
	res, err := db.ExecContext(ctx, `INSERT INTO orders (n, s) VALUES (?, ?), (2, 'lit?'), (?, ?)`, 1, "a", 3, "c")
	if err != nil {
		t.Fatal(err)
	}
	first, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 3 {
		t.Fatalf("%d rows affected", n)
	}
	got := liteRows(t, raw, "orders")
	want := []struct {
		n int64
		s string
	}{{1, "a"}, {2, "lit?"}, {3, "c"}}
	if len(got) != 3 {
		t.Fatalf("rows %+v", got)
	}
	for i, w := range want {
		if got[i].N != w.n || got[i].S.String != w.s {
			t.Errorf("row %d = %+v, want n=%d s=%q", i, got[i], w.n, w.s)
		}
		checkSnowflake(t, got[i].ID)
	}
	if got[0].ID != first || got[0].ID == got[1].ID || got[1].ID == got[2].ID {
		t.Fatalf("keys %v, LastInsertId %d", got, first)
	}

	// ON CONFLICT with a ? after the VALUES: inserted, then updated in
	// place (the key stays).
	upsert := `INSERT INTO orders (n, s) VALUES (?, ?) ON CONFLICT (n) DO UPDATE SET s = excluded.s || ?`
	if _, err := db.ExecContext(ctx, upsert, 10, "x", "!"); err != nil {
		t.Fatal(err)
	}
	var k1 int64
	raw.QueryRow("SELECT id FROM orders WHERE n = 10").Scan(&k1)
	if _, err := db.ExecContext(ctx, upsert, 10, "y", "!"); err != nil {
		t.Fatal(err)
	}
	var k2 int64
	var s string
	raw.QueryRow("SELECT id, s FROM orders WHERE n = 10").Scan(&k2, &s)
	if k1 == 0 || k1 != k2 || s != "y!" {
		t.Fatalf("upsert: keys %d then %d, s %q; want the key kept and s y!", k1, k2, s)
	}

	// RETURNING with a ? after the VALUES, into a segment table.
	var id int64
	var echo string
	if err := db.QueryRowContext(ctx, `INSERT INTO users (n, s) VALUES (?, ?) RETURNING id, s || ?`, 1, "u", "?!").Scan(&id, &echo); err != nil {
		t.Fatal(err)
	}
	us := liteRows(t, raw, "users")
	if len(us) != 1 || us[0].ID != id || echo != "u?!" || us[0].S.String != "u" {
		t.Fatalf("RETURNING gave %d, %q; table %+v", id, echo, us)
	}

	// A prepared statement executed many times: fresh segment keys, in
	// allocated ranges.
	st, err := db.PrepareContext(ctx, `INSERT INTO users (s, n) VALUES (?, ?)`)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := range 50 {
		res, err := st.ExecContext(ctx, "p", 100+i)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		ids = append(ids, id)
	}
	st.Close()
	rs := ranges()
	us = liteRows(t, raw, "users")
	if len(us) != 51 {
		t.Fatalf("%d users", len(us))
	}
	seen := map[int64]bool{}
	for i, u := range us {
		if seen[u.ID] {
			t.Fatalf("key %d twice", u.ID)
		}
		seen[u.ID] = true
		if !slices.ContainsFunc(rs, func(r [2]int64) bool { return r[0] <= u.ID && u.ID <= r[1] }) {
			t.Errorf("key %d in no allocated range %v", u.ID, rs)
		}
		if i > 0 && u.ID != ids[i-1] {
			t.Errorf("row n=%d key %d, LastInsertId said %d", u.N, u.ID, ids[i-1])
		}
	}

	// No column list, key after the values: filled.
	if _, err := db.ExecContext(ctx, `INSERT INTO events VALUES (?, ?)`, 1, "e"); err != nil {
		t.Fatal(err)
	}
	ev := liteRows(t, raw, "events")
	if len(ev) != 1 || ev[0].S.String != "e" {
		t.Fatalf("events %+v", ev)
	}
	checkSnowflake(t, ev[0].ID)

	// Key listed: the caller's.
	if _, err := db.ExecContext(ctx, `INSERT INTO orders (id, n, s) VALUES (?, ?, ?)`, 42, 42, "mine"); err != nil {
		t.Fatal(err)
	}
	if err := raw.QueryRow("SELECT id FROM orders WHERE n = 42").Scan(&id); err != nil || id != 42 {
		t.Fatalf("listed key became %d, %v", id, err)
	}

	// INSERT ... SELECT: refused for orders (no default), nothing written;
	// passes for the unconfigured rowid table.
	_, err = db.ExecContext(ctx, `INSERT INTO orders (n, s) SELECT ?, 'sel'`, 99)
	if err == nil || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("INSERT ... SELECT into orders = %v, want an error naming orders", err)
	}
	var cnt int
	raw.QueryRow("SELECT count(*) FROM orders WHERE n = 99").Scan(&cnt)
	if cnt != 0 {
		t.Fatal("refused INSERT ... SELECT wrote a row")
	}
	res, err = db.ExecContext(ctx, `INSERT INTO plain (n, s) SELECT ?, 'sel'`, 1)
	if err != nil {
		t.Fatal(err)
	}
	if id, err := res.LastInsertId(); err != nil || id != 1 {
		t.Fatalf("unconfigured table: LastInsertId %d, %v; want SQLite's rowid 1", id, err)
	}
}

func TestSQLiteNamedExec(t *testing.T) {
	db, raw, _ := openSQLite(t)
	ctx := context.Background()
	u := &liteRow{N: 1, S: sql.NullString{String: "one", Valid: true}}
	if _, err := db.NamedExecContext(ctx, `INSERT INTO users (n, s) VALUES (:n, :s)`, u); err != nil {
		t.Fatal(err)
	}
	batch := []liteRow{{N: 2}, {N: 3}, {N: 4}}
	if _, err := db.NamedExecContext(ctx, `INSERT INTO users (n, s) VALUES (:n, :s)`, batch); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"n": 5, "s": "five"}
	if _, err := db.NamedExecContext(ctx, `INSERT INTO users (n, s) VALUES (:n, :s) ON CONFLICT (n) DO NOTHING`, m); err != nil {
		t.Fatal(err)
	}
	tx := db.MustBegin()
	o := &liteRow{N: 6}
	if _, err := tx.NamedExec(`INSERT INTO orders (n, s) VALUES (:n, :s)`, o); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mid, _ := m["id"].(int64)
	want := map[int64]int64{1: u.ID, 2: batch[0].ID, 3: batch[1].ID, 4: batch[2].ID, 5: mid}
	us := liteRows(t, raw, "users")
	if len(us) != 5 {
		t.Fatalf("users %+v", us)
	}
	for _, r := range us {
		if r.ID == 0 || want[r.N] != r.ID {
			t.Errorf("row n=%d has key %d; the caller's value holds %d", r.N, r.ID, want[r.N])
		}
	}
	ords := liteRows(t, raw, "orders")
	if len(ords) != 1 || ords[0].ID != o.ID {
		t.Fatalf("orders %+v, struct key %d", ords, o.ID)
	}
	checkSnowflake(t, o.ID)
}

// TestSQLiteFillZero: keys given as 0, NULL or a bind value of 0 are
// filled on SQLite too, and LastInsertId is 0 for INSERT OR IGNORE of a
// duplicate (SQLite's own would be a stale rowid).
func TestSQLiteFillZero(t *testing.T) {
	db, raw, _ := openSQLite(t)
	ctx := context.Background()
	res, err := db.ExecContext(ctx, "INSERT INTO orders (id, n) VALUES (?, 1), (0, 2), (NULL, 3), (?, 4)", int64(0), int64(55))
	if err != nil {
		t.Fatal(err)
	}
	keys := keysByN(t, raw, "orders", "id")
	if id, _ := res.LastInsertId(); id != keys[1] || keys[4] != 55 {
		t.Fatalf("LastInsertId %d, keys %v", id, keys)
	}
	for _, n := range []int64{1, 2, 3} {
		if keys[n] <= 0 || keys[n] == 55 {
			t.Errorf("n=%d: key %d", n, keys[n])
		}
	}
	res, err = db.ExecContext(ctx, "INSERT OR IGNORE INTO orders (n) VALUES (1)")
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := res.RowsAffected(); n != 0 {
		t.Fatalf("RowsAffected %d", n)
	}
	if id, err := res.LastInsertId(); id != 0 || err != nil {
		t.Errorf("LastInsertId after an ignored row: %d, %v; want 0, nil", id, err)
	}
}

// A transaction on SQLite inserts more rows into a segment table than one
// range holds, after reading the table, and commits: the segment store
// allocates in its own file, so its writes neither wait for the
// transaction's hold on the application's file nor make the transaction's
// read snapshot stale. (With the store in the application's file the
// first INSERT failed with "database is locked (517)".)
func TestSQLiteSegmentRangesInTransaction(t *testing.T) {
	db, raw, ranges := openSQLite(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM users").Scan(&before); err != nil {
		t.Fatal(err)
	}
	const rows = 100 // five ranges of the table's step, 20
	for i := range rows {
		if _, err := tx.ExecContext(ctx, "INSERT INTO users (n) VALUES (?)", i); err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	got := liteRows(t, raw, "users")
	if len(got) != before+rows {
		t.Fatalf("%d rows after the commit, want %d", len(got), before+rows)
	}
	seen := map[int64]bool{}
	for _, r := range got {
		if r.ID <= 0 || seen[r.ID] {
			t.Fatalf("key %d repeated or not positive", r.ID)
		}
		seen[r.ID] = true
	}
	if n := len(ranges()); n < 2 {
		t.Errorf("%d ranges allocated for %d rows of step 20: the transaction never waited for a new one", n, rows)
	}
}

// A segment store on the application's own SQLite file is refused at the
// first connection, with an error naming the file and the fix, before any
// statement runs.
func TestSQLiteSharedStoreFileRefused(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "app.db")
	store, err := sqlitestore.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	if _, err := store.DB().ExecContext(ctx, sqliteSchema); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "lite", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment}}}
	db, err := idsql.Open("sqlite", sqlitestore.DSN(path), cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, err = db.ExecContext(ctx, "INSERT INTO users (n) VALUES (1)")
	if !errors.Is(err, idsql.ErrSharedSQLiteFile) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "sqlitestore.Open") {
		t.Fatalf("INSERT with the store in the application's file = %v, want ErrSharedSQLiteFile naming %s and the fix", err, path)
	}
	if got := liteRows(t, store.DB(), "users"); len(got) != 0 {
		t.Fatalf("rows written: %+v", got)
	}
}

// TestSegmentBeforeMigrate: a segment table whose key has no row yet (the
// table was configured but Migrate never ran) fails with an error that
// says to run the migration, and still wraps segment.ErrUnknownKey.
func TestSegmentBeforeMigrate(t *testing.T) {
	ctx := context.Background()
	store, dir := sqliteStore(t)
	dsn := "file:" + filepath.Join(dir, "app.db")
	cfg := &keyset.Config{Namespace: "lite", Tables: map[string]keyset.TableConfig{"bolts": {Strategy: keyset.Segment}}}
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, "CREATE TABLE bolts (id BIGINT PRIMARY KEY, n INT)"); err != nil {
		t.Fatal(err)
	}
	_, err = db.ExecContext(ctx, "INSERT INTO bolts (n) VALUES (1)")
	if !errors.Is(err, segment.ErrUnknownKey) || !errors.Is(err, keyset.ErrNotMigrated) {
		t.Fatalf("insert before Migrate: %v, want segment.ErrUnknownKey and keyset.ErrNotMigrated", err)
	}
	for _, want := range []string{`table bolts: its segment key "bolts" has no row`, "run `idsql migrate --config idsql.yaml --dsn ...` (or call idsql.Migrate)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("insert before Migrate: %v\nwant it to say %q", err, want)
		}
	}
}

// sqliteStore opens an SQLite segment store, idsql.db, in a new temporary
// directory, closed when the test ends, and returns it and the directory,
// where the test puts the application's own file beside it.
func sqliteStore(t *testing.T) (*segment.SQLStore, string) {
	t.Helper()
	dir := t.TempDir()
	store, err := sqlitestore.Open(context.Background(), filepath.Join(dir, "idsql.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	return store, dir
}
