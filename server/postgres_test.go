package server_test

import (
	"context"
	"database/sql"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
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
	cfg, err := keyset.Parse("pg", []byte(`namespace: pgserver
holder: {kind: postgres, instance: test-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 500}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stores, err := idsql.StoresFor(raw, cfg.Holder)
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.MigrateIn(ctx, raw, cfg, stores); err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.WithSnowflakeTable(cfg, ""); err != nil {
		t.Fatal(err)
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, Registry: stores.Workers, SegmentStore: stores.Segments})
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
		"/api/snowflake/get/anything":    "leaf_snowflake",
		"/api/snowflake/get/coupon/100":  "leaf_snowflake",
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
	if err != nil || len(leases) != 2 {
		t.Fatalf("live leases %v, %v; want those of leaf_snowflake and orders", leases, err)
	}
	for _, l := range leases {
		row := `<tr class="lease"><td class="num">` + strconv.FormatInt(l.WorkerID, 10) + `</td><td>` + l.Table + `</td>`
		if !strings.Contains(page, row) {
			t.Errorf("monitor page lacks the lease row %q", row)
		}
	}

	closed = true
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if leases, err := stores.Workers.Leases(ctx, cfg.Namespace, true); err != nil || len(leases) != 0 {
		t.Errorf("after Close: live leases %v, %v; want none", leases, err)
	}
}

// TestPostgresDown stops a real PostgreSQL under a serving server: once the
// buffered IDs are gone, segment requests answer Leaf's "both segments not
// ready" (500, Result{id=-3}); when the database is back, they serve again.
func TestPostgresDown(t *testing.T) {
	pg := pgtest.StartServer(t)
	ctx := context.Background()
	raw, err := sql.Open("postgres", pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	cfg, err := keyset.Parse("pg", []byte(`namespace: pgdown
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 100}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	stores, err := idsql.StoresFor(raw, cfg.Holder)
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.MigrateIn(ctx, raw, cfg, stores); err != nil {
		t.Fatal(err)
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, SegmentStore: stores.Segments, Holder: holder.Fixed(1)})
	if err != nil {
		t.Fatal(err)
	}
	ts := server.NewTimedStore(stores.Segments)
	gen, err := segment.New(ctx, ts, segment.Settings{RetryMax: 100 * time.Millisecond, WaitTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Settings{Keys: keys, Segments: gen, Store: ts, SnowflakeTable: "orders", Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.Warm(ctx); err != nil {
		t.Fatal(err)
	}

	pg.Stop()
	code, body, hdr := 200, "", http.Header(nil)
	for range 100 {
		if code, body, hdr = get(t, srv, "GET", "/api/segment/get/users/50"); code != 200 {
			break
		}
	}
	if code != 500 {
		t.Fatalf("with PostgreSQL stopped: %d %q, want 500", code, body)
	}
	a := checkErrorBody(t, 500, "/api/segment/get/users/50", body, hdr)
	if !strings.HasPrefix(a.Message, "Result{id=-3, status=EXCEPTION}: ") || !strings.Contains(hdr.Get("X-Idsql-Error"), "segments not ready") {
		t.Errorf("database down: %q, X-Idsql-Error %q", body, hdr.Get("X-Idsql-Error"))
	}
	if code, body, _ := get(t, srv, "GET", "/api/segment/get/users"); code != 500 || !strings.Contains(body, "Result{id=-3,") {
		t.Errorf("single ID, database down: %d %q", code, body)
	}
	if _, m, _ := get(t, srv, "GET", "/metrics"); !strings.Contains(m, `idsql_segment_refill_seconds_count{result="error"} `) {
		t.Error("/metrics does not count the failed refills")
	}

	pg.Start()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body, _ := get(t, srv, "GET", "/api/segment/get/users")
		if code == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("PostgreSQL is back but users still answers %d %q", code, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
