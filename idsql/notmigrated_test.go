package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

func TestNotMigratedPostgres(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	stores, err := idsql.StoresFor(raw, keyset.HolderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	testNotMigrated(t, "postgres", dsn, raw, stores, "$1")
}

func TestNotMigratedMySQL(t *testing.T) {
	dsn := mysqltest.Database(t)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	testNotMigrated(t, "mysql", dsn, raw, idsql.Stores{Segments: mysqlstore.New(raw)}, "?")
}

// testNotMigrated: before Migrate, a table added after it, and a key
// column the table lacks each give an error that names the cause and the
// fix (idsql migrate, tables.T.column).
func testNotMigrated(t *testing.T, driver, dsn string, raw *sql.DB, stores idsql.Stores, ph string) {
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE users (id BIGINT PRIMARY KEY, name VARCHAR(20))", "CREATE TABLE accounts (id BIGINT PRIMARY KEY)",
		"CREATE TABLE nokey (ident BIGINT PRIMARY KEY)"} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg := &keyset.Config{Namespace: "nm", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment}}}
	open := func(cfg *keyset.Config) *idsql.DB {
		db, err := idsql.Open(driver, dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: stores.Segments}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	// Before Migrate: idsql_alloc does not exist.
	_, err := open(cfg).ExecContext(ctx, "INSERT INTO users (name) VALUES ("+ph+")", "ada")
	if !errors.Is(err, keyset.ErrNotMigrated) {
		t.Fatalf("insert before migrate: %v; want ErrNotMigrated", err)
	}
	for _, want := range []string{"table users", "idsql's tables are missing in the database", "run `idsql migrate --config idsql.yaml --dsn ...` (or call idsql.Migrate) once"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("insert before migrate: %v; want it to say %q", err, want)
		}
	}
	if err := idsql.MigrateIn(ctx, raw, cfg, stores); err != nil {
		t.Fatal(err)
	}
	// A table added to the configuration after Migrate ran.
	later := &keyset.Config{Namespace: "nm", Tables: map[string]keyset.TableConfig{
		"users": {Strategy: keyset.Segment}, "accounts": {Strategy: keyset.Segment}}}
	_, err = open(later).ExecContext(ctx, "INSERT INTO accounts (id) VALUES (0)")
	if !errors.Is(err, keyset.ErrNotMigrated) {
		t.Fatalf("insert into a table added later: %v; want ErrNotMigrated", err)
	}
	for _, want := range []string{`table accounts: its segment key "accounts" has no row`, "run `idsql migrate --config idsql.yaml --dsn ...`", "after adding the table to the configuration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("insert into a table added later: %v; want it to say %q", err, want)
		}
	}
	// Migrate of a table without its key column (id by default).
	nokey := &keyset.Config{Namespace: "nm", Tables: map[string]keyset.TableConfig{"nokey": {Strategy: keyset.Segment}}}
	err = idsql.MigrateIn(ctx, raw, nokey, stores)
	for _, want := range []string{"table nokey", "has no column id", "set tables.nokey.column in the configuration"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("migrate of a table without its key column: %v; want it to say %q", err, want)
		}
	}
}
