// Package nostoretest_test runs idsql on MySQL in a program that links
// no MySQL segment store, as a program with only snowflake tables may.
package nostoretest_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	_ "github.com/idsql/idsql/holder/workertable" // holder kind mysql
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/kinds"
	"github.com/idsql/idsql/internal/mysqltest"
)

// TestSnowflakeOnlyMigrateWithoutSegmentStore: Migrate, the wrapper and
// Lookup work on MySQL with only snowflake tables when the MySQL segment
// store (idsql/segment/mysqlstore) is not linked, which such a program
// has no reason to import.
func TestSnowflakeOnlyMigrateWithoutSegmentStore(t *testing.T) {
	if _, err := kinds.LookupStore("mysql"); err == nil {
		t.Fatal("the MySQL segment store is linked into this test: it cannot show what it claims")
	}
	dsn := mysqltest.Database(t)
	cfg, err := keyset.Parse("idsql.yaml", []byte("namespace: shop\nholder: {kind: mysql, mode: sticky, instance: app, accept_lazy_commits: true}\n"+
		"tables:\n  orders: {strategy: snowflake}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)"); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.ExecContext(ctx, "INSERT INTO orders (n) VALUES (1)")
	if err != nil {
		t.Fatalf("insert: %v", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		t.Fatal(err)
	}
	origins, err := idsql.Lookup(ctx, raw, cfg, id)
	if err != nil || len(origins) != 1 || origins[0].Table != "orders" {
		t.Errorf("Lookup(%d) = %+v, %v; want table orders", id, origins, err)
	}
}
