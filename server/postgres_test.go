package server_test

import (
	"context"
	"io"
	"log"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/server"
)

// TestPostgres serves both endpoints on PostgreSQL with the postgres
// holder, traces the IDs back to their tables through idsql_workers and
// idsql_alloc_log, checks the monitor page lists the lease, and that
// closing the server releases it.
func TestPostgres(t *testing.T) {
	raw, _ := pgtest.Open(t)
	ctx := context.Background()
	cfg, err := idsql.Parse("pg", []byte(`namespace: pgserver
holder: {kind: postgres, instance: test-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 500}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stores := idsql.PostgresStores(raw)
	if err := idsql.Migrate(ctx, raw, cfg, stores); err != nil {
		t.Fatal(err)
	}
	keys, err := idsql.NewKeys(cfg, idsql.KeysOptions{DB: raw, Registry: stores.Workers, SegmentStore: stores.Segments})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := segment.New(ctx, stores.Segments, segment.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Settings{Keys: keys, Segments: gen, Registry: stores.Workers, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	t.Cleanup(func() {
		if !closed {
			srv.Close()
		}
	})
	if err := srv.Warm(ctx); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{
		"/api/segment/get/users":         "users",
		"/api/segment/get/users/1200":    "users", // more than one range
		"/api/snowflake/get/orders":      "orders",
		"/api/snowflake/get/orders/5000": "orders", // more than one millisecond's worth
	}
	for path, table := range want {
		code, body, _ := get(t, srv, "GET", path)
		if code != 200 {
			t.Fatalf("%s: %d %q", path, code, body)
		}
		ids := parseIDs(t, body)
		for _, id := range []int64{ids[0], ids[len(ids)-1]} {
			origins, err := idsql.LookupIn(ctx, cfg, stores, id)
			if err != nil {
				t.Fatalf("%s: lookup %d: %v", path, id, err)
			}
			found := false
			for _, o := range origins {
				found = found || o.Table == table
			}
			if !found {
				t.Errorf("%s: ID %d traced to %+v, want table %s", path, id, origins, table)
			}
		}
	}

	code, page, _ := get(t, srv, "GET", "/")
	if code != 200 {
		t.Fatalf("monitor: %d", code)
	}
	leases, err := stores.Workers.Leases(ctx, cfg.Namespace, true)
	if err != nil || len(leases) != 1 {
		t.Fatalf("live leases %v, %v; want one", leases, err)
	}
	row := `<tr class="lease"><td class="num">` + strconv.FormatInt(leases[0].WorkerID, 10) + `</td><td>orders</td>`
	if !strings.Contains(page, row) {
		t.Errorf("monitor page lacks the lease row %q", row)
	}

	closed = true
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if leases, err := stores.Workers.Leases(ctx, cfg.Namespace, true); err != nil || len(leases) != 0 {
		t.Errorf("after Close: live leases %v, %v; want none", leases, err)
	}
}
