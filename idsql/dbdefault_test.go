package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

// SQLite has no sequences: MigrateWith refuses its database-side defaults
// after migrating as Migrate does, and DBDefaultsSQL refuses its dialect.
// (The defaults themselves are tested with psql and the mariadb client in
// package integration, TestDBDefault*.)
func TestDBDefaultsSQLite(t *testing.T) {
	ctx := context.Background()
	store, dir := sqliteStore(t)
	raw, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	if _, err := raw.ExecContext(ctx, `CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)`); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "shop", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment}}}
	err = idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{Stores: &idsql.Stores{Segments: store}, DBDefaults: true})
	if !errors.Is(err, idsql.ErrNoDBDefault) || !strings.Contains(err.Error(), "users") {
		t.Fatalf("MigrateWith on SQLite: %v, want ErrNoDBDefault naming users", err)
	}
	if keys, err := store.Keys(ctx); err != nil || len(keys) != 1 {
		t.Fatalf("segment keys after MigrateWith: %v, %v; want users's, as Migrate makes", keys, err)
	}
	if _, err := idsql.DBDefaultsSQL("sqlite", cfg, 0); !errors.Is(err, idsql.ErrNoDBDefault) {
		t.Fatalf("DBDefaultsSQL(sqlite): %v, want ErrNoDBDefault", err)
	}
	if _, err := idsql.DBDefaultsSQL("oracle", cfg, 0); err == nil {
		t.Fatal("DBDefaultsSQL(oracle): no error")
	}
}
