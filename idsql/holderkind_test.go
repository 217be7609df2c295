package idsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// kindConfig is a snowflake table whose worker IDs the database holder of
// kind hands out.
func kindConfig(kind keyset.HolderKind) *keyset.Config {
	cfg := &keyset.Config{Namespace: "kind", Tables: map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}}}
	cfg.Holder.Kind, cfg.Holder.Instance, cfg.Holder.AcceptLazyCommits = kind, "test-1", true
	return cfg
}

// holder.kind: mysql takes worker IDs from MySQL's worker table and
// records them as mysql/<mode>; kind postgres on MariaDB, and kind mysql on
// PostgreSQL, are refused with an error naming the kind and the database.
func TestMySQLHolderKind(t *testing.T) {
	ctx := context.Background()
	raw, dsn := mysqltest.Open(t)
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	cfg := kindConfig("mysql")
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: registry.New(raw, registry.Settings{})}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{})
	if err != nil {
		t.Fatalf("holder.kind mysql on MariaDB: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (note) VALUES ('k')"); err != nil {
		t.Fatalf("INSERT with holder.kind mysql: %v", err)
	}
	var kind string
	if err := raw.QueryRowContext(ctx, "SELECT holder_kind FROM idsql_workers WHERE namespace = 'kind' AND table_name = 'orders'").Scan(&kind); err != nil || kind != "mysql/sticky" {
		t.Errorf("worker table records kind %q, %v; want mysql/sticky", kind, err)
	}
	testKindRefused(t, "mysql", dsn, "postgres", "mysql")
}

func TestHolderKindMismatchPostgreSQL(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	if err := registry.New(raw, registry.Settings{}).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	testKindRefused(t, "postgres", dsn, "mysql", "postgres")
}

// testKindRefused opens the database with a holder kind that names
// another database and wants the error naming both.
func testKindRefused(t *testing.T, driverName, dsn string, kind keyset.HolderKind, database string) {
	t.Helper()
	db, err := idsql.Open(driverName, dsn, kindConfig(kind), idsql.Options{})
	if err == nil {
		db.Close()
		t.Fatalf("holder.kind %s on %s: opened", kind, database)
	}
	var fe *keyset.FieldError
	if !errors.As(err, &fe) || fe.Field != "holder.kind" || !strings.Contains(err.Error(), string(kind)) || !strings.Contains(err.Error(), "database is "+database) {
		t.Errorf("holder.kind %s on %s: err = %v; want a holder.kind error naming both", kind, database, err)
	}
}
