package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jmoiron/sqlx"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

const idAllocSchema = `CREATE TABLE id_alloc (app_id INT NOT NULL, shard_id INT NOT NULL, max_id BIGINT NOT NULL, step INT NOT NULL,
	max_limit_id BIGINT, PRIMARY KEY (app_id, shard_id))`

// idAllocDB is a database the id_alloc store is tested on.
type idAllocDB struct {
	driver  string
	open    func(t *testing.T) (dsn string, raw *sql.DB)
	dialect segment.StoreSQL
	bind    int // sqlx's bind type of the driver
}

var (
	idAllocMySQL = idAllocDB{driver: "mysql", dialect: mysqlstore.SQL(), bind: sqlx.QUESTION, open: func(t *testing.T) (string, *sql.DB) {
		dsn := mysqltest.Database(t)
		raw, err := sql.Open("mysql", dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		return dsn, raw
	}}
	idAllocPostgres = idAllocDB{driver: "postgres", dialect: segment.PostgresSQL(), bind: sqlx.DOLLAR, open: func(t *testing.T) (string, *sql.DB) {
		raw, dsn := pgtest.Open(t)
		return dsn, raw
	}}
)

// openIDAlloc creates an id_alloc table (and runs more, written with ?
// placeholders) in a fresh database and returns a migrated store on it
// mapping apps.
func (d idAllocDB) openIDAlloc(t *testing.T, apps map[string]int64, more ...string) (dsn string, raw *sql.DB, store *segment.IDAllocStore) {
	t.Helper()
	dsn, raw = d.open(t)
	ctx := context.Background()
	for _, q := range append([]string{idAllocSchema}, more...) {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	store, err := segment.NewIDAllocStore(raw, d.dialect, segment.IDAllocSettings{Apps: apps})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return dsn, raw, store
}

// q rewrites a statement written with ? placeholders for the driver.
func (d idAllocDB) q(query string) string { return sqlx.Rebind(d.bind, query) }

// The ID service's own id_alloc table, adopted as the store of a sharded
// table: shard n of app 3 draws from row (3, n), above its max_id and never
// past its max_limit_id; lookup explains the keys from the ranges logged.
func TestIDAllocStoreMySQL(t *testing.T)    { testIDAllocStore(t, idAllocMySQL) }
func TestIDAllocStorePostgres(t *testing.T) { testIDAllocStore(t, idAllocPostgres) }

func testIDAllocStore(t *testing.T, d idAllocDB) {
	dsn, raw, store := d.openIDAlloc(t, map[string]int64{"orders": 3}, `CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint NOT NULL)`)
	ctx := context.Background()
	// App 3, shards 0..3: max_id 100, step 10, room up to 160 (shard 2:
	// up to 120). App 4's rows belong to someone else.
	for s := range 4 {
		limit := 160
		if s == 2 {
			limit = 120
		}
		if _, err := raw.ExecContext(ctx, d.q("INSERT INTO id_alloc VALUES (3, ?, 100, 10, ?), (4, ?, 5000, 10, NULL)"), s, limit, s); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &keyset.Config{Namespace: "idalloc", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Segment, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 2}, App: &keyset.AppConfig{ID: 3, Bits: 8}},
	}}
	db, err := idsql.Open(d.driver, dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store, Segment: segment.Settings{MaxStep: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	// Users 2, 6, 10, ... are in shard 2: 20 indexes (101..120) fit.
	var exhausted error
	for i := 0; i < 30 && exhausted == nil; i++ {
		_, exhausted = db.ExecContext(ctx, d.q("INSERT INTO orders (user_id) VALUES (?), (?)"), 4*i+2, 4*i+1)
	}
	if !errors.Is(exhausted, segment.ErrExhausted) || !strings.Contains(exhausted.Error(), "max_limit_id 120") {
		t.Fatalf("shard 2 past max_limit_id: %v", exhausted)
	}
	rows, err := raw.QueryContext(ctx, "SELECT id, user_id FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	g := cfg.Tables["orders"].Gene()
	seen := map[int64]bool{}
	stores := idsql.Stores{Segments: segment.NewSQLStore(raw, d.dialect)}
	for rows.Next() {
		var id, user int64
		rows.Scan(&id, &user)
		p := g.Decompose(id)
		if seen[id] || p.Shard != int(user%4) || p.App != 3 || p.Index <= 100 || (p.Shard == 2 && p.Index > 120) {
			t.Fatalf("key %d (%+v) of user %d", id, p, user)
		}
		seen[id] = true
		origins, err := idsql.LookupIn(ctx, cfg, stores, id)
		if err != nil || len(origins) != 1 || origins[0].Range.Key != fmt.Sprint("orders#", p.Shard) {
			t.Fatalf("lookup %d: %+v, %v", id, origins, err)
		}
	}
	if len(seen) != 40 {
		t.Fatalf("%d rows, want 40 (20 per shard until shard 2 ran out)", len(seen))
	}
	var app4 int64
	raw.QueryRowContext(ctx, "SELECT SUM(max_id) FROM id_alloc WHERE app_id = 4").Scan(&app4)
	if app4 != 4*5000 {
		t.Fatalf("app 4's rows moved: %d", app4)
	}
	if _, err := store.Allocate(ctx, segment.Request{Key: "orders#9"}); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("shard without a row: %v", err)
	}
	if _, err := store.Allocate(ctx, segment.Request{Key: "users"}); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("unmapped key: %v", err)
	}
}

// Concurrent allocations from one id_alloc row never overlap.
func TestIDAllocConcurrentMySQL(t *testing.T)    { testIDAllocConcurrent(t, idAllocMySQL) }
func TestIDAllocConcurrentPostgres(t *testing.T) { testIDAllocConcurrent(t, idAllocPostgres) }

func testIDAllocConcurrent(t *testing.T, d idAllocDB) {
	_, raw, store := d.openIDAlloc(t, map[string]int64{"t": 1}, `INSERT INTO id_alloc VALUES (1, 0, 0, 7, 0)`)
	ctx := context.Background()
	const workers, each = 4, 50
	ranges := make(chan segment.Range, workers*each)
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			for i := range each {
				r, err := store.Allocate(ctx, segment.Request{Key: "t", Step: int64(i % 3 * 5), Instance: fmt.Sprint("w", w)})
				if err != nil {
					errs <- err
					return
				}
				ranges <- r
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	close(ranges)
	seen := map[int64]bool{}
	var total int64
	for r := range ranges {
		for v := r.First; v <= r.Last; v++ {
			if seen[v] {
				t.Fatalf("%d handed out twice", v)
			}
			seen[v] = true
		}
		total += r.Len()
	}
	var maxID int64
	raw.QueryRowContext(ctx, "SELECT max_id FROM id_alloc").Scan(&maxID)
	if maxID != total || int64(len(seen)) != total {
		t.Fatalf("max_id %d, %d IDs handed out, %d distinct", maxID, total, len(seen))
	}
}
