package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/server"
)

// syncBuffer is a log destination tests read back.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestClientErrorsSayWhy: a request the client got wrong (a missing or
// bad ?shard, a key that does not exist) answers 4xx, with the cause and
// the fix in the body's message (after Leaf's Result, where Leaf has one)
// and in X-Idsql-Error, and the server logs it.
func TestClientErrorsSayWhy(t *testing.T) {
	migrated, err := keyset.Parse("test", []byte(`namespace: test
tables:
  orders: {strategy: segment, shard: {column: user_id, bits: 2}}
  users: {strategy: segment}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// accounts was added to the configuration after migrate ran.
	cfg, err := keyset.Parse("test", []byte(`namespace: test
tables:
  orders: {strategy: segment, shard: {column: user_id, bits: 2}}
  users: {strategy: segment}
  accounts: {strategy: segment}
  events: {strategy: snowflake}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	srv, _ := sqliteServer(t, migrated, cfg, server.Settings{Log: log.New(logs, "", 0),
		SnowflakeOff: "no snowflake table is configured: name one with --snowflake-table"})

	tests := []struct {
		path   string
		status int
		leaf   string // the start of the body's message, "" for none
		says   []string
	}{
		{"/api/segment/get/orders", 400, "", []string{`table orders is sharded: no shard given`, "/api/segment/get/orders?shard=N, N from 0 to 3", "user_id"}},
		{"/api/segment/get/orders?shard=4", 400, "", []string{`shard "4" is not a shard`, "N from 0 to 3"}},
		{"/api/segment/get/orders/3?shard=x", 400, "", []string{`shard "x" is not a shard`}},
		{"/api/segment/get/accounts", 404, "Result{id=-2, status=EXCEPTION}: ", []string{`unknown segment key "accounts"`,
			"table accounts is configured but its key has no row in idsql_alloc yet", "run `idsql migrate --config idsql.yaml --dsn ...` (or idsql.Migrate)"}},
		{"/api/segment/get/events", 404, "Result{id=-2, status=EXCEPTION}: ", []string{`unknown segment key "events"`,
			"table events is a snowflake table: its keys come from /api/snowflake/get/events"}},
		{"/api/segment/get/nope", 404, "Result{id=-2, status=EXCEPTION}: ", []string{`unknown segment key "nope"`, "run `idsql migrate`"}},
		{"/api/segment/get/users/0", 400, "", []string{`invalid count "0"`, "from 1 to"}},
		{"/api/snowflake/get/coupon", 404, "", []string{`snowflake key "coupon" names no snowflake table`, "--snowflake-table"}},
	}
	for _, tt := range tests {
		code, body, hdr := get(t, srv, "GET", tt.path)
		var a struct{ Message string }
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			t.Fatalf("%s: body %q: %v", tt.path, body, err)
		}
		if code != tt.status || !strings.HasPrefix(a.Message, tt.leaf) {
			t.Errorf("%s: %d %q; want %d, message starting %q", tt.path, code, a.Message, tt.status, tt.leaf)
		}
		for _, s := range tt.says {
			if !strings.Contains(a.Message, s) || !strings.Contains(hdr.Get("X-Idsql-Error"), s) {
				t.Errorf("%s: message %q, X-Idsql-Error %q; want both to say %q", tt.path, a.Message, hdr.Get("X-Idsql-Error"), s)
			}
		}
		// The log is rate-limited to a line a second: the first request's
		// cause is there.
		if tt.path == tests[0].path && !strings.Contains(logs.String(), tt.says[0]) {
			t.Errorf("%s: the server log lacks %q:\n%s", tt.path, tt.says[0], logs)
		}
	}
	// Answers holding IDs are never cached: a cache would hand the same
	// IDs to a second client.
	for _, path := range []string{"/api/segment/get/users", "/api/segment/get/users/3", "/api/snowflake/get/events", "/api/snowflake/get/events/3"} {
		if code, _, hdr := get(t, srv, "GET", path); code != http.StatusOK || hdr.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %d, Cache-Control %q; want 200, no-store", path, code, hdr.Get("Cache-Control"))
		}
	}
	if code, _, _ := get(t, srv, "GET", "/api/segment/get/orders?shard=3"); code != http.StatusOK {
		t.Errorf("shard 3: %d", code)
	}
}

// The monitor page shows no made-up figures for what was not used yet: no
// epoch as the high water of a snowflake table that issued no ID, no
// "step 0 (stored 0)" for a segment key not loaded.
func TestMonitorBeforeFirstUse(t *testing.T) {
	ctx := context.Background()
	all, err := keyset.Parse("test", []byte("namespace: test\ntables:\n  leaf_snowflake: {strategy: snowflake}\n  users: {strategy: segment}\n  later: {strategy: segment}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := keyset.Parse("test", []byte("namespace: test\ntables:\n  leaf_snowflake: {strategy: snowflake}\n  users: {strategy: segment}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, keys := sqliteServer(t, all, cfg, server.Settings{})
	if err := srv.Warm(ctx); err != nil { // starts leaf_snowflake, loads users; later stays unloaded
		t.Fatal(err)
	}
	_, page, _ := get(t, srv, "GET", "/")
	epoch := keys.Config().Layout.Epoch
	if l, err := keys.Config().SnowflakeLayout(); err == nil {
		epoch = l.Epoch
	}
	for _, bad := range []string{epoch.UTC().Format("2006-01-02 15:04"), "step 0 (stored 0)"} {
		if strings.Contains(page, bad) {
			t.Errorf("monitor page shows %q for what was not used yet", bad)
		}
	}
	if !strings.Contains(page, "step: not loaded yet") || !strings.Contains(page, `id="seg-later"`) {
		t.Errorf("monitor page does not show key later as not loaded yet")
	}
	row := func(page string) string {
		_, after, _ := strings.Cut(page, `id="snow-leaf_snowflake"`)
		r, _, _ := strings.Cut(after, "</tr>")
		return r
	}
	if r := row(page); !strings.Contains(r, "<td>—</td>") {
		t.Errorf("leaf_snowflake's row before its first ID shows a high water: %s", r)
	}
	mustGet(t, srv, "/api/snowflake/get/x")
	_, page, _ = get(t, srv, "GET", "/")
	if r := row(page); !regexp.MustCompile(`<td>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}</td>`).MatchString(r) || strings.Contains(r, epoch.UTC().Format("2006-01-02 15:04")) {
		t.Errorf("leaf_snowflake's row after an ID lacks its high water: %s", r)
	}
}
