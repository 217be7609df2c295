package integration

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// BenchmarkDBDefault measures keys per second from the database-side
// defaults (idsql migrate --db-defaults) of a segment table and of a
// snowflake table against the same INSERT into a table whose key is the
// database's own BIGSERIAL / AUTO_INCREMENT and into one keyed by
// Instagram's sharded IDs ((ms - epoch) << 23 | shard << 10 | nextval %
// 1024, trusting the database clock: a PL/pgSQL function on PostgreSQL, a
// trigger on MariaDB), in one run: one row per statement from 1 and from 8
// connections (commit-bound), 1,000 rows per INSERT ... SELECT from 8
// connections, and 100,000 rows per statement from 1 connection (COPY on
// PostgreSQL, INSERT ... SELECT on MariaDB, which has no COPY). The
// segment-shard and snowflake-reverse sides are the two defaults on
// tables with a spread key shape:
//
//	go test ./integration -run '^$' -bench DBDefault -benchtime 3s
//
// scripts/pgbench-defaults measures PostgreSQL's side with pgbench.
func BenchmarkDBDefault(b *testing.B) {
	for _, db := range []struct {
		name   string
		open   func(b *testing.B) *sql.DB
		serial string
		anchor []string // the Instagram table's set-up
		rows   string   // 1,000 rows for INSERT ... SELECT
		holder keyset.HolderKind
	}{
		{"postgres", func(b *testing.B) *sql.DB { db, _ := pgtest.Open(b); return db },
			"BIGSERIAL", []string{
				`CREATE SEQUENCE instagram_seq`,
				`CREATE FUNCTION next_id() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
	now_ms bigint := floor(extract(epoch FROM clock_timestamp()) * 1000);
BEGIN
	RETURN ((now_ms - 1314220021721) << 23) | (5 << 10) | (nextval('instagram_seq') % 1024);
END
$$`,
				`CREATE TABLE instagram (id BIGINT PRIMARY KEY DEFAULT next_id(), note VARCHAR(8) NOT NULL)`,
			}, "generate_series(1, 1000)", "postgres"},
		{"mariadb", func(b *testing.B) *sql.DB { db, _ := mysqltest.Open(b); return db },
			"BIGINT AUTO_INCREMENT", []string{
				`CREATE SEQUENCE instagram_seq`,
				`CREATE TABLE instagram (id BIGINT PRIMARY KEY DEFAULT 0, note VARCHAR(8) NOT NULL)`,
				`CREATE TRIGGER instagram_id BEFORE INSERT ON instagram FOR EACH ROW
SET NEW.id = (((UNIX_TIMESTAMP(NOW(6)) * 1000) DIV 1 - 1314220021721) << 23) | (5 << 10) | ((NEXT VALUE FOR instagram_seq) % 1024)`,
			}, "seq_1_to_1000", "mysql"},
	} {
		b.Run(db.name, func(b *testing.B) {
			raw := db.open(b)
			ctx := context.Background()
			for _, q := range append([]string{
				`CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE events (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE shardseg (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE revsf (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
				`CREATE TABLE serial (id ` + db.serial + ` PRIMARY KEY, note VARCHAR(8) NOT NULL)`,
			}, db.anchor...) {
				if _, err := raw.ExecContext(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			cfg := dbdefaultConfigOf(keyset.Snowflake, db.holder)
			cfg.Tables["events"] = cfg.Tables["orders"]
			cfg.Tables["orders"] = dbdefaultConfig().Tables["orders"]
			// The spread shapes: a segment table's shard and a snowflake
			// table's reverse.
			shard := cfg.Tables["orders"]
			shard.Shape = keyset.Shape{Spread: "shard", Bits: 6}
			cfg.Tables["shardseg"] = shard
			rev := cfg.Tables["events"]
			rev.Shape = keyset.Shape{Spread: "reverse"}
			cfg.Tables["revsf"] = rev
			cfg.Holder.DatabaseWorkers = 2 // events and revsf
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 1 << 30}); err != nil {
				b.Fatal(err)
			}
			raw.SetMaxOpenConns(8)
			raw.SetMaxIdleConns(8)
			sides := []struct{ name, table string }{
				{"serial", "serial"}, {"instagram", "instagram"}, {"segment", "orders"}, {"snowflake", "events"},
				{"segment-shard", "shardseg"}, {"snowflake-reverse", "revsf"},
			}
			for _, form := range []struct {
				name   string
				values string
				rows   int
				conns  int
			}{
				{"rows=1/conns=1", "VALUES ('x')", 1, 1},
				{"rows=1/conns=8", "VALUES ('x')", 1, 8},
				{"rows=1000/conns=8", "SELECT 'x' FROM " + db.rows, 1000, 8},
				{"rows=100000/conns=1", "", 100_000, 1},
			} {
				for _, side := range sides {
					b.Run(form.name+"/"+side.name, func(b *testing.B) {
						if side.name == "instagram" && form.rows > 1 {
							// Past 1,024 keys in a millisecond it repeats
							// keys (the primary key refuses them).
							b.Skip("Instagram's IDs repeat past 1,024 keys a millisecond")
						}
						b.ReportAllocs()
						var before int64
						if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+side.table).Scan(&before); err != nil {
							b.Fatal(err)
						}
						one := func() error {
							if form.rows == 100_000 {
								return bulk100k(ctx, raw, db.name, side.table)
							}
							_, err := raw.ExecContext(ctx, "INSERT INTO "+side.table+" (note) "+form.values)
							return err
						}
						if form.conns == 1 {
							for b.Loop() {
								if err := one(); err != nil {
									b.Fatal(err)
								}
							}
						} else {
							b.SetParallelism(form.conns) // 8 x GOMAXPROCS goroutines on 8 connections
							b.RunParallel(func(pb *testing.PB) {
								for pb.Next() {
									if err := one(); err != nil {
										b.Error(err)
										return
									}
								}
							})
						}
						b.ReportMetric(float64(b.N*form.rows)/b.Elapsed().Seconds(), "ids/s")
						b.StopTimer()
						// The side wrote what it claims, no key twice.
						var rows, distinct int64
						if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT id) FROM `+side.table).Scan(&rows, &distinct); err != nil {
							b.Fatal(err)
						}
						if rows-before < int64(b.N*form.rows) || rows != distinct {
							b.Fatalf("%s: %d rows more, %d keys twice; want %d more, none twice", side.table, rows-before, rows-distinct, b.N*form.rows)
						}
					})
				}
			}
		})
	}
}

// bulk100k writes 100,000 rows into table in one statement: COPY on
// PostgreSQL (lib/pq's CopyIn), INSERT ... SELECT on MariaDB.
func bulk100k(ctx context.Context, db *sql.DB, name, table string) error {
	if name != "postgres" {
		_, err := db.ExecContext(ctx, "INSERT INTO "+table+" (note) SELECT 'x' FROM seq_1_to_100000")
		return err
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, pq.CopyIn(strings.TrimSpace(table), "note"))
	if err != nil {
		return err
	}
	for range 100_000 {
		if _, err := stmt.ExecContext(ctx, "x"); err != nil {
			return err
		}
	}
	if _, err := stmt.ExecContext(ctx); err != nil {
		return err
	}
	if err := stmt.Close(); err != nil {
		return err
	}
	return tx.Commit()
}
