package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jmoiron/sqlx"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/internal/pgtest"
)

// The wrapper's behaviour that every database shares, written once with ?
// placeholders (rebound for PostgreSQL) and run on each:
// TestWrapperPostgreSQL, TestWrapperMySQL, TestWrapperSQLite.

// wfix is one database of the shared wrapper tests.
type wfix struct {
	dialect string
	db      *idsql.DB
	raw     *sql.DB
	cfg     *keyset.Config
	base    int64               // tableWorkers base of the holder
	inRange func(id int64) bool // id is in a range allocated for users
	rowID   func(v int) bool    // the server's own key of plain's v-th row is v
	version string              // the server's version
	rawLast bool                // the inner driver answers LastInsertId
}

// q rebinds ? placeholders for the dialect.
func (f *wfix) q(query string) string { return f.db.Rebind(query) }

func (f *wfix) rq(query string) string { return sqlx.Rebind(sqlx.BindType(f.db.DriverName()), query) }

// ints runs a query on the raw handle.
func (f *wfix) ints(t *testing.T, query string, args ...any) []int64 {
	t.Helper()
	return queryInts(t, f.raw, f.rq(query), args...)
}

func (f *wfix) str(t *testing.T, query string, args ...any) string {
	t.Helper()
	var s string
	if err := f.raw.QueryRow(f.rq(query), args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return s
}

func (f *wfix) isSnowflake(t *testing.T, table string, id int64) {
	t.Helper()
	layout, _ := f.cfg.SnowflakeLayout()
	p, err := layout.Decode(id, time.Now(), time.Second)
	if want := tableWorker(f.cfg, f.base, table); err != nil || p.Worker != want || time.Since(p.Time) > time.Minute {
		t.Errorf("key %d decodes to %+v, %v; want worker %d and now", id, p, err, want)
	}
}

// The schema, the same on every database but for plain's own key.
func wrapperSchema(autoKey string) []string {
	return []string{
		"CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(200))",
		"CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(100) NOT NULL UNIQUE)",
		"CREATE TABLE plain (id " + autoKey + ", v INT)",
		"CREATE TABLE textkey (id VARCHAR(40) NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE realkey (id REAL NOT NULL PRIMARY KEY, v INT)",
	}
}

func wrapperConfig() *keyset.Config {
	return &keyset.Config{Namespace: "wrap", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Snowflake},
		"users":  {Strategy: keyset.Segment, Step: 10},
		// Key columns that cannot hold the keys: refused (ErrKeyType).
		"textkey": {Strategy: keyset.Snowflake},
		"realkey": {Strategy: keyset.Segment, Step: 10},
	}}
}

func openWrapperPostgres(t *testing.T) *wfix {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	for _, q := range wrapperSchema("BIGSERIAL PRIMARY KEY") {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg := wrapperConfig()
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 5)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &wfix{dialect: "postgres", db: db, raw: raw, cfg: cfg, base: 5}
	f.inRange = func(id int64) bool {
		return len(f.ints(t, "SELECT 1 FROM idsql_alloc_log WHERE biz_tag = 'users' AND first_id <= ? AND last_id >= ?", id, id)) == 1
	}
	f.version = f.str(t, "SELECT version()")
	return f
}

func openWrapperMySQL(t *testing.T) *wfix {
	cfg := wrapperConfig()
	m := openMySQL(t, wrapperSchema("BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"), cfg, nil)
	f := &wfix{dialect: "mysql", db: m.db, raw: m.raw, cfg: cfg, base: 7, rawLast: true}
	f.inRange = func(id int64) bool { return inRange(t, m.raw, "users", id) }
	f.version = f.str(t, "SELECT version()")
	return f
}

func openWrapperSQLite(t *testing.T) *wfix {
	ctx := context.Background()
	// The segment store has a file of its own: SQLite has one writer per
	// file, and a transaction of the application waiting for a range
	// would hold the lock the allocation needs.
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "segments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + path + "?" + q.Encode()
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	for _, s := range wrapperSchema("INTEGER PRIMARY KEY") {
		if _, err := raw.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := wrapperConfig()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := store.CreateKey(ctx, segment.KeySpec{Key: "users", Step: 10}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3), SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := &wfix{dialect: "sqlite", db: db, raw: raw, cfg: cfg, base: 3, rawLast: true}
	f.inRange = func(id int64) bool {
		var n int
		store.DB().QueryRow("SELECT count(*) FROM idsql_alloc_log WHERE biz_tag = 'users' AND first_id <= ? AND last_id >= ?", id, id).Scan(&n)
		return n == 1
	}
	f.version = f.str(t, "SELECT sqlite_version()")
	return f
}

func TestWrapperPostgreSQL(t *testing.T) { runWrapperCases(t, openWrapperPostgres) }
func TestWrapperMySQL(t *testing.T)      { runWrapperCases(t, openWrapperMySQL) }
func TestWrapperSQLite(t *testing.T)     { runWrapperCases(t, openWrapperSQLite) }

func runWrapperCases(t *testing.T, open func(*testing.T) *wfix) {
	for _, c := range wrapperCases {
		t.Run(c.name, func(t *testing.T) { c.run(t, open(t)) })
	}
}

type wuser struct {
	ID   int64  `db:"id"`
	Name string `db:"name"`
}

var wrapperCases = []struct {
	name string
	run  func(t *testing.T, f *wfix)
}{
	{"key column not an integer", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		for _, table := range []string{"textkey", "realkey"} {
			for _, q := range []string{"INSERT INTO " + table + " (v) VALUES (?)", "INSERT INTO " + table + " (id, v) VALUES (?, ?)"} {
				args := []any{1}
				if strings.Contains(q, "id,") {
					args = []any{0, 1}
				}
				_, err := f.db.ExecContext(ctx, f.q(q), args...)
				if !errors.Is(err, idsql.ErrKeyType) {
					t.Fatalf("%s: %v; want ErrKeyType", q, err)
				}
				for _, want := range []string{"table " + table + ": key column id is ", "not an integer type", "make it BIGINT"} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: error %q does not say %q", q, err, want)
					}
				}
			}
			if n := f.ints(t, "SELECT count(*) FROM "+table); n[0] != 0 {
				t.Errorf("%s: %d rows written", table, n[0])
			}
		}
	}},
	{"snowflake key", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		res, err := f.db.ExecContext(ctx, f.q("INSERT INTO orders (user_id, note) VALUES (?, ?)"), 7, "n")
		if err != nil {
			t.Fatal(err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			t.Fatal(err)
		}
		if got := f.ints(t, "SELECT id FROM orders WHERE user_id = 7"); len(got) != 1 || got[0] != id {
			t.Fatalf("row keys %v, LastInsertId %d", got, id)
		}
		f.isSnowflake(t, "orders", id)
		if n, _ := res.RowsAffected(); n != 1 {
			t.Errorf("RowsAffected %d", n)
		}
	}},
	{"segment keys", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		var ids []int64
		for i := range 25 {
			res, err := f.db.ExecContext(ctx, f.q("INSERT INTO users (name) VALUES (?)"), fmt.Sprint("u", i))
			if err != nil {
				t.Fatal(err)
			}
			id, _ := res.LastInsertId()
			ids = append(ids, id)
		}
		if !slices.IsSorted(ids) || ids[0] != 1 || ids[24] != 25 {
			t.Fatalf("segment keys %v, want 1..25", ids)
		}
		for _, id := range f.ints(t, "SELECT id FROM users") {
			if !f.inRange(id) {
				t.Errorf("key %d is in no allocated range", id)
			}
		}
	}},
	{"multi-row", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		// A placeholder character in a literal is not a placeholder.
		q, lit := "INSERT INTO orders (user_id, note) VALUES (?, 'a,b;c(?)'), (2, 'lit'), (?, ?)", "a,b;c(?)"
		if f.dialect == "postgres" {
			q, lit = "INSERT INTO orders (user_id, note) VALUES ($1, 'a,b;c($2)'), (2, 'lit'), ($2, $3)", "a,b;c($2)"
		}
		res, err := f.db.ExecContext(ctx, q, 1, 3, "x")
		if err != nil {
			t.Fatal(err)
		}
		first, _ := res.LastInsertId()
		keys := f.ints(t, "SELECT id FROM orders ORDER BY user_id")
		if len(keys) != 3 || keys[0] != first || keys[0] == keys[1] || keys[1] == keys[2] || keys[0] == keys[2] {
			t.Fatalf("keys %v, LastInsertId %d", keys, first)
		}
		if n, _ := res.RowsAffected(); n != 3 {
			t.Errorf("RowsAffected %d", n)
		}
		if note := f.str(t, "SELECT note FROM orders WHERE user_id = 1"); note != lit {
			t.Errorf("literal became %q", note)
		}
		if note := f.str(t, "SELECT note FROM orders WHERE user_id = 3"); note != "x" {
			t.Errorf("third row's note %q", note)
		}
	}},
	{"key listed", func(t *testing.T, f *wfix) {
		if _, err := f.db.Exec(f.q("INSERT INTO orders (id, user_id) VALUES (?, ?)"), 42, 5); err != nil {
			t.Fatal(err)
		}
		if got := f.ints(t, "SELECT id FROM orders WHERE user_id = 5"); len(got) != 1 || got[0] != 42 {
			t.Fatalf("explicit key became %v", got)
		}
	}},
	{"insert select", func(t *testing.T, f *wfix) {
		// orders' key has no default: refused, naming the table.
		_, err := f.db.Exec("INSERT INTO orders (user_id) SELECT 1")
		if err == nil || !strings.Contains(err.Error(), "orders") {
			t.Fatalf("INSERT ... SELECT into orders: %v", err)
		}
		if n := f.ints(t, "SELECT count(*) FROM orders"); n[0] != 0 {
			t.Fatalf("%d rows written", n[0])
		}
		// An unconfigured table passes, and the server numbers the row.
		res, err := f.db.Exec("INSERT INTO plain (v) SELECT 1")
		if err != nil {
			t.Fatal(err)
		}
		if f.rawLast {
			if id, err := res.LastInsertId(); err != nil || id != 1 {
				t.Errorf("unconfigured table: LastInsertId %d, %v; want the server's 1", id, err)
			}
		}
	}},
	{"kept results", func(t *testing.T, f *wfix) {
		// Results kept while later statements run on the same connection
		// (more of them than a connection allocates results at once) each
		// still answer their own statement's key.
		ctx := context.Background()
		c, err := f.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		q := f.q("INSERT INTO orders (user_id) VALUES (?)")
		var kept []sql.Result
		for i := range 150 {
			res, err := c.ExecContext(ctx, q, i)
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, res)
		}
		for i, res := range kept {
			id, err := res.LastInsertId()
			if err != nil {
				t.Fatal(err)
			}
			if n, err := res.RowsAffected(); err != nil || n != 1 {
				t.Fatalf("statement %d: RowsAffected %d, %v", i, n, err)
			}
			if got := f.ints(t, "SELECT id FROM orders WHERE user_id = ?", i); len(got) != 1 || got[0] != id {
				t.Fatalf("statement %d: LastInsertId %d, row %v", i, id, got)
			}
		}
	}},
	{"prepared", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		st, err := f.db.PrepareContext(ctx, f.q("INSERT INTO orders (user_id) VALUES (?)"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for i := range 20 {
			res, err := st.ExecContext(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := res.LastInsertId()
			if got := f.ints(t, "SELECT id FROM orders WHERE user_id = ?", i); len(got) != 1 || got[0] != id {
				t.Fatalf("run %d: LastInsertId %d, row %v", i, id, got)
			}
		}
		if n := f.ints(t, "SELECT count(DISTINCT id) FROM orders"); n[0] != 20 {
			t.Fatalf("%d distinct keys from 20 executions", n[0])
		}
		if _, err := st.ExecContext(ctx, 1, 2); err == nil {
			t.Fatal("two arguments for one placeholder accepted")
		}
	}},
	{"transaction", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		tx, err := f.db.BeginTxx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, f.q("INSERT INTO orders (user_id) VALUES (?)"), 1); err != nil {
			t.Fatal(err)
		}
		if err := tx.Rollback(); err != nil {
			t.Fatal(err)
		}
		if n := f.ints(t, "SELECT count(*) FROM orders"); n[0] != 0 {
			t.Fatalf("rolled back insert left %d rows", n[0])
		}
		tx = f.db.MustBegin()
		res, err := tx.ExecContext(ctx, f.q("INSERT INTO users (name) VALUES (?)"), "t")
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		if got := f.ints(t, "SELECT id FROM users"); len(got) != 1 || got[0] != id {
			t.Fatalf("committed keys %v, LastInsertId %d", got, id)
		}
	}},
	{"returning", func(t *testing.T, f *wfix) {
		if f.dialect == "mysql" && !strings.Contains(f.version, "MariaDB") {
			// MySQL has no INSERT ... RETURNING: the server refuses the
			// filled statement and no row is written.
			if _, err := f.db.Exec(f.q("INSERT INTO orders (user_id, note) VALUES (?, ?) RETURNING id, note"), 4, "r"); err == nil {
				t.Fatal("INSERT ... RETURNING on MySQL succeeded")
			}
			if got := f.ints(t, "SELECT id FROM orders WHERE user_id = 4"); len(got) != 0 {
				t.Fatalf("a refused INSERT ... RETURNING wrote rows %v", got)
			}
			return
		}
		var id int64
		var note string
		if err := f.db.QueryRow(f.q("INSERT INTO orders (user_id, note) VALUES (?, ?) RETURNING id, note"), 4, "r").Scan(&id, &note); err != nil {
			t.Fatal(err)
		}
		if got := f.ints(t, "SELECT id FROM orders WHERE user_id = 4"); len(got) != 1 || got[0] != id || note != "r" {
			t.Fatalf("RETURNING gave %d %q, row %v", id, note, got)
		}
		f.isSnowflake(t, "orders", id)
	}},
	{"named exec", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		u := &wuser{Name: "ann"}
		if _, err := f.db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", u); err != nil {
			t.Fatal(err)
		}
		v := &wuser{Name: "bob"} // the key listed, zero: filled before binding
		if _, err := f.db.NamedExecContext(ctx, "INSERT INTO users (id, name) VALUES (:id, :name)", v); err != nil {
			t.Fatal(err)
		}
		batch := []wuser{{Name: "c1"}, {Name: "c2"}, {Name: "c3"}}
		if _, err := f.db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", batch); err != nil {
			t.Fatal(err)
		}
		m := map[string]any{"name": "dee"}
		if _, err := f.db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", m); err != nil {
			t.Fatal(err)
		}
		tx := f.db.MustBegin()
		w := &wuser{Name: "eve"}
		if _, err := tx.NamedExec("INSERT INTO users (name) VALUES (:name)", w); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		mid, _ := m["id"].(int64)
		want := map[string]int64{"ann": u.ID, "bob": v.ID, "c1": batch[0].ID, "c2": batch[1].ID, "c3": batch[2].ID, "dee": mid, "eve": w.ID}
		var rows []wuser
		if err := f.db.SelectContext(ctx, &rows, "SELECT id, name FROM users"); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("rows %+v", rows)
		}
		for _, r := range rows {
			if r.ID == 0 || want[r.Name] != r.ID || !f.inRange(r.ID) {
				t.Errorf("row %+v; the caller's value holds %d", r, want[r.Name])
			}
		}
	}},
	{"sqlx", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		wantBind := "?"
		if f.dialect == "postgres" {
			wantBind = "$1"
		}
		if f.db.DriverName() != f.dialect || f.db.Rebind("?") != wantBind {
			t.Fatalf("driver %q rebinds ? to %q; want %s and %s", f.db.DriverName(), f.db.Rebind("?"), f.dialect, wantBind)
		}
		for _, n := range []string{"a", "b", "c"} {
			if _, err := f.db.ExecContext(ctx, f.q("INSERT INTO users (name) VALUES (?)"), n); err != nil {
				t.Fatal(err)
			}
		}
		var us []wuser
		if err := f.db.SelectContext(ctx, &us, "SELECT id, name FROM users ORDER BY name"); err != nil || len(us) != 3 {
			t.Fatalf("Select: %v, %v", us, err)
		}
		var one wuser
		if err := f.db.GetContext(ctx, &one, f.q("SELECT id, name FROM users WHERE name = ?"), "b"); err != nil || one.ID != us[1].ID {
			t.Fatalf("Get: %+v, %v", one, err)
		}
		q, args, err := sqlx.In("SELECT id, name FROM users WHERE name IN (?) ORDER BY name", []string{"a", "c"})
		if err != nil {
			t.Fatal(err)
		}
		var some []wuser
		if err := f.db.SelectContext(ctx, &some, f.db.Rebind(q), args...); err != nil || len(some) != 2 {
			t.Fatalf("In+Rebind: %v, %v", some, err)
		}
		st, err := f.db.PreparexContext(ctx, f.q("INSERT INTO orders (user_id) VALUES (?)"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		for i := range 2 {
			if _, err := st.ExecContext(ctx, i); err != nil {
				t.Fatal(err)
			}
		}
		if n := f.ints(t, "SELECT count(DISTINCT id) FROM orders"); n[0] != 2 {
			t.Fatalf("Preparex: %d distinct keys", n[0])
		}
	}},
	{"next id", func(t *testing.T, f *wfix) {
		ctx := context.Background()
		id, err := f.db.NextID(ctx, "orders")
		if err != nil {
			t.Fatal(err)
		}
		f.isSnowflake(t, "orders", id)
		if _, err := f.db.NextID(ctx, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
			t.Fatalf("NextID(nope) = %v", err)
		}
	}},
	// Connections inserting with random rollbacks: every committed row is
	// there once, no rolled-back row is, no key repeats. PostgreSQL, the
	// fastest server here, gets the long soak (8 x 10,000; 500 with -short).
	{"concurrent inserts with rollbacks", func(t *testing.T, f *wfix) {
		conns, per := 4, 150
		if f.dialect == "postgres" {
			conns, per = 8, 10_000
			if testing.Short() {
				per = 500
			}
		}
		f.db.SetMaxOpenConns(conns)
		ctx := context.Background()
		var mu sync.Mutex
		committed := map[int]bool{}
		var wg sync.WaitGroup
		for c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(c), 1))
				for i := 0; i < per; {
					tx, err := f.db.BeginTxx(ctx, nil)
					if err != nil {
						t.Error(err)
						return
					}
					var tags []int
					for j := 0; j < 1+r.IntN(4) && i < per; j++ {
						tag := c*per + i
						q := "INSERT INTO orders (user_id) VALUES (?)"
						if tag%2 == 1 {
							q = "INSERT INTO users (name) VALUES (?)"
						}
						var arg any = tag
						if tag%2 == 1 {
							arg = fmt.Sprint(tag)
						}
						if _, err := tx.ExecContext(ctx, f.q(q), arg); err != nil {
							t.Error(err)
							tx.Rollback()
							return
						}
						tags = append(tags, tag)
						i++
					}
					if r.IntN(4) == 0 {
						tx.Rollback()
						continue
					}
					if err := tx.Commit(); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					for _, tag := range tags {
						committed[tag] = true
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		got := f.ints(t, "SELECT user_id FROM orders")
		for _, s := range f.ints(t, "SELECT CAST(name AS INTEGER) FROM users") {
			got = append(got, s)
		}
		if len(got) != len(committed) {
			t.Fatalf("%d rows, %d committed", len(got), len(committed))
		}
		for _, tag := range got {
			if !committed[int(tag)] {
				t.Fatalf("row %d was rolled back but is there", tag)
			}
		}
		for _, table := range []string{"orders", "users"} {
			if n := f.ints(t, "SELECT count(*) - count(DISTINCT id) FROM "+table); n[0] != 0 {
				t.Fatalf("%s has %d repeated keys", table, n[0])
			}
		}
	}},
}
