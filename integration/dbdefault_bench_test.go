package integration

import (
	"context"
	"database/sql"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// BenchmarkDBDefault measures keys per second from the database-side
// defaults (idsql migrate --db-defaults) of a segment table and of a
// snowflake table against the same INSERT into a table whose key is the
// database's own BIGSERIAL / AUTO_INCREMENT, from one
// connection and from 8, one row per statement (commit-bound) and 1,000
// rows per INSERT ... SELECT (key-bound), in one run:
//
//	go test ./integration -run '^$' -bench DBDefault -benchtime 3s
func BenchmarkDBDefault(b *testing.B) {
	for _, db := range []struct {
		name   string
		open   func(b *testing.B) *sql.DB
		serial string
		rows   string // 1,000 rows for INSERT ... SELECT
		holder idsql.HolderKind
	}{
		{"postgres", func(b *testing.B) *sql.DB { db, _ := pgtest.Open(b); return db },
			"BIGSERIAL", "generate_series(1, 1000)", idsql.HolderPostgres},
		{"mariadb", func(b *testing.B) *sql.DB { db, _ := mysqltest.Open(b); return db },
			"BIGINT AUTO_INCREMENT", "seq_1_to_1000", idsql.HolderMySQL},
	} {
		b.Run(db.name, func(b *testing.B) {
			raw := db.open(b)
			ctx := context.Background()
			for _, q := range []string{
				`CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE events (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE serial (id ` + db.serial + ` PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
			} {
				if _, err := raw.ExecContext(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			cfg := dbdefaultConfigOf(idsql.Snowflake, db.holder)
			cfg.Tables["events"] = cfg.Tables["orders"]
			cfg.Tables["orders"] = dbdefaultConfig().Tables["orders"]
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 1 << 30}); err != nil {
				b.Fatal(err)
			}
			raw.SetMaxOpenConns(8)
			raw.SetMaxIdleConns(8)
			for _, c := range []struct {
				name, table, values string
				rows                int
			}{
				{"segment/rows=1", "orders", "VALUES ('x')", 1},
				{"snowflake/rows=1", "events", "VALUES ('x')", 1},
				{"serial/rows=1", "serial", "VALUES ('x')", 1},
				{"segment/rows=1000", "orders", "SELECT 'x' FROM " + db.rows, 1000},
				{"snowflake/rows=1000", "events", "SELECT 'x' FROM " + db.rows, 1000},
				{"serial/rows=1000", "serial", "SELECT 'x' FROM " + db.rows, 1000},
			} {
				name, q := c.name, "INSERT INTO "+c.table+" (note) "+c.values
				b.Run(name+"/conns=1", func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if _, err := raw.ExecContext(ctx, q); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(b.N*c.rows)/b.Elapsed().Seconds(), "ids/s")
				})
				b.Run(name+"/conns=8", func(b *testing.B) {
					b.ReportAllocs()
					b.SetParallelism(8) // 8 x GOMAXPROCS goroutines on 8 connections
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if _, err := raw.ExecContext(ctx, q); err != nil {
								b.Error(err)
								return
							}
						}
					})
					b.ReportMetric(float64(b.N*c.rows)/b.Elapsed().Seconds(), "ids/s")
				})
			}
		})
	}
}
