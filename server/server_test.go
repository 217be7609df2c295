package server_test

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/server"
)

const testConfig = `namespace: test
layout: leaf
tables:
  orders: {strategy: snowflake}
  cached_orders: {strategy: snowflake, cached: true}
  users:  {strategy: segment, step: 100}
`

// recordingHolder is holder.Fixed that remembers its leases, so tests can
// see that shutdown released them.
type recordingHolder struct {
	mu     sync.Mutex
	next   int64
	leases []holder.Lease
}

func (h *recordingHolder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	l, err := holder.Fixed(h.next).Acquire(ctx, req)
	if err == nil {
		h.leases = append(h.leases, l)
	}
	return l, err
}

func (h *recordingHolder) released() (n, total int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, l := range h.leases {
		if l.Err() != nil {
			n++
		}
	}
	return n, len(h.leases)
}

type fixture struct {
	srv    *server.Server
	holder *recordingHolder
	cfg    *idsql.Config
}

// newFixture returns a warmed server on an SQLite segment store in a
// temporary directory; edit adjusts the settings.
func newFixture(t testing.TB, edit func(*server.Settings)) *fixture {
	t.Helper()
	ctx := context.Background()
	cfg, err := idsql.Parse("test", []byte(testConfig), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	store, err := sqlitestore.Open(ctx, t.TempDir()+"/ids.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	if err := idsql.Migrate(ctx, store.DB(), cfg, idsql.Stores{Segments: store}); err != nil {
		t.Fatal(err)
	}
	// A key that is no configured table, as Leaf's biz_tags are.
	if err := store.CreateKey(ctx, segment.KeySpec{Key: "leaf-segment-test", Step: 1000, Start: 5000}); err != nil {
		t.Fatal(err)
	}
	h := &recordingHolder{}
	keys, err := idsql.NewKeys(cfg, idsql.KeysOptions{DB: store.DB(), Holder: h, SegmentStore: store})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := segment.New(ctx, store, segment.Settings{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := server.Settings{Keys: keys, Segments: gen, MaxBatch: 1000, Log: log.New(io.Discard, "", 0)}
	if edit != nil {
		edit(&s)
	}
	srv, err := server.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if err := srv.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, holder: h, cfg: cfg}
}

// get runs one request through the handler.
func get(t *testing.T, h http.Handler, method, target string, hdr ...string) (int, string, http.Header) {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.String(), w.Result().Header
}

func parseIDs(t *testing.T, body string) []int64 {
	t.Helper()
	var ids []int64
	for _, line := range strings.Split(body, "\n") {
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil || id <= 0 {
			t.Fatalf("body line %q is not a positive ID (body %q)", line, body)
		}
		ids = append(ids, id)
	}
	return ids
}

func TestIDEndpoints(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		path string
		n    int
		min  int64 // every ID at least this
	}{
		{"/api/segment/get/users", 1, 1},
		{"/api/segment/get/users/7", 7, 1},
		{"/api/segment/get/users/250", 250, 1}, // more than a segment holds
		{"/api/segment/get/leaf-segment-test", 1, 5000},
		{"/api/segment/get/leaf-segment-test/3", 3, 5000},
		{"/api/snowflake/get/orders", 1, 1 << 22},
		{"/api/snowflake/get/orders/1000", 1000, 1 << 22},
		{"/api/snowflake/get/cached_orders", 1, 1 << 22},
		{"/api/snowflake/get/cached_orders/500", 500, 1 << 22},
	}
	seen := map[string]map[int64]bool{}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			for _, method := range []string{"GET", "POST"} {
				code, body, hdr := get(t, f.srv, method, tt.path)
				if code != 200 {
					t.Fatalf("%s %s: %d %q", method, tt.path, code, body)
				}
				if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type %q", ct)
				}
				if tt.n == 1 && strings.Contains(body, "\n") {
					t.Errorf("single ID answer %q has a newline; Leaf answers the bare number", body)
				}
				ids := parseIDs(t, body)
				if len(ids) != tt.n {
					t.Fatalf("%d IDs, want %d", len(ids), tt.n)
				}
				key := strings.Join(strings.Split(tt.path, "/")[:5], "/")
				if seen[key] == nil {
					seen[key] = map[int64]bool{}
				}
				for i, id := range ids {
					if id < tt.min {
						t.Errorf("ID %d below %d", id, tt.min)
					}
					if seen[key][id] {
						t.Fatalf("ID %d issued twice for %s", id, key)
					}
					seen[key][id] = true
					if strings.Contains(tt.path, "snowflake") && i > 0 && id <= ids[i-1] {
						t.Errorf("snowflake batch not increasing at %d: %d after %d", i, id, ids[i-1])
					}
				}
			}
		})
	}
}

func TestDecode(t *testing.T) {
	f := newFixture(t, nil)
	// Twitter's documented example decodes the same way in Leaf.
	code, body, hdr := get(t, f.srv, "GET", "/decodeSnowflakeId?snowflakeId=1288834974657")
	if code != 200 {
		t.Fatalf("%d %q", code, body)
	}
	if ct := hdr.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	_, idText, _ := get(t, f.srv, "GET", "/api/snowflake/get/orders")
	code, body, _ = get(t, f.srv, "GET", "/decodeSnowflakeId?snowflakeId="+idText)
	if code != 200 {
		t.Fatalf("%d %q", code, body)
	}
	// Warm starts the snowflake tables in name order: cached_orders got
	// worker 1 from the recording holder, orders worker 2.
	for _, want := range []string{`"workerId":"2"`, `"sequenceId":"`, `"timestamp":"17`, `"layout":"leaf"`} {
		if !strings.Contains(body, want) {
			t.Errorf("decode answer %s lacks %s", body, want)
		}
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, nil)
	long := strings.Repeat("k", server.MaxKeyLen+1)
	tests := []struct {
		method, path string
		code         int
		says         string
	}{
		{"GET", "/api/segment/get/", 400, "invalid key: empty"},
		{"GET", "/api/segment/get/" + long, 400, "longer than 128"},
		{"GET", "/api/segment/get/users%27%3B%20DROP%20TABLE%20users", 400, "only letters, digits"},
		{"GET", "/api/snowflake/get/ord%C3%A9rs", 400, "only letters, digits"},
		{"GET", "/api/segment/get/nope", 404, `unknown segment key "nope"`},
		{"GET", "/api/snowflake/get/nope", 404, `unknown snowflake key "nope" (snowflake tables: cached_orders, orders)`},
		{"GET", "/api/snowflake/get/users", 404, `unknown snowflake key "users"`},
		{"GET", "/api/segment/get/users/0", 400, "invalid count \"0\""},
		{"GET", "/api/segment/get/users/-1", 400, "invalid count"},
		{"GET", "/api/segment/get/users/abc", 400, "invalid count"},
		{"GET", "/api/segment/get/users/", 400, "invalid count"},
		{"GET", "/api/segment/get/users/1001", 400, "from 1 to 1000"},
		{"GET", "/api/snowflake/get/orders/99999999999", 400, "invalid count"},
		{"GET", "/api/segment/get/users/1/2", 400, "invalid count"},
		{"PUT", "/api/segment/get/users", 405, "method not allowed"},
		{"DELETE", "/api/snowflake/get/orders", 405, "method not allowed"},
		{"POST", "/metrics", 405, "method not allowed"},
		{"GET", "/nope", 404, "no such endpoint"},
		{"GET", "/api/segment/users", 404, "no such endpoint"},
		{"GET", "/decodeSnowflakeId", 400, "missing query parameter snowflakeId"},
		{"GET", "/decodeSnowflakeId?snowflakeId=abc", 400, "not a 64-bit decimal integer"},
		{"GET", "/decodeSnowflakeId?snowflakeId=-5", 400, "invalid snowflakeId"},
		{"GET", "/decodeSnowflakeId?snowflakeId=9223372036854775807", 400, "invalid snowflakeId"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			code, body, hdr := get(t, f.srv, tt.method, tt.path)
			if code != tt.code || !strings.Contains(body, tt.says) {
				t.Fatalf("got %d %q, want %d containing %q", code, body, tt.code, tt.says)
			}
			if ct := hdr.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type %q", ct)
			}
			if len(body) > 400 || strings.Count(body, "\n") != 1 {
				t.Errorf("error body is not one short line: %q", body)
			}
		})
	}
}

func TestSegmentsDisabled(t *testing.T) {
	f := newFixture(t, func(s *server.Settings) { s.Segments.Close(); s.Segments = nil })
	code, body, _ := get(t, f.srv, "GET", "/api/segment/get/users")
	if code != 503 || !strings.Contains(body, "segment mode is not enabled") {
		t.Fatalf("%d %q", code, body)
	}
}

func TestClosedGenerators(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Close()
	for _, p := range []string{"/api/snowflake/get/orders", "/api/segment/get/users/500"} {
		code, body, _ := get(t, f.srv, "GET", p)
		if code != 503 {
			t.Errorf("%s after Close: %d %q, want 503", p, code, body)
		}
	}
	if _, page, _ := get(t, f.srv, "GET", "/"); !strings.Contains(page, `<span class="bad">shutting down</span>`) {
		t.Error("monitor page does not show the stopped snowflake generator")
	}
}

// TestAuth: the token is read from "Authorization: Bearer" only; a token
// in the query string or another header is refused, so none is ever
// accepted from where access logs record it.
func TestAuth(t *testing.T) {
	f := newFixture(t, func(s *server.Settings) { s.Tokens = []string{"s3cret", "other-token"} })
	tests := []struct {
		name   string
		target string
		hdr    []string
		code   int
	}{
		{"no token", "/api/segment/get/users", nil, 401},
		{"wrong bearer", "/api/segment/get/users", []string{"Authorization", "Bearer s3cre"}, 401},
		{"longer bearer", "/api/segment/get/users", []string{"Authorization", "Bearer s3cret2"}, 401},
		{"empty bearer", "/api/segment/get/users", []string{"Authorization", "Bearer "}, 401},
		{"basic scheme", "/api/segment/get/users", []string{"Authorization", "Basic s3cret"}, 401},
		{"bare token", "/api/segment/get/users", []string{"Authorization", "s3cret"}, 401},
		{"query token", "/api/segment/get/users?token=s3cret", nil, 401},
		{"query token on the monitor", "/?token=s3cret", nil, 401},
		{"query token on metrics", "/metrics?token=s3cret", nil, 401},
		{"other header", "/api/segment/get/users", []string{"X-Idsql-Token", "other-token"}, 401},
		{"monitor needs it", "/", nil, 401},
		{"bearer", "/api/segment/get/users", []string{"Authorization", "Bearer s3cret"}, 200},
		{"lower-case bearer", "/api/snowflake/get/orders", []string{"Authorization", "bearer other-token"}, 200},
		{"bearer on metrics", "/metrics", []string{"Authorization", "Bearer s3cret"}, 200},
		{"healthz needs none", "/healthz", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body, hdr := get(t, f.srv, "GET", tt.target, tt.hdr...)
			if code != tt.code {
				t.Fatalf("%d %q, want %d", code, body, tt.code)
			}
			if code == 401 && (hdr.Get("Www-Authenticate") != `Bearer realm="idsql"` || !strings.Contains(body, "Authorization: Bearer")) {
				t.Errorf("401 without challenge or message: %v %q", hdr, body)
			}
		})
	}
	if _, err := server.New(server.Settings{Keys: nil}); err == nil {
		t.Error("New without Keys succeeded")
	}
}

func TestMetrics(t *testing.T) {
	f := newFixture(t, nil)
	get(t, f.srv, "GET", "/api/segment/get/users/10")
	get(t, f.srv, "GET", "/api/snowflake/get/orders")
	get(t, f.srv, "GET", "/api/snowflake/get/nope")
	get(t, f.srv, "GET", "/api/segment/get/bad%20key")
	code, body, hdr := get(t, f.srv, "GET", "/metrics")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %v", code, hdr)
	}
	for _, want := range []string{
		"# TYPE idsql_ids_served_total counter\n",
		`idsql_ids_served_total{mode="segment",key="users"} 10` + "\n", // Warm's ID is not served over HTTP
		`idsql_ids_served_total{mode="snowflake",key="orders"} 1` + "\n",
		`idsql_requests_total{mode="segment"} 1` + "\n",
		`idsql_http_errors_total{kind="unknown_key"} 1` + "\n",
		`idsql_http_errors_total{kind="bad_key"} 1` + "\n",
		`idsql_segment_allocations_total{key="users"} `,
		`idsql_segment_waits_total{key="users"} `,
		`idsql_snowflake_worker_id{table="orders"} `,
		"# TYPE idsql_start_time_seconds gauge\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q:\n%s", want, body)
		}
	}
	// Every sample line is "name{labels} value" or "name value".
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		if strings.HasPrefix(line, "# ") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if _, err := strconv.ParseFloat(line[i+1:], 64); i < 0 || err != nil {
			t.Errorf("bad sample line %q", line)
		}
	}
}

func TestMonitorPage(t *testing.T) {
	f := newFixture(t, func(s *server.Settings) { s.Refresh = 3 * time.Second })
	get(t, f.srv, "GET", "/api/segment/get/leaf-segment-test")
	for _, p := range []string{"/", "/monitor", "/cache", "/db"} {
		code, body, hdr := get(t, f.srv, "GET", p)
		if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %v", p, code, hdr)
		}
		for _, want := range []string{`content="3"`, `id="seg-users"`, `id="seg-leaf-segment-test"`, `id="snow-orders"`,
			`id="snow-cached_orders"`, "cached ring", `<span class="ok">running</span>`, "No worker registry"} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q", p, want)
			}
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") || strings.Contains(body, "<script") {
			t.Errorf("%s refers to external assets or runs scripts", p)
		}
	}
}

func TestHealthz(t *testing.T) {
	f := newFixture(t, nil)
	code, body, _ := get(t, f.srv, "GET", "/healthz")
	if code != 200 || body != "ok\n" {
		t.Fatalf("%d %q", code, body)
	}
}

// TestServeShutdown runs the server on a socket, cancels it while a batch
// request is in flight and checks that the request finished, Serve
// returned and the worker leases were released.
func TestServeShutdown(t *testing.T) {
	f := newFixture(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	resp, err := http.Get(base + "/api/snowflake/get/orders")
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	// Many requests in flight while shutdown starts: each either completes
	// with 200 or is refused at the connection, never cut off midway.
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
			for range 20 {
				resp, err := c.Get(base + "/api/segment/get/users/1000")
				if err != nil {
					return // refused: the listener is closed
				}
				body, rerr := io.ReadAll(resp.Body)
				resp.Body.Close()
				if rerr != nil || (resp.StatusCode == 200 && len(parseIDsQuiet(string(body))) != 1000) {
					errs <- "cut-off response: " + strconv.Itoa(resp.StatusCode)
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n, total := f.holder.released(); total == 0 || n != total {
		t.Errorf("%d of %d worker leases released after shutdown", n, total)
	}
}

func parseIDsQuiet(body string) []int64 {
	var ids []int64
	for _, l := range strings.Split(body, "\n") {
		if id, err := strconv.ParseInt(l, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// TestConcurrentUnique hammers both endpoints from many goroutines and
// checks that no ID repeats.
func TestConcurrentUnique(t *testing.T) {
	f := newFixture(t, nil)
	paths := []string{"/api/segment/get/users", "/api/segment/get/users/37", "/api/snowflake/get/orders", "/api/snowflake/get/orders/50"}
	var mu sync.Mutex
	seen := map[string][]int64{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p := paths[(g+i)%len(paths)]
				code, body, _ := get(t, f.srv, "GET", p)
				if code != 200 {
					t.Errorf("%s: %d %q", p, code, body)
					return
				}
				mode := strings.Split(p, "/")[2]
				mu.Lock()
				seen[mode] = append(seen[mode], parseIDsQuiet(body)...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for mode, ids := range seen {
		slices.Sort(ids)
		if i := len(slices.Compact(slices.Clone(ids))); i != len(ids) {
			t.Errorf("%s: %d duplicate IDs among %d", mode, len(ids)-i, len(ids))
		}
	}
}

// After a table's worker lease is lost, the server does not answer 503 for
// good: the table (owned by Keys) acquires a new lease and serves again.
func TestServesAgainAfterLeaseLost(t *testing.T) {
	f := newFixture(t, nil)
	code, body, _ := get(t, f.srv, "GET", "/api/snowflake/get/orders")
	if code != 200 {
		t.Fatalf("first ID: %d %q", code, body)
	}
	f.holder.mu.Lock()
	before := len(f.holder.leases)
	for _, l := range f.holder.leases {
		l.(interface{ End(error) bool }).End(holder.ErrLeaseLost)
	}
	f.holder.mu.Unlock()
	code, body, _ = get(t, f.srv, "GET", "/api/snowflake/get/orders")
	if code != 200 {
		t.Fatalf("after the lease was lost: %d %q, want a new ID under a new lease", code, body)
	}
	f.holder.mu.Lock()
	after := len(f.holder.leases)
	f.holder.mu.Unlock()
	if after <= before {
		t.Fatalf("leases acquired: %d before the loss, %d after; want a new one", before, after)
	}
}
