package idsql_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/etcdtest"
	"github.com/idsql/idsql/internal/pgtest"
)

// holder: {kind: etcd, endpoints: [...], mode: recycle} works from the
// wrapper: the insert gets a key under an etcd lease, recorded as
// etcd/recycle, so Lookup names its table.
func TestEtcdHolderKind(t *testing.T) {
	ctx := context.Background()
	endpoints, ns := etcdtest.Namespace(t)
	y := "namespace: " + ns + "\nholder: {kind: etcd, endpoints: [" + strings.Join(endpoints, ", ") + "], mode: recycle, instance: test-1}\n" +
		"tables: {orders: {strategy: snowflake}}\n"
	cfg, err := keyset.Parse("idsql.yaml", []byte(y), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	raw, dsn := pgtest.Open(t)
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id BIGINT PRIMARY KEY, note TEXT)"); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var id int64
	if err := db.QueryRowContext(ctx, "INSERT INTO orders (note) VALUES ('e') RETURNING id").Scan(&id); err != nil {
		t.Fatalf("INSERT with holder.kind etcd: %v", err)
	}
	got, err := idsql.Lookup(ctx, raw, cfg, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Table != "orders" || got[0].Lease.Kind != "etcd/recycle" || got[0].Instance() != "test-1" {
		t.Fatalf("Lookup(%d) = %+v, want orders under an etcd/recycle lease of test-1", id, got)
	}
}
