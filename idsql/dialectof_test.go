package idsql_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/dialect"
)

// pools are the raw *sql.DB of a database and the one idsql.Open made on
// it, which the worker registry and Migrate must both recognise.
func pools(raw *sql.DB, wrapped *idsql.DB) []struct {
	name string
	db   *sql.DB
} {
	return []struct {
		name string
		db   *sql.DB
	}{{"raw", raw}, {"wrapped", wrapped.DB.DB}}
}

// Migrate, Lookup and the worker registry find PostgreSQL from the *sql.DB
// they are given, raw or the one idsql.Open returned.
func TestMigrateAndLookupFindDialectPostgreSQL(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	cfg := db.Keys().Config()
	var orderID int64
	if err := db.QueryRowContext(ctx, "INSERT INTO orders (user_id) VALUES (1) RETURNING id").Scan(&orderID); err != nil {
		t.Fatal(err)
	}
	for _, p := range pools(raw, db) {
		if d, err := dialect.Of(p.db); err != nil || d != dialect.PostgreSQL {
			t.Errorf("%s: dialect.Of = %v, %v; want postgres", p.name, d, err)
		}
		if d, err := registry.New(p.db, registry.Settings{}).Dialect(); err != nil || d != dialect.PostgreSQL {
			t.Errorf("%s: registry dialect = %v, %v; want postgres", p.name, d, err)
		}
		if err := idsql.MigrateIn(ctx, p.db, cfg, idsql.Stores{Workers: registry.New(p.db, registry.Settings{}), Segments: segment.NewPostgresStore(p.db)}); err != nil {
			t.Errorf("%s: Migrate: %v", p.name, err)
		}
		got, err := idsql.Lookup(ctx, p.db, cfg, orderID)
		if err != nil || len(got) != 1 || got[0].Table != "orders" {
			t.Errorf("%s: Lookup(order %d) = %+v, %v; want orders", p.name, orderID, got, err)
		}
	}
}

// The same on MariaDB: the registry and Migrate find MySQL from the raw
// and the wrapped pool, and a lease recorded through either is found.
func TestMySQLMigrateAndLookupFindDialect(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
	ctx := context.Background()
	res, err := m.db.ExecContext(ctx, "INSERT INTO orders (user_id, note) VALUES (?, ?)", 1, "detect")
	if err != nil {
		t.Fatal(err)
	}
	orderID, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools(m.raw, m.db) {
		if d, err := dialect.Of(p.db); err != nil || d != dialect.MySQL {
			t.Errorf("%s: dialect.Of = %v, %v; want mysql", p.name, d, err)
		}
		reg := registry.New(p.db, registry.Settings{AcceptLazyCommits: true})
		if d, err := reg.Dialect(); err != nil || d != dialect.MySQL {
			t.Errorf("%s: registry dialect = %v, %v; want mysql", p.name, d, err)
		}
		stores := idsql.Stores{Workers: reg, Segments: mysqlstore.New(p.db)}
		if err := idsql.MigrateIn(ctx, p.db, m.cfg, stores); err != nil {
			t.Errorf("%s: Migrate: %v", p.name, err)
		}
		got, err := idsql.LookupIn(ctx, m.cfg, stores, orderID)
		if err != nil || len(got) != 1 || got[0].Table != "orders" || got[0].Lease.Kind == "" {
			t.Errorf("%s: LookupIn(order %d) = %+v, %v; want orders", p.name, orderID, got, err)
		}
	}
}
