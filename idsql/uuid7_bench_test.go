package idsql_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/google/uuid"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/benchpair"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// BenchmarkUUID7InsertPaired is one 1-row INSERT into a table keyed by a
// UUID, per side, on one connection each, sides rotated op by op
// (benchpair): idsql, the INSERT without its key through idsql (a uuid7
// table); client, the key a google/uuid NewV7 the application made;
// default, the database's own random UUID (PostgreSQL's DEFAULT
// gen_random_uuid(), MariaDB's DEFAULT UUID(), a version 1 UUID there).
// After the run every side's table holds one row per op, no key twice.
//
//	go test -run '^$' -bench 'UUID7InsertPaired' -benchtime 3000x -count 3 ./idsql/
func BenchmarkUUID7InsertPaired(b *testing.B) {
	for _, c := range []struct {
		name, driver, typ, def string
		open                   func(b *testing.B) (*sql.DB, string)
	}{
		{"postgres", "postgres", "uuid", "gen_random_uuid()", func(b *testing.B) (*sql.DB, string) { return pgtest.Open(b) }},
		{"mariadb", "mysql", "UUID", "UUID()", func(b *testing.B) (*sql.DB, string) {
			dsn := mysqltest.Database(b)
			raw, err := sql.Open("mysql", dsn)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { raw.Close() })
			return raw, dsn
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			raw, dsn := c.open(b)
			for _, q := range []string{
				"CREATE TABLE u_idsql (id " + c.typ + " PRIMARY KEY, note VARCHAR(8) NOT NULL)",
				"CREATE TABLE u_client (id " + c.typ + " PRIMARY KEY, note VARCHAR(8) NOT NULL)",
				"CREATE TABLE u_default (id " + c.typ + " PRIMARY KEY DEFAULT " + c.def + ", note VARCHAR(8) NOT NULL)",
			} {
				if _, err := raw.ExecContext(ctx, q); err != nil {
					b.Fatalf("%s: %v", q, err)
				}
			}
			cfg := &keyset.Config{Namespace: "ubench", Tables: map[string]keyset.TableConfig{"u_idsql": {Strategy: keyset.UUID7}}}
			ko := keyset.KeysOptions{Holder: tableWorkers(cfg, 1)}
			if c.driver == "mysql" {
				ko.Registry = registry.New(raw, registry.Settings{AcceptLazyCommits: true})
				if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: ko.Registry, Segments: mysqlstore.New(raw)}); err != nil {
					b.Fatal(err)
				}
			} else if err := idsql.Migrate(ctx, raw, cfg); err != nil {
				b.Fatal(err)
			}
			db, err := idsql.Open(c.driver, dsn, cfg, idsql.Options{KeysOptions: ko})
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { db.Close() })
			db.SetMaxOpenConns(1)
			raw.SetMaxOpenConns(1)
			ph := func(n int) string {
				if c.driver == "postgres" {
					return "$" + string(rune('0'+n))
				}
				return "?"
			}
			benchpair.Run(b, []string{"idsql", "client", "default"}, []func(int) error{
				func(int) error {
					_, err := db.ExecContext(ctx, "INSERT INTO u_idsql (note) VALUES ("+ph(1)+")", "note")
					return err
				},
				func(int) error {
					id, err := uuid.NewV7()
					if err == nil {
						_, err = raw.ExecContext(ctx, "INSERT INTO u_client (id, note) VALUES ("+ph(1)+", "+ph(2)+")", id.String(), "note")
					}
					return err
				},
				func(int) error {
					_, err := raw.ExecContext(ctx, "INSERT INTO u_default (note) VALUES ("+ph(1)+")", "note")
					return err
				},
			})
			b.StopTimer()
			wrote(b, raw, 1, "u_idsql", "u_client", "u_default")
		})
	}
}
