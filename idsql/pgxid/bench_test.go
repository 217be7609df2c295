package pgxid_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/benchpair"
	"github.com/idsql/idsql/internal/pgtest"
)

const benchInsert = "INSERT INTO b_pgxid (user_id, note) VALUES ($1, $2)"

// openBench returns one *pgx.Conn on a fresh schema with the benchmark
// tables, one for each side of BenchmarkPgxInsertRowPaired so that table
// growth and index inserts weigh the same on every side, the connection
// wrapped by pgxid (table b_pgxid configured), and a key of b_pgxid, drawn
// so that the lease is held before timing starts.
func openBench(b *testing.B) (*pgx.Conn, *pgxid.DB, int64) {
	b.Helper()
	raw, dsn := pgtest.Open(b)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `
CREATE UNLOGGED TABLE b_pgxid (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE UNLOGGED TABLE b_raw (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE UNLOGGED TABLE b_keyed (id bigint PRIMARY KEY, user_id int NOT NULL, note text);`); err != nil {
		b.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "bench", Tables: map[string]keyset.TableConfig{"b_pgxid": {Strategy: keyset.Snowflake}}}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	db, err := pgxid.New(conn, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	start, err := db.Keys().NextID(ctx, "b_pgxid")
	if err != nil {
		b.Fatal(err)
	}
	return conn, db, start
}

// BenchmarkPgxInsertRowPaired is one single-row INSERT per side, the sides
// interleaved op by op in rotating order (benchpair) on one *pgx.Conn, so
// every side talks to the same PostgreSQL backend, each side into a table
// of its own, with the same arguments (user_id, note and a key of the size
// the wrapper draws):
//
//   - pgxid: the INSERT without its key, through the wrapper;
//   - raw: pgx itself, the key passed from a counter in the statement the
//     wrapper would send;
//   - keyed: the raw side's statement, on its own table, through the
//     wrapper (the key listed, so it passes unchanged): pgxid/keyed is the
//     cost of filling alone.
//
// The goal is pgxid/raw <= 1.03. Run it as
//
//	go test -run '^$' -bench 'PgxInsertRowPaired|PgxFill' -benchtime 5000x -count 5 ./idsql/pgxid
func BenchmarkPgxInsertRowPaired(b *testing.B) {
	conn, db, start := openBench(b)
	ctx := context.Background()
	var counter atomic.Int64 // keys of the same size as the wrapper's
	counter.Store(start)
	const (
		raw   = "INSERT INTO b_raw (user_id, note, id) VALUES ($1, $2, $3)"
		keyed = "INSERT INTO b_keyed (user_id, note, id) VALUES ($1, $2, $3)"
	)
	benchpair.Run(b, []string{"pgxid", "raw", "keyed"}, []func(int) error{
		func(i int) error {
			_, err := db.Exec(ctx, benchInsert, i, "note")
			return err
		},
		func(i int) error {
			_, err := conn.Exec(ctx, raw, i, "note", counter.Add(1))
			return err
		},
		func(i int) error {
			_, err := db.Exec(ctx, keyed, i, "note", counter.Add(1))
			return err
		},
	})
	for _, t := range []string{"b_pgxid", "b_raw", "b_keyed"} { // every side wrote its own rows
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil || n != b.N {
			b.Fatalf("%s has %d rows after %d operations per side (%v)", t, n, b.N, err)
		}
	}
}

// BenchmarkPgxFill is the wrapper's own work for one single-row INSERT,
// without the round trip: the plan (a cache hit), the key and the
// arguments pgx gets. Divided by BenchmarkPgxInsertRowPaired's raw time it
// is the part of the ratio that is the wrapper's in a tight loop.
func BenchmarkPgxFill(b *testing.B) {
	_, db, _ := openBench(b)
	ctx := context.Background()
	args := []any{1, "note"}
	if err := pgxid.Filled(ctx, db, benchInsert, args); err != nil { // the plan and the catalog check, once
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := pgxid.Filled(ctx, db, benchInsert, args); err != nil {
			b.Fatal(err)
		}
	}
}
