package idsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/benchpair"
	"github.com/idsql/idsql/internal/pgtest"
)

// The wrapper's cost against raw lib/pq on loopback PostgreSQL. Each
// benchmark has sub-benchmarks impl=idsql, impl=raw (the key passed
// explicitly from an atomic counter, in the statement the wrapper would
// send) and, for single rows, impl=bigserial (the key from the table's
// sequence), so one benchstat run compares them:
//
//	go test -c -o /tmp/idsql.test ./idsql/
//	for i in $(seq 10); do /tmp/idsql.test -test.run '^$' -test.bench 'BenchmarkInsert' >> new.txt; done
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl new.txt
//
// Running the binary in a loop interleaves the implementations (A, B, C,
// A, B, C, ...); -count would run each ten times in a row. Every side
// inserts into a table of its own, unlogged and truncated before each run,
// so that WAL flushes and table growth weigh the same on every side.

const benchSchema = `
CREATE UNLOGGED TABLE b_idsql (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE UNLOGGED TABLE b_raw (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE UNLOGGED TABLE b_keyed (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE UNLOGGED TABLE b_serial (id bigserial PRIMARY KEY, user_id int NOT NULL, note text);
`

// openBench returns the idsql and raw handles on one fresh schema, with
// the same pool settings.
func openBench(b *testing.B) (*idsql.DB, *sql.DB) {
	b.Helper()
	raw, dsn := pgtest.Open(b)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, benchSchema); err != nil {
		b.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "bench", Tables: map[string]keyset.TableConfig{
		"b_idsql": {Strategy: keyset.Snowflake},
	}}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		b.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3)}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	for _, p := range []*sql.DB{db.DB.DB, raw} {
		p.SetMaxOpenConns(4)
		p.SetMaxIdleConns(4)
		p.SetConnMaxLifetime(0)
	}
	// Start the generator and warm both pools outside the measurements.
	if _, err := db.NextID(ctx, "b_idsql"); err != nil {
		b.Fatal(err)
	}
	if err := raw.PingContext(ctx); err != nil {
		b.Fatal(err)
	}
	return db, raw
}

func truncate(b *testing.B, raw *sql.DB, table string) {
	b.Helper()
	if _, err := raw.Exec("TRUNCATE " + table); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkInsertRow is one single-row INSERT per operation.
func BenchmarkInsertRow(b *testing.B) {
	db, raw := openBench(b)
	ctx := context.Background()
	var counter atomic.Int64
	b.Run("impl=idsql", func(b *testing.B) {
		truncate(b, raw, "b_idsql")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := db.ExecContext(ctx, "INSERT INTO b_idsql (user_id, note) VALUES ($1, $2)", i, "note"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("impl=raw", func(b *testing.B) {
		truncate(b, raw, "b_raw")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := raw.ExecContext(ctx, "INSERT INTO b_raw (user_id, note, id) VALUES ($1, $2, $3)", i, "note", counter.Add(1)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("impl=bigserial", func(b *testing.B) {
		truncate(b, raw, "b_serial")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if _, err := raw.ExecContext(ctx, "INSERT INTO b_serial (user_id, note) VALUES ($1, $2)", i, "note"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
}

// multiValues returns an INSERT of rows (user_id, note) rows, and, with
// key, the text the wrapper makes of it: the key column last, its
// parameters numbered after the caller's.
func multiValues(table string, rows int, key bool) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (user_id, note")
	if key {
		sb.WriteString(", id")
	}
	sb.WriteString(") VALUES ")
	for r := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "($%d, $%d", 2*r+1, 2*r+2)
		if key {
			fmt.Fprintf(&sb, ", $%d", 2*rows+r+1)
		}
		sb.WriteString(")")
	}
	return sb.String()
}

// BenchmarkInsert1000 is one 1,000-row multi-VALUES INSERT per operation.
func BenchmarkInsert1000(b *testing.B) {
	const rows = 1000
	db, raw := openBench(b)
	ctx := context.Background()
	var counter atomic.Int64
	args := make([]any, 2*rows, 3*rows)
	for r := range rows {
		args[2*r], args[2*r+1] = r, "note"
	}
	b.Run("impl=idsql", func(b *testing.B) {
		q := multiValues("b_idsql", rows, false)
		truncate(b, raw, "b_idsql")
		b.ReportAllocs()
		for b.Loop() {
			if _, err := db.ExecContext(ctx, q, args...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	})
	b.Run("impl=raw", func(b *testing.B) {
		q := multiValues("b_raw", rows, true)
		truncate(b, raw, "b_raw")
		b.ReportAllocs()
		full := args
		for b.Loop() {
			full = full[:2*rows]
			for range rows {
				full = append(full, counter.Add(1))
			}
			if _, err := raw.ExecContext(ctx, q, full...); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
	})
}

// paired is benchpair.Run.
func paired(b *testing.B, names []string, ops []func(i int) error) {
	b.Helper()
	benchpair.Run(b, names, ops)
}

// wrote fails the benchmark unless each side's table holds what the side
// claims to have written: rows rows per operation, b.N operations, each
// with a key of its own. A side that wrote fewer rows, or rows without
// their keys, would be timed for work it did not do.
func wrote(b *testing.B, raw *sql.DB, rows int, tables ...string) {
	b.Helper()
	want := b.N * rows
	for _, t := range tables {
		var n, keys int
		if err := raw.QueryRow("SELECT count(*), count(DISTINCT id) FROM "+t).Scan(&n, &keys); err != nil {
			b.Fatalf("count the rows of %s: %v", t, err)
		}
		if n != want || keys != want {
			b.Fatalf("%s has %d rows with %d distinct keys after %d operations of %d rows, want %d of each", t, n, keys, b.N, rows, want)
		}
	}
}

// pinned returns one connection of db's pool for the whole benchmark. The
// paired benchmarks run every side on it: the raw sides talk to its inner
// lib/pq connection through Conn.Raw, so all sides use the same PostgreSQL
// backend. Measured on separate pools, which backend process each pool got
// moved the ratio between 0.95 and 1.4 from run to run on this machine, and
// an idsql pool running statements it passes through unchanged was exactly
// as slow as the idsql side.
//
// It also returns a snowflake key to start the raw sides' counters from:
// lib/pq sends parameters as text, so 19-digit keys cost more to send and
// parse than 4-digit ones (4% of a 1,000-row INSERT here), and the raw
// sides must pass keys of the size idsql passes.
func pinned(b *testing.B, db *idsql.DB) (*sql.Conn, int64) {
	b.Helper()
	start, err := db.NextID(context.Background(), "b_idsql")
	if err != nil {
		b.Fatal(err)
	}
	c, err := db.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c, start
}

// driverExec runs query on c's driver connection, bypassing database/sql:
// idsql's connection, or with inner its wrapped driver's, so bypassing
// idsql as well. The arguments are converted already, so every side of a
// pair converts none: database/sql would convert 1,000 more for a
// 1,000-row INSERT that lists its keys than for one idsql fills. When the
// driver will not take the arguments directly (driver.ErrSkip), the
// statement is prepared, executed and closed, as database/sql does.
func driverExec(ctx context.Context, c *sql.Conn, inner bool, query string, args []driver.NamedValue) error {
	return c.Raw(func(dc any) error {
		if inner {
			dc = idsql.InnerConn(dc)
		}
		_, err := dc.(driver.ExecerContext).ExecContext(ctx, query, args)
		if !errors.Is(err, driver.ErrSkip) {
			return err
		}
		st, err := dc.(driver.ConnPrepareContext).PrepareContext(ctx, query)
		if err != nil {
			return err
		}
		_, err = st.(driver.StmtExecContext).ExecContext(ctx, args)
		return errors.Join(err, st.Close())
	})
}

// named numbers values as driver arguments.
func named(dst []driver.NamedValue, values ...driver.Value) []driver.NamedValue {
	dst = dst[:0]
	for i, v := range values {
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: v})
	}
	return dst
}

// BenchmarkInsertRowPaired is BenchmarkInsertRow with the sides interleaved
// op by op on one connection, each into its own table. idsql: the statement
// without the key through idsql's driver connection; raw: with the key, on
// the inner lib/pq connection; bigserial: the sequence fills the key, on
// the inner connection; keyed: the raw statement through idsql's driver
// connection (the key listed, so it passes unchanged): idsql/keyed is the
// cost of filling the key alone. No side goes through database/sql.
func BenchmarkInsertRowPaired(b *testing.B) {
	db, raw := openBench(b)
	ctx := context.Background()
	c, start := pinned(b, db)
	var counter atomic.Int64
	counter.Store(start)
	for _, t := range []string{"b_idsql", "b_raw", "b_serial", "b_keyed"} {
		truncate(b, raw, t)
	}
	var nv []driver.NamedValue
	paired(b, []string{"idsql", "raw", "bigserial", "keyed"}, []func(int) error{
		func(i int) error {
			nv = named(nv, int64(i), "note")
			return driverExec(ctx, c, false, "INSERT INTO b_idsql (user_id, note) VALUES ($1, $2)", nv)
		},
		func(i int) error {
			nv = named(nv, int64(i), "note", counter.Add(1))
			return driverExec(ctx, c, true, "INSERT INTO b_raw (user_id, note, id) VALUES ($1, $2, $3)", nv)
		},
		func(i int) error {
			nv = named(nv, int64(i), "note")
			return driverExec(ctx, c, true, "INSERT INTO b_serial (user_id, note) VALUES ($1, $2)", nv)
		},
		func(i int) error {
			nv = named(nv, int64(i), "note", counter.Add(1))
			return driverExec(ctx, c, false, "INSERT INTO b_keyed (user_id, note, id) VALUES ($1, $2, $3)", nv)
		},
	})
	wrote(b, raw, 1, "b_idsql", "b_raw", "b_serial", "b_keyed")
}

// keyArgs returns args (rows of user_id and note, numbered 1 to 2*rows)
// with a key from counter added to each row: after all of them, numbered
// from 2*rows+1, as multiValues places the keys; or, inPlace, each row's
// key after its other two values, everything numbered in that order, as
// mysqlMultiValues places them.
func keyArgs(dst, args []driver.NamedValue, counter *atomic.Int64, inPlace bool) []driver.NamedValue {
	dst = dst[:0]
	rows := len(args) / 2
	if !inPlace {
		dst = append(dst, args...)
		for r := range rows {
			dst = append(dst, driver.NamedValue{Ordinal: 2*rows + r + 1, Value: counter.Add(1)})
		}
		return dst
	}
	for r := range rows {
		dst = append(dst, driver.NamedValue{Ordinal: 3*r + 1, Value: args[2*r].Value},
			driver.NamedValue{Ordinal: 3*r + 2, Value: args[2*r+1].Value},
			driver.NamedValue{Ordinal: 3*r + 3, Value: counter.Add(1)})
	}
	return dst
}

// rowArgs returns rows (user_id, note) rows as driver arguments.
func rowArgs(rows int) []driver.NamedValue {
	args := make([]driver.NamedValue, 0, 2*rows)
	for r := range rows {
		args = append(args, driver.NamedValue{Ordinal: 2*r + 1, Value: int64(r)},
			driver.NamedValue{Ordinal: 2*r + 2, Value: "note"})
	}
	return args
}

// BenchmarkInsert1000Paired is BenchmarkInsert1000 with the sides
// interleaved op by op on one connection, each into its own table; sides
// as in BenchmarkInsertRowPaired, without bigserial. Every side sends
// 3,000 arguments to the server and converts none.
func BenchmarkInsert1000Paired(b *testing.B) {
	const rows = 1000
	db, raw := openBench(b)
	ctx := context.Background()
	c, start := pinned(b, db)
	var counter atomic.Int64
	counter.Store(start)
	args := rowArgs(rows)
	full := make([]driver.NamedValue, 0, 3*rows)
	qi, qr, qk := multiValues("b_idsql", rows, false), multiValues("b_raw", rows, true), multiValues("b_keyed", rows, true)
	for _, t := range []string{"b_idsql", "b_raw", "b_keyed"} {
		truncate(b, raw, t)
	}
	paired(b, []string{"idsql", "raw", "keyed"}, []func(int) error{
		func(int) error {
			return driverExec(ctx, c, false, qi, args)
		},
		func(int) error {
			full = keyArgs(full, args, &counter, false)
			return driverExec(ctx, c, true, qr, full)
		},
		func(int) error {
			full = keyArgs(full, args, &counter, false)
			return driverExec(ctx, c, false, qk, full)
		},
	})
	wrote(b, raw, rows, "b_idsql", "b_raw", "b_keyed")
}
