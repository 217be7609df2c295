package idsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/mysqltest"
)

// The wrapper's cost against raw go-sql-driver/mysql on loopback MariaDB,
// as bench_test.go measures it against lib/pq: every side on one pinned
// connection, interleaved op by op (see paired and pinned there).
//
//	go test -c -o /tmp/idsql-bench.test ./idsql/
//	for i in $(seq 8); do /tmp/idsql-bench.test -test.run '^$' -test.bench 'MySQL.*Paired' -test.benchtime 3000x; done
//
// Each benchmark runs twice: dsn=prepare with the driver's defaults (a
// statement with arguments is prepared, executed and closed: what
// database/sql does when go-sql-driver answers driver.ErrSkip) and
// dsn=interpolate with interpolateParams=true (the driver writes the
// arguments into the text: one round trip).

var mysqlBenchDSNs = []struct {
	name   string
	params map[string]string
}{
	{"prepare", nil},
	{"interpolate", map[string]string{"interpolateParams": "true"}},
}

// openMySQLBench returns the idsql handle and a raw pool on one fresh
// database with a table for each side of the paired benchmarks: b_idsql
// (the key filled by idsql), b_raw, b_keyed and b_sql (the key given) and
// b_auto (AUTO_INCREMENT).
func openMySQLBench(b *testing.B, params map[string]string) (*idsql.DB, *sql.DB) {
	b.Helper()
	dsn := withParams(b, mysqltest.Database(b), params)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { raw.Close() })
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE b_idsql (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(100)) ENGINE=InnoDB",
		"CREATE TABLE b_raw (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(100)) ENGINE=InnoDB",
		"CREATE TABLE b_keyed (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(100)) ENGINE=InnoDB",
		"CREATE TABLE b_sql (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(100)) ENGINE=InnoDB",
		"CREATE TABLE b_auto (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(100)) ENGINE=InnoDB",
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	cfg := &keyset.Config{Namespace: "bench", Tables: map[string]keyset.TableConfig{"b_idsql": {Strategy: keyset.Snowflake}}}
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true})
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: reg}); err != nil {
		b.Fatal(err)
	}
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3), Registry: reg}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(4)
	if _, err := db.NextID(ctx, "b_idsql"); err != nil {
		b.Fatal(err)
	}
	return db, raw
}

// pinnedRaw returns a connection of the raw pool for the whole benchmark:
// the sql side runs the raw side's statement through database/sql without
// idsql. It is another server connection (a thread of the same MariaDB),
// which the other sides do not share.
func pinnedRaw(b *testing.B, raw *sql.DB) *sql.Conn {
	b.Helper()
	c, err := raw.Conn(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

// mysqlMultiValues is multiValues with ? placeholders: rows (user_id,
// note) rows and, with key, the key column last in each row, where the
// wrapper puts it.
func mysqlMultiValues(table string, rows int, key bool) string {
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (user_id, note")
	row := "(?, ?)"
	if key {
		sb.WriteString(", id")
		row = "(?, ?, ?)"
	}
	sb.WriteString(") VALUES ")
	for r := range rows {
		if r > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(row)
	}
	return sb.String()
}

// truncateAll empties the tables.
func truncateAll(b *testing.B, raw *sql.DB, tables ...string) {
	b.Helper()
	for _, t := range tables {
		if _, err := raw.Exec("TRUNCATE TABLE " + t); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMySQLInsertRowPaired: one single-row INSERT per op, every side
// into its own table. idsql: the statement without the key through idsql's
// driver connection; raw: with the key, on the inner connection; auto:
// AUTO_INCREMENT fills the key, on the inner connection; keyed: the raw
// statement through idsql's driver connection; sql: the raw statement
// through database/sql alone (see pinnedRaw), the only side that goes
// through database/sql.
func BenchmarkMySQLInsertRowPaired(b *testing.B) {
	for _, d := range mysqlBenchDSNs {
		b.Run("dsn="+d.name, func(b *testing.B) {
			db, raw := openMySQLBench(b, d.params)
			ctx := context.Background()
			c, start := pinned(b, db)
			var counter atomic.Int64
			counter.Store(start)
			truncateAll(b, raw, "b_idsql", "b_raw", "b_auto", "b_keyed", "b_sql")
			sc := pinnedRaw(b, raw)
			var nv []driver.NamedValue
			paired(b, []string{"idsql", "raw", "auto", "keyed", "sql"}, []func(int) error{
				func(i int) error {
					nv = named(nv, int64(i), "note")
					return driverExec(ctx, c, false, "INSERT INTO b_idsql (user_id, note) VALUES (?, ?)", nv)
				},
				func(i int) error {
					nv = named(nv, int64(i), "note", counter.Add(1))
					return driverExec(ctx, c, true, "INSERT INTO b_raw (user_id, note, id) VALUES (?, ?, ?)", nv)
				},
				func(i int) error {
					nv = named(nv, int64(i), "note")
					return driverExec(ctx, c, true, "INSERT INTO b_auto (user_id, note) VALUES (?, ?)", nv)
				},
				func(i int) error {
					nv = named(nv, int64(i), "note", counter.Add(1))
					return driverExec(ctx, c, false, "INSERT INTO b_keyed (user_id, note, id) VALUES (?, ?, ?)", nv)
				},
				func(i int) error {
					_, err := sc.ExecContext(ctx, "INSERT INTO b_sql (user_id, note, id) VALUES (?, ?, ?)", i, "note", counter.Add(1))
					return err
				},
			})
			wrote(b, raw, 1, "b_idsql", "b_raw", "b_auto", "b_keyed", "b_sql")
		})
	}
}

// BenchmarkMySQLInsert1000Paired: one 1,000-row INSERT per op; sides as in
// BenchmarkMySQLInsertRowPaired, without auto. Every side sends 3,000
// arguments; all but sql convert none.
func BenchmarkMySQLInsert1000Paired(b *testing.B) {
	const rows = 1000
	for _, d := range mysqlBenchDSNs {
		b.Run("dsn="+d.name, func(b *testing.B) {
			db, raw := openMySQLBench(b, d.params)
			ctx := context.Background()
			c, start := pinned(b, db)
			var counter atomic.Int64
			counter.Store(start)
			truncateAll(b, raw, "b_idsql", "b_raw", "b_keyed", "b_sql")
			args := rowArgs(rows)
			full := make([]driver.NamedValue, 0, 3*rows)
			qi := mysqlMultiValues("b_idsql", rows, false)
			qr, qk, qs := mysqlMultiValues("b_raw", rows, true), mysqlMultiValues("b_keyed", rows, true), mysqlMultiValues("b_sql", rows, true)
			sqlArgs := make([]any, 0, 3*rows)
			sc := pinnedRaw(b, raw)
			paired(b, []string{"idsql", "raw", "keyed", "sql"}, []func(int) error{
				func(int) error {
					return driverExec(ctx, c, false, qi, args)
				},
				func(int) error {
					full = keyArgs(full, args, &counter, true)
					return driverExec(ctx, c, true, qr, full)
				},
				func(int) error {
					full = keyArgs(full, args, &counter, true)
					return driverExec(ctx, c, false, qk, full)
				},
				func(int) error {
					sqlArgs = sqlArgs[:0]
					for _, v := range keyArgs(full, args, &counter, true) {
						sqlArgs = append(sqlArgs, v.Value)
					}
					_, err := sc.ExecContext(ctx, qs, sqlArgs...)
					return err
				},
			})
			wrote(b, raw, rows, "b_idsql", "b_raw", "b_keyed", "b_sql")
		})
	}
}
