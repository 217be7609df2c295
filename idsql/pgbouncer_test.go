package idsql_test

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/pgtest"
)

// bouncerConfig is the configuration of process instance: the worker
// table hands out worker IDs (through PgBouncer too), and one worker ID
// is kept for the database-side default of orders.
func bouncerConfig(t *testing.T, instance string) *keyset.Config {
	t.Helper()
	cfg, err := keyset.Parse("bouncer.yaml", []byte("namespace: bouncer\n"+
		"holder: {kind: postgres, mode: sticky, instance: "+instance+", database_workers: 1}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 20}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// bouncerMode asks PgBouncer's admin console its pool_mode.
func bouncerMode(t *testing.T, dsn string) string {
	t.Helper()
	i := strings.LastIndexByte(dsn, '/')
	admin, err := sql.Open("postgres", dsn[:i]+"/pgbouncer?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	rows, err := admin.Query("SHOW CONFIG") // the console speaks the simple protocol only: no arguments
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		if vals[0].String == "pool_mode" {
			return vals[1].String
		}
	}
	t.Fatal("PgBouncer's SHOW CONFIG has no pool_mode")
	return ""
}

// TestPgBouncerTransactionMode runs every part of idsql that talks to
// PostgreSQL through PgBouncer 1.18 in transaction mode, the DSN settings
// the README gives: Migrate with the database-side defaults, three
// database/sql processes over lib/pq (binary_parameters=yes) and one over
// pgx's stdlib and one pgxid pool (default_query_exec_mode=exec), each
// with its own worker lease from the worker table, and a writer that
// leaves the key to the database, all at once. Every acknowledged row is
// there, no key twice (the key is the primary key: a repeat fails its
// INSERT, which fails the test), and Lookup through PgBouncer traces
// keys to their table.
func TestPgBouncerTransactionMode(t *testing.T) {
	direct, bouncer := pgtest.Bouncer(t)
	if mode := bouncerMode(t, bouncer); mode != "transaction" {
		t.Fatalf("PgBouncer's pool_mode is %q; the test needs transaction", mode)
	}
	ctx := context.Background()
	if _, err := direct.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, src text NOT NULL, n int); "+
		"CREATE TABLE users (id bigint PRIMARY KEY, src text NOT NULL, n int)"); err != nil {
		t.Fatal(err)
	}
	pq := bouncer + "&binary_parameters=yes"
	pgx := bouncer + "&default_query_exec_mode=exec"
	migrated, err := sql.Open("postgres", pq)
	if err != nil {
		t.Fatal(err)
	}
	defer migrated.Close()
	if err := idsql.MigrateWith(ctx, migrated, bouncerConfig(t, "admin"), idsql.MigrateOptions{DBDefaults: true}); err != nil {
		t.Fatalf("migrate through PgBouncer: %v", err)
	}

	type writer struct {
		name   string
		insert func(ctx context.Context, table string, n int) error
	}
	var writers []writer
	for _, p := range []struct{ name, driver, dsn string }{
		{"pq1", "postgres", pq}, {"pq2", "postgres", pq}, {"pq3", "postgres", pq}, {"pgx", "pgx", pgx},
	} {
		db, err := idsql.Open(p.driver, p.dsn, bouncerConfig(t, p.name), idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		writers = append(writers, writer{p.name, func(ctx context.Context, table string, n int) error {
			_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (src, n) VALUES ($1, $2)", p.name, n)
			return err
		}})
	}
	pool, err := pgxpool.New(ctx, pgx)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pdb, err := pgxid.New(pool, bouncerConfig(t, "pgxid"), pgxid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer pdb.Close()
	writers = append(writers, writer{"pgxid", func(ctx context.Context, table string, n int) error {
		_, err := pdb.Exec(ctx, "INSERT INTO "+table+" (src, n) VALUES ($1, $2)", "pgxid", n)
		return err
	}})
	plain, err := sql.Open("postgres", pq) // not idsql's: the database-side default keys its rows
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	writers = append(writers, writer{"plain", func(ctx context.Context, table string, n int) error {
		_, err := plain.ExecContext(ctx, "INSERT INTO "+table+" (src, n) VALUES ($1, $2)", "plain", n)
		return err
	}})

	const rows = 150 // per writer and table
	var wg sync.WaitGroup
	errs := make(chan error, len(writers)*4)
	for _, w := range writers {
		for _, table := range []string{"orders", "users"} {
			for g := range 2 { // two goroutines per writer and table: the pools hold several connections
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := g; i < rows; i += 2 {
						if err := w.insert(ctx, table, i); err != nil {
							errs <- fmt.Errorf("%s: insert into %s: %w", w.name, table, err)
							return
						}
					}
				}()
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, table := range []string{"orders", "users"} {
		for _, w := range writers {
			if n := queryInts(t, direct, "SELECT count(*) FROM "+table+" WHERE src = $1", w.name); n[0] != rows {
				t.Errorf("%s: %d rows of %s; want %d", table, n[0], w.name, rows)
			}
		}
		var src string
		var id int64
		if err := direct.QueryRow("SELECT src, id FROM "+table+" ORDER BY random() LIMIT 1").Scan(&src, &id); err != nil {
			t.Fatal(err)
		}
		origins, err := idsql.Lookup(ctx, migrated, bouncerConfig(t, "admin"), id)
		if err != nil || len(origins) != 1 || origins[0].Table != table {
			t.Errorf("Lookup(%d), a key %s wrote to %s, through PgBouncer: %+v, %v", id, src, table, origins, err)
		}
	}
}

// TestPgBouncerSplitStatementNamed: lib/pq without binary_parameters
// prepares an unnamed statement and binds it in a second round trip,
// which PgBouncer in transaction mode may send to another server
// connection. idsql's error then says what happened and the setting that
// mends it.
func TestPgBouncerSplitStatementNamed(t *testing.T) {
	direct, bouncer := pgtest.Bouncer(t)
	ctx := context.Background()
	if _, err := direct.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, src text NOT NULL, n int)"); err != nil {
		t.Fatal(err)
	}
	cfg := bouncerConfig(t, "split")
	if err := idsql.Migrate(ctx, direct, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", bouncer, cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Goroutines inserting at once make PgBouncer hand each round trip
	// whichever server connection is free; the first split ends the run.
	// It ends without cancelling a context: lib/pq would send PgBouncer a
	// cancel request, and PgBouncer 1.18 can exit on one that races a
	// server's answer ("server_proto: server in bad state").
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		split error
		stop  atomic.Bool
	)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000 && !stop.Load(); i++ {
				if _, err := db.ExecContext(ctx, "INSERT INTO orders (src, n) VALUES ($1, $2)", "split", g*1000+i); err != nil {
					mu.Lock()
					if split == nil {
						split = err
					}
					mu.Unlock()
					stop.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	if split == nil {
		t.Fatal("32,000 INSERTs over lib/pq without binary_parameters through PgBouncer in transaction mode never split a statement: the test shows nothing")
	}
	if !strings.Contains(split.Error(), "as PgBouncer in transaction mode does: with lib/pq add binary_parameters=yes to the DSN") {
		t.Errorf("a split statement: %v; want the error to say what happened and how to mend it", split)
	}
}
