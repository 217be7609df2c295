package idsql_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// Migrate and Lookup find the stores of the database they are given, on
// PostgreSQL and MariaDB, whether it is the *sql.DB that idsql.Open
// returned (db.DB.DB) or the driver's own.
func TestStoresFollowTheDatabase(t *testing.T) {
	type database struct {
		name   string
		driver string
		open   func(t testing.TB) (*sql.DB, string)
		schema []string
	}
	databases := []database{
		{name: "postgres", driver: "postgres", open: pgtest.Open, schema: []string{
			`CREATE TABLE orders (id bigint PRIMARY KEY, user_id int NOT NULL)`,
			`CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL)`,
		}},
		{name: "MySQL", driver: "mysql", open: func(t testing.TB) (*sql.DB, string) {
			dsn := mysqltest.Database(t)
			raw, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return raw, dsn
		}, schema: []string{
			`CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id INT NOT NULL)`,
			`CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR(20) NOT NULL)`,
		}},
	}
	for _, d := range databases {
		for _, handle := range []string{"wrapped", "raw"} {
			t.Run(d.name+"/"+handle, func(t *testing.T) {
				ctx := context.Background()
				raw, dsn := d.open(t)
				for _, q := range d.schema {
					if _, err := raw.ExecContext(ctx, q); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
				}
				cfg := &keyset.Config{Namespace: "shop", Tables: map[string]keyset.TableConfig{
					"orders": {Strategy: keyset.Snowflake},
					"users":  {Strategy: keyset.Segment, Step: 10},
				}}
				// The test MariaDB does not flush every commit.
				cfg.Holder.AcceptLazyCommits = true
				db, err := idsql.Open(d.driver, dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3)}})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				given := raw
				if handle == "wrapped" {
					given = db.DB.DB
				}
				if err := idsql.Migrate(ctx, given, cfg); err != nil {
					t.Fatalf("Migrate: %v", err)
				}
				for table, q := range map[string]string{
					"orders": "INSERT INTO orders (user_id) VALUES (1)",
					"users":  "INSERT INTO users (name) VALUES ('a')",
				} {
					res, err := db.ExecContext(ctx, q)
					if err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					id, err := res.LastInsertId()
					if err != nil {
						t.Fatal(err)
					}
					got, err := idsql.Lookup(ctx, given, cfg, id)
					if err != nil {
						t.Fatalf("Lookup(%d) from %s: %v", id, table, err)
					}
					if len(got) != 1 || got[0].Table != table || got[0].Strategy != cfg.Tables[table].Strategy {
						t.Fatalf("Lookup(%d) = %+v, want one origin: table %s", id, got, table)
					}
				}
			})
		}
	}
}

// On SQLite the segment store is a file of its own: Migrate and Lookup
// given the wrapped handle use the store it was opened with, and Lookup
// given the store's own handle (as the idsql command does) finds the same.
func TestStoresFollowTheDatabaseSQLite(t *testing.T) {
	ctx := context.Background()
	store, dir := sqliteStore(t)
	cfg := &keyset.Config{Namespace: "lite", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment, Step: 10}}}
	db, err := idsql.Open("sqlite", sqlitestore.DSN(filepath.Join(dir, "app.db")), cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, "CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name TEXT)"); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO users (name) VALUES ('a')")
	if err != nil {
		t.Fatal(err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	for name, given := range map[string]*sql.DB{"wrapped": db.DB.DB, "store": store.DB()} {
		got, err := idsql.Lookup(ctx, given, cfg, id)
		if err != nil || len(got) != 1 || got[0].Table != "users" || !got[0].Range.Contains(id) {
			t.Errorf("Lookup(%d) given the %s handle = %+v, %v; want the users range", id, name, got, err)
		}
	}
}
