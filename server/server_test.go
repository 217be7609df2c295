package server_test

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
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
// see that shutdown released them, and refuses the tables in refuse.
type recordingHolder struct {
	mu       sync.Mutex
	next     int64
	leases   []holder.Lease
	refuse   map[string]bool // tables whose leases are refused
	attempts map[string]int  // Acquire calls by table
}

// errRefused is what recordingHolder answers for a refused table.
var errRefused = errors.New("test holder: no worker ID for this table")

func (h *recordingHolder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.attempts == nil {
		h.attempts = map[string]int{}
	}
	h.attempts[req.Table]++
	if h.refuse[req.Table] {
		return nil, errRefused
	}
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
	cfg    *keyset.Config
	db     *sql.DB // the SQLite database of the segment store
	warm   error   // what Warm answered
}

// fixtureOptions adjust newFixtureWith.
type fixtureOptions struct {
	edit   func(*server.Settings)
	refuse []string // tables the holder refuses leases to
	// table is passed to server.WithSnowflakeTable and set as
	// Settings.SnowflakeTable; "" means the default.
	table string
}

// newFixture returns a warmed server on an SQLite segment store in a
// temporary directory; edit adjusts the settings.
func newFixture(t testing.TB, edit func(*server.Settings)) *fixture {
	t.Helper()
	f := newFixtureWith(t, fixtureOptions{edit: edit})
	if f.warm != nil {
		t.Fatal(f.warm)
	}
	return f
}

// newFixtureWith is newFixture with more options; Warm's error is in the
// fixture.
func newFixtureWith(t testing.TB, o fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	cfg, err := keyset.Parse("test", []byte(testConfig), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = server.WithSnowflakeTable(cfg, o.table); err != nil {
		t.Fatal(err)
	}
	store, err := sqlitestore.Open(ctx, t.TempDir()+"/ids.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	if err := idsql.MigrateIn(ctx, store.DB(), cfg, idsql.Stores{Segments: store}); err != nil {
		t.Fatal(err)
	}
	// A key that is no configured table, as Leaf's biz_tags are.
	if err := store.CreateKey(ctx, segment.KeySpec{Key: "leaf-segment-test", Step: 1000, Start: 5000}); err != nil {
		t.Fatal(err)
	}
	h := &recordingHolder{refuse: map[string]bool{}}
	for _, t := range o.refuse {
		h.refuse[t] = true
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: store.DB(), Holder: h, SegmentStore: store})
	if err != nil {
		t.Fatal(err)
	}
	ts := server.NewTimedStore(store)
	gen, err := segment.New(ctx, ts, segment.Settings{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s := server.Settings{Keys: keys, Segments: gen, Store: ts, SnowflakeTable: o.table, MaxBatch: 1000, Log: log.New(io.Discard, "", 0)}
	if o.edit != nil {
		o.edit(&s)
	}
	srv, err := server.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return &fixture{srv: srv, holder: h, cfg: cfg, db: store.DB(), warm: srv.Warm(ctx)}
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
	// worker 1 from the recording holder, leaf_snowflake 2, orders 3.
	for _, want := range []string{`"workerId":"3"`, `"sequenceId":"`, `"timestamp":"17`, `"layout":"leaf"`} {
		if !strings.Contains(body, want) {
			t.Errorf("decode answer %s lacks %s", body, want)
		}
	}
}

// errorAnswer is an error body as Leaf's Spring Boot writes it.
type errorAnswer struct {
	Timestamp int64  `json:"timestamp"`
	Status    int    `json:"status"`
	Error     string `json:"error"`
	Exception string `json:"exception"`
	Message   string `json:"message"`
	Path      string `json:"path"`
}

// checkErrorBody checks that body is an error answer of status code for
// path, in Spring Boot's field order, and returns it.
func checkErrorBody(t *testing.T, code int, path, body string, hdr http.Header) errorAnswer {
	t.Helper()
	if ct := hdr.Get("Content-Type"); ct != "application/json;charset=UTF-8" {
		t.Errorf("Content-Type %q, want Leaf's application/json;charset=UTF-8", ct)
	}
	var a errorAnswer
	if err := json.Unmarshal([]byte(body), &a); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if a.Status != code || a.Error != http.StatusText(code) || a.Path != path {
		t.Errorf("error body %q: want status %d %q, path %q", body, code, http.StatusText(code), path)
	}
	if now := time.Now().UnixMilli(); a.Timestamp < now-60_000 || a.Timestamp > now+1000 {
		t.Errorf("timestamp %d is not Unix milliseconds of now (%d)", a.Timestamp, now)
	}
	order := regexp.MustCompile(`^\{"timestamp":\d+,"status":\d+,"error":"[^"]*",("exception":"[^"]*",)?"message":".*","path":".*"\}$`)
	if !order.MatchString(body) {
		t.Errorf("error body %q is not in Spring Boot's field order", body)
	}
	if hdr.Get("X-Idsql-Error") == "" {
		t.Error("no X-Idsql-Error header")
	}
	return a
}

// TestLeafContract checks the answers Leaf clients see for the failures
// Leaf's LeafController reports: LeafServerException and the generator's
// Result at the start of the message, then idsql's description; status
// 500, but 4xx for a client's mistake (a key that does not exist or
// cannot be).
func TestLeafContract(t *testing.T) {
	const leafException = "com.sankuai.inf.leaf.server.exception.LeafServerException"
	tests := []struct {
		name    string
		opts    fixtureOptions
		prepare func(t *testing.T, f *fixture)
		path    string
		status  int    // 500 unless set
		result  int    // Leaf's Result id
		says    string // in X-Idsql-Error and the message
	}{
		{name: "unknown segment key", path: "/api/segment/get/nope", status: 404, result: -2,
			says: `unknown segment key "nope": no row of idsql_alloc has this key (the list is re-read at most once a second), and no segment table of the configuration uses it (add the table to the configuration and run ` + "`idsql migrate`"},
		{name: "segment key no key can be", path: "/api/segment/get/users%27%3B%20DROP%20TABLE%20users", status: 400, result: -2,
			says: "only letters, digits"},
		{name: "segment key too long", path: "/api/segment/get/" + strings.Repeat("k", server.MaxKeyLen+1), status: 400, result: -2,
			says: "longer than 128"},
		{name: "segment mode off", opts: fixtureOptions{edit: func(s *server.Settings) { s.Segments.Close(); s.Segments = nil }},
			path: "/api/segment/get/users", result: -1, says: "segment mode is not enabled"},
		{name: "snowflake generator failed to start (table of the key)", opts: fixtureOptions{refuse: []string{"orders"}},
			path: "/api/snowflake/get/orders", result: -1, says: `snowflake key "orders": generator not started`},
		{name: "snowflake generator failed to start (any key)", opts: fixtureOptions{refuse: []string{"leaf_snowflake"}},
			path: "/api/snowflake/get/coupon", result: -1, says: `snowflake key "coupon" (table leaf_snowflake): generator not started`},
		{name: "snowflake batch, generator failed to start", opts: fixtureOptions{refuse: []string{"leaf_snowflake"}},
			path: "/api/snowflake/get/coupon/10", result: -1, says: "generator not started"},
		{name: "database down", prepare: databaseDown, path: "/api/segment/get/users", result: -3,
			says: `segment key "users": segments not ready`},
		{name: "database down, batch", prepare: databaseDown, path: "/api/segment/get/users/5", result: -3,
			says: "segments not ready"},
		// Leaf answers "no such key" for any key its cache lacks.
		{name: "database down, key not in the cache", prepare: databaseDown, path: "/api/segment/get/created-later", status: 404, result: -2,
			says: `"created-later"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixtureWith(t, tt.opts)
			if tt.prepare != nil {
				tt.prepare(t, f)
			}
			code, body, hdr := get(t, f.srv, "GET", tt.path)
			status := cmp.Or(tt.status, 500)
			if code != status {
				t.Fatalf("%d %q, want %d", code, body, status)
			}
			a := checkErrorBody(t, status, tt.path, body, hdr)
			exception := leafException
			if status != 500 {
				exception = "" // not a generator failure
			}
			if want := "Result{id=" + strconv.Itoa(tt.result) + ", status=EXCEPTION}: "; !strings.HasPrefix(a.Message, want) || !strings.Contains(a.Message, tt.says) || a.Exception != exception {
				t.Errorf("message %q, exception %q; want %q then %q, %q", a.Message, a.Exception, want, tt.says, exception)
			}
			if got := hdr.Get("X-Idsql-Error"); !strings.Contains(got, tt.says) {
				t.Errorf("X-Idsql-Error %q lacks %q", got, tt.says)
			}
		})
	}
}

// databaseDown takes the segment store's database away and drains what
// the key users holds in memory: the next request needs a range.
func databaseDown(t *testing.T, f *fixture) {
	t.Helper()
	f.db.Close()
	for range 100 { // users holds its first 100 IDs; a preload may have brought 200 more
		if code, _, _ := get(t, f.srv, "GET", "/api/segment/get/users/99"); code != 200 {
			return
		}
	}
	t.Fatal("users still hands out IDs with its database closed")
}

func TestWarmReportsFailedStart(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{refuse: []string{"leaf_snowflake"}})
	if f.warm == nil || !errors.Is(f.warm, errRefused) || !strings.Contains(f.warm.Error(), "--snowflake-table") {
		t.Fatalf("Warm: %v; want the refusal, naming --snowflake-table", f.warm)
	}
	// Configured tables serve regardless.
	if code, body, _ := get(t, f.srv, "GET", "/api/snowflake/get/orders"); code != 200 {
		t.Fatalf("orders: %d %q", code, body)
	}
}

// A generator that failed to start is tried again a second later, not on
// every request.
func TestFailedStartRetried(t *testing.T) {
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixtureWith(t, fixtureOptions{refuse: []string{"leaf_snowflake"}, edit: func(s *server.Settings) { s.Now = clock }})
	attempts := func() int {
		f.holder.mu.Lock()
		defer f.holder.mu.Unlock()
		return f.holder.attempts["leaf_snowflake"]
	}
	before := attempts() // Warm's
	for range 5 {
		if code, _, _ := get(t, f.srv, "GET", "/api/snowflake/get/coupon"); code != 500 {
			t.Fatalf("while refused: %d", code)
		}
	}
	if n := attempts() - before; n != 0 {
		t.Errorf("%d lease attempts within a second of the failed start, want none", n)
	}
	f.holder.mu.Lock()
	f.holder.refuse = nil
	f.holder.mu.Unlock()
	if code, _, _ := get(t, f.srv, "GET", "/api/snowflake/get/coupon"); code != 500 {
		t.Errorf("before the pause ended: %d, want the remembered failure", code)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if code, body, _ := get(t, f.srv, "GET", "/api/snowflake/get/coupon"); code != 200 {
		t.Fatalf("after the pause: %d %q", code, body)
	}
}

// TestSnowflakeAnyKey: the snowflake endpoint answers any key, as Leaf's
// does; keys naming no snowflake table share the generator of
// leaf_snowflake, which has a worker ID of its own.
func TestSnowflakeAnyKey(t *testing.T) {
	f := newFixture(t, nil)
	worker := func(t *testing.T, id string) string {
		t.Helper()
		code, body, _ := get(t, f.srv, "GET", "/decodeSnowflakeId?snowflakeId="+id)
		if code != 200 {
			t.Fatalf("decode %s: %d %q", id, code, body)
		}
		var d server.Decoded
		if err := json.Unmarshal([]byte(body), &d); err != nil {
			t.Fatal(err)
		}
		return d.WorkerID
	}
	seen := map[int64]bool{}
	for _, tt := range []struct {
		path, worker string
	}{
		{"/api/snowflake/get/anything", "2"},
		{"/api/snowflake/get/leaf-segment-test", "2"},
		{"/api/snowflake/get/users", "2"}, // a segment table: no snowflake table of that name
		{"/api/snowflake/get/%E8%AE%A2%E5%8D%95", "2"},
		{"/api/snowflake/get/" + strings.Repeat("x", 300), "2"},
		{"/api/snowflake/get/a%20b%27%3B", "2"},
		{"/api/snowflake/get/anything/20", "2"},
		{"/api/snowflake/get/leaf_snowflake", "2"},
		{"/api/snowflake/get/orders", "3"},
		{"/api/snowflake/get/cached_orders", "1"},
	} {
		code, body, _ := get(t, f.srv, "GET", tt.path)
		if code != 200 {
			t.Fatalf("%s: %d %q", tt.path, code, body)
		}
		for _, id := range parseIDs(t, body) {
			if seen[id] {
				t.Fatalf("%s: ID %d issued twice", tt.path, id)
			}
			seen[id] = true
			if w := worker(t, strconv.FormatInt(id, 10)); w != tt.worker {
				t.Errorf("%s: ID %d of worker %s, want %s", tt.path, id, w, tt.worker)
			}
		}
	}
	_, metrics, _ := get(t, f.srv, "GET", "/metrics")
	if !strings.Contains(metrics, `idsql_ids_served_total{key="leaf_snowflake",mode="snowflake"} 27`) {
		t.Errorf("IDs of other keys not counted under leaf_snowflake:\n%s", metrics)
	}
}

// Settings.SnowflakeTable may name an application table: other keys then
// share its generator instead of taking a worker ID of their own.
func TestSnowflakeTableShared(t *testing.T) {
	f := newFixtureWith(t, fixtureOptions{table: "orders"})
	if f.warm != nil {
		t.Fatal(f.warm)
	}
	a, b := "", ""
	_, a, _ = get(t, f.srv, "GET", "/api/snowflake/get/coupon")
	_, b, _ = get(t, f.srv, "GET", "/api/snowflake/get/orders")
	for _, id := range []string{a, b} {
		_, d, _ := get(t, f.srv, "GET", "/decodeSnowflakeId?snowflakeId="+id)
		if !strings.Contains(d, `"workerId":"2"`) { // cached_orders 1, orders 2
			t.Errorf("ID %s decodes to %s, want orders' worker 2", id, d)
		}
	}
	f.holder.mu.Lock()
	defer f.holder.mu.Unlock()
	if n := f.holder.attempts["leaf_snowflake"]; n != 0 {
		t.Errorf("%d leases asked for leaf_snowflake, want none", n)
	}
}

func TestWithSnowflakeTable(t *testing.T) {
	cfg, err := keyset.Parse("test", []byte(testConfig), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	got, err := server.WithSnowflakeTable(cfg, "")
	if err != nil || got == cfg || got.Tables["leaf_snowflake"].Strategy != keyset.Snowflake {
		t.Fatalf("default table: %v, %v", got, err)
	}
	if _, ok := cfg.Tables["leaf_snowflake"]; ok {
		t.Error("WithSnowflakeTable modified its argument")
	}
	if err := got.Validate(time.Now()); err != nil {
		t.Errorf("result does not validate: %v", err)
	}
	if same, err := server.WithSnowflakeTable(cfg, "orders"); err != nil || same != cfg {
		t.Errorf("a configured snowflake table: %p, %v; want cfg itself", same, err)
	}
	for _, bad := range []string{"users", "no such; table"} {
		if _, err := server.WithSnowflakeTable(cfg, bad); err == nil {
			t.Errorf("WithSnowflakeTable(%q) succeeded", bad)
		}
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Fixed(1)})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	_, err = server.New(server.Settings{Keys: keys})
	if err == nil || !strings.Contains(err.Error(), "WithSnowflakeTable") {
		t.Errorf("New without the table: %v; want an error naming WithSnowflakeTable", err)
	}
}

func TestErrors(t *testing.T) {
	f := newFixture(t, nil)
	tests := []struct {
		method, path string
		code         int
		says         string // in the message and X-Idsql-Error
	}{
		{"GET", "/api/segment/get/", 404, "no key"},
		{"GET", "/api/snowflake/get/", 404, "no key"},
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
		{"GET", "/decodeSnowflakeId?snowflakeId=abc", 400, "not a positive 64-bit decimal integer, nor a key in a table's text form"},
		{"GET", "/decodeSnowflakeId?snowflakeId=-5", 400, "invalid snowflakeId"},
		{"GET", "/decodeSnowflakeId?snowflakeId=9223372036854775807", 400, "invalid snowflakeId"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			code, body, hdr := get(t, f.srv, tt.method, tt.path)
			if code != tt.code {
				t.Fatalf("got %d %q, want %d", code, body, tt.code)
			}
			a := checkErrorBody(t, tt.code, strings.SplitN(tt.path, "?", 2)[0], body, hdr)
			if !strings.Contains(a.Message, tt.says) || !strings.Contains(hdr.Get("X-Idsql-Error"), tt.says) {
				t.Errorf("message %q, X-Idsql-Error %q; want both to say %q", a.Message, hdr.Get("X-Idsql-Error"), tt.says)
			}
			if a.Exception != "" {
				t.Errorf("exception %q on a failure Leaf's generators do not report", a.Exception)
			}
			if len(body) > 600 {
				t.Errorf("error body is long: %q", body)
			}
		})
	}
}

func TestClosedGenerators(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.Close()
	for _, p := range []string{"/api/snowflake/get/orders", "/api/snowflake/get/anything", "/api/segment/get/users/500"} {
		code, body, hdr := get(t, f.srv, "GET", p)
		if code != 503 {
			t.Errorf("%s after Close: %d %q, want 503", p, code, body)
			continue
		}
		if a := checkErrorBody(t, 503, p, body, hdr); !strings.Contains(a.Message, "shutting down") {
			t.Errorf("%s after Close: %q", p, body)
		}
	}
	if _, page, _ := get(t, f.srv, "GET", "/"); !strings.Contains(page, `<span class="bad">shutting down</span>`) {
		t.Error("monitor page does not show the stopped snowflake generator")
	}
	if code, body, _ := get(t, f.srv, "GET", "/healthz"); code != 503 || body != "shutting down\n" {
		t.Errorf("/healthz after Close: %d %q", code, body)
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
			if code == 401 && strings.HasPrefix(tt.target, "/?") || tt.target == "/" {
				// The monitor page answers a browser with the login form.
				if hdr.Get("Www-Authenticate") != `Bearer realm="idsql"` || !strings.Contains(body, `<form id="login" method="post" action="/login">`) {
					t.Errorf("monitor page without a token: %v %q, want the login form", hdr, body)
				}
			} else if code == 401 {
				a := checkErrorBody(t, 401, strings.SplitN(tt.target, "?", 2)[0], body, hdr)
				if hdr.Get("Www-Authenticate") != `Bearer realm="idsql"` || !strings.Contains(a.Message, "Authorization: Bearer") {
					t.Errorf("401 without challenge or message: %v %q", hdr, body)
				}
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
	get(t, f.srv, "GET", "/api/segment/get/users/95") // past the first range: a refill
	get(t, f.srv, "GET", "/api/snowflake/get/orders")
	get(t, f.srv, "GET", "/api/snowflake/get/anything")
	get(t, f.srv, "GET", "/api/segment/get/nope")
	get(t, f.srv, "GET", "/api/segment/get/bad%20key")
	code, body, hdr := get(t, f.srv, "GET", "/metrics")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("%d %v", code, hdr)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics is not valid Prometheus text: %v\n%s", err, body)
	}
	for name, typ := range map[string]dto.MetricType{
		"go_goroutines":                       dto.MetricType_GAUGE,
		"go_build_info":                       dto.MetricType_GAUGE,
		"process_start_time_seconds":          dto.MetricType_GAUGE,
		"idsql_http_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"idsql_generator_wait_seconds":        dto.MetricType_HISTOGRAM,
		"idsql_segment_refill_seconds":        dto.MetricType_HISTOGRAM,
		"idsql_ids_served_total":              dto.MetricType_COUNTER,
		"idsql_http_errors_total":             dto.MetricType_COUNTER,
		"idsql_segment_allocations_total":     dto.MetricType_COUNTER,
		"idsql_segment_idle_ids":              dto.MetricType_GAUGE,
		"idsql_segment_range_size":            dto.MetricType_GAUGE,
		"idsql_snowflake_lease_active":        dto.MetricType_GAUGE,
		"idsql_snowflake_worker_id":           dto.MetricType_GAUGE,
		"idsql_snowflake_high_water_seconds":  dto.MetricType_GAUGE,
		"idsql_snowflake_buffered_ids":        dto.MetricType_GAUGE,
		"idsql_start_time_seconds":            dto.MetricType_GAUGE,
	} {
		mf := families[name]
		if mf == nil || mf.GetType() != typ {
			t.Errorf("/metrics lacks %s of type %v", name, typ)
		}
	}
	for _, want := range []string{
		`idsql_http_request_duration_seconds_bucket{code="200",endpoint="segment_batch",le="+Inf"} 2` + "\n",
		`idsql_http_request_duration_seconds_count{code="200",endpoint="snowflake"} 2` + "\n",
		`idsql_http_request_duration_seconds_count{code="404",endpoint="segment"} 1` + "\n",
		`idsql_http_request_duration_seconds_count{code="400",endpoint="segment"} 1` + "\n",
		`idsql_generator_wait_seconds_count{mode="segment"} 2` + "\n",
		`idsql_generator_wait_seconds_count{mode="snowflake"} 2` + "\n",
		`idsql_segment_refill_seconds_count{result="ok"} `,
		`idsql_ids_served_total{key="users",mode="segment"} 105` + "\n", // Warm's ID is not served over HTTP
		`idsql_ids_served_total{key="orders",mode="snowflake"} 1` + "\n",
		`idsql_ids_served_total{key="leaf_snowflake",mode="snowflake"} 1` + "\n",
		`idsql_http_errors_total{kind="unknown_key"} 1` + "\n",
		`idsql_http_errors_total{kind="bad_key"} 1` + "\n",
		`idsql_segment_allocations_total{key="users"} `,
		`idsql_segment_idle_ids{buffer="current",key="users"} `,
		`idsql_snowflake_lease_active{table="orders"} 1` + "\n",
		`idsql_snowflake_worker_id{table="orders"} 3` + "\n",
		`idsql_snowflake_buffered_ids{table="cached_orders"} `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if t.Failed() {
		t.Logf("/metrics:\n%s", body)
	}
	if refills := families["idsql_segment_refill_seconds"]; refills != nil {
		for _, m := range refills.GetMetric() {
			if m.GetHistogram().GetSampleCount() > 0 && m.GetHistogram().GetSampleSum() <= 0 {
				t.Errorf("refills counted with no time: %v", m)
			}
		}
	}

	// Each server has its own registry: a second one in the process
	// registers the same metrics without a clash, and the global default
	// registry stays empty of them.
	g := newFixture(t, nil)
	if code, _, _ := get(t, g.srv, "GET", "/metrics"); code != 200 {
		t.Fatalf("second server's /metrics: %d", code)
	}
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "idsql_") {
			t.Errorf("the default registry has %s", mf.GetName())
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

// gateStore holds back the first range allocation for key after it is
// armed: it signals entered and waits for release, so the request that
// needs the range is in flight for as long as the test wants.
type gateStore struct {
	segment.Store
	key     string
	armed   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (g *gateStore) Allocate(ctx context.Context, req segment.Request) (segment.Range, error) {
	if req.Key == g.key && g.armed.CompareAndSwap(true, false) {
		close(g.entered)
		<-g.release
	}
	return g.Store.Allocate(ctx, req)
}

// answer is what TestServeShutdown's client got for one request.
type answer struct {
	code, ids int
	refused   bool
	err       error
}

func (a answer) String() string {
	return fmt.Sprintf("status %d, %d IDs, refused %t, error %v", a.code, a.ids, a.refused, a.err)
}

// TestServeShutdown: a request in flight when shutdown begins is answered
// in full, and while shutdown runs every other request is either refused
// at the connection or answered in full with 200.
func TestServeShutdown(t *testing.T) {
	gate := &gateStore{key: "leaf-segment-test", entered: make(chan struct{}), release: make(chan struct{})}
	f := newFixture(t, func(s *server.Settings) {
		gate.Store = s.Store
		gen, err := segment.New(context.Background(), gate, segment.Settings{RefreshInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		s.Segments.Close()
		s.Segments = gen
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.srv.Serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()

	// fetch gets path on a connection of its own and returns the status,
	// the number of IDs in a 200 answer, and the error. refused is true
	// when no byte of an answer came: the connection was refused, or closed
	// or reset before the server answered (net/http closes a connection
	// whose request it reads once shutdown has begun, and the kernel resets
	// those still queued when the listener closes). An error after the
	// answer began cut off a request the server had taken on.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	fetch := func(path string) answer {
		var answered atomic.Bool
		trace := &httptrace.ClientTrace{GotFirstResponseByte: func() { answered.Store(true) }}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", base+path, nil)
		if err != nil {
			return answer{err: err}
		}
		resp, err := client.Do(req)
		if err != nil {
			return answer{refused: !answered.Load(), err: err}
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return answer{code: resp.StatusCode, ids: len(parseIDsQuiet(string(body))), err: err}
	}
	if a := fetch("/api/snowflake/get/orders"); a.err != nil || a.code != 200 || a.ids != 1 {
		t.Fatalf("before shutdown: %v", a)
	}

	// One request held in flight: its range allocation waits at the gate.
	// (Warm may have loaded a range already; requests go on until one
	// needs a new one.)
	gate.armed.Store(true)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(gate.release) }) }
	defer release() // a check that fails lets the held request, and so Serve, end
	held := make(chan answer, 1)
	for n := 0; ; n++ {
		go func() { held <- fetch("/api/segment/get/leaf-segment-test/1000") }()
		select {
		case <-gate.entered:
		case a := <-held:
			if a.err != nil || a.code != 200 || a.ids != 1000 || n == 3 {
				t.Fatalf("request %d for 1,000 IDs answered %v without a new range", n, a)
			}
			continue
		}
		break
	}

	// Other clients keep sending requests while shutdown starts.
	const clients = 8
	var wg sync.WaitGroup
	var started, answers atomic.Int32 // clients that began sending; their requests that returned
	errs := make(chan string, clients*20)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started.Add(1)
			for range 20 {
				a := fetch("/api/segment/get/users/1000")
				answers.Add(1)
				switch {
				case a.refused:
					return
				case a.err != nil:
					errs <- "answer cut off: " + a.err.Error()
				case a.code != 200 || a.ids != 1000:
					errs <- fmt.Sprintf("answered %d with %d IDs, want 200 with 1,000", a.code, a.ids)
				}
			}
		}()
	}
	// Shutdown begins once every client is sending and one request of
	// theirs has returned: most of them are still to come.
	// A deadline for a wait of milliseconds (clients that never start run
	// into it), not a speed bound.
	for deadline := time.Now().Add(10 * time.Second); started.Load() < clients || answers.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the clients began: %d of %d sending, %d requests returned; want all sending and one returned", started.Load(), clients, answers.Load())
		}
	}
	cancel()
	// Shutdown has begun once the listener refuses connections; the held
	// request is still in flight then, and Serve waits for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts connections 10 s after cancel")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case a := <-held:
		t.Fatalf("the held request ended before its range was released: %v", a)
	case err := <-done:
		t.Fatalf("Serve returned with a request in flight: %v", err)
	default:
	}
	release()
	if a := <-held; a.err != nil || a.code != 200 || a.ids != 1000 {
		t.Errorf("request in flight when shutdown began: %v; want 200 with 1,000 IDs", a)
	}
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

// TestWarmDrawsNoKey: Warm loads users' first range but hands out no key
// from it, so the first request answers the range's first key (1 on a
// fresh store), not the second.
func TestWarmDrawsNoKey(t *testing.T) {
	f := newFixture(t, nil)
	var first, ranges int64
	if err := f.db.QueryRow("SELECT MIN(first_id), COUNT(*) FROM idsql_alloc_log WHERE biz_tag = 'users'").Scan(&first, &ranges); err != nil {
		t.Fatal(err)
	}
	if ranges != 1 || first != 1 {
		t.Fatalf("after Warm: %d ranges of users, first key %d; want Warm to have loaded one range starting at 1", ranges, first)
	}
	if body := mustGet(t, f.srv, "/api/segment/get/users"); body != strconv.FormatInt(first, 10) {
		t.Fatalf("first /api/segment/get/users = %q, want %d, the first key of the first range", body, first)
	}
}

// TestMonitorLogin: with tokens on, the monitor page offers a login form;
// a valid token posted to it sets an HttpOnly, SameSite=Strict session
// cookie that opens the monitor page and nothing else, and does not hold
// the token.
func TestMonitorLogin(t *testing.T) {
	f := newFixture(t, func(s *server.Settings) { s.Tokens = []string{"s3cret", "other-token"} })
	post := func(target, form string, cookies ...*http.Cookie) *http.Response {
		t.Helper()
		r := httptest.NewRequest("POST", target, strings.NewReader(form))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for _, c := range cookies {
			r.AddCookie(c)
		}
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		return w.Result()
	}
	withCookie := func(target string, c *http.Cookie) (int, string) {
		t.Helper()
		r := httptest.NewRequest("GET", target, nil)
		r.AddCookie(c)
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}

	if code, body, _ := get(t, f.srv, "GET", "/login"); code != 200 || !strings.Contains(body, `name="token" type="password"`) {
		t.Fatalf("GET /login: %d %q", code, body)
	}
	resp := post("/login", "token=s3cre")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 401 || len(resp.Cookies()) != 0 || !strings.Contains(string(body), "not one of the server&#39;s tokens") {
		t.Fatalf("wrong token: %d, cookies %v, %q", resp.StatusCode, resp.Cookies(), body)
	}

	resp = post("/login", "token=other-token")
	cs := resp.Cookies()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/" || len(cs) != 1 {
		t.Fatalf("right token: %d, Location %q, cookies %v", resp.StatusCode, resp.Header.Get("Location"), cs)
	}
	c := cs[0]
	if c.Name != "idsql_session" || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" ||
		strings.Contains(c.Value, "other-token") || len(c.Value) != 64 {
		t.Fatalf("session cookie %+v: want idsql_session, HttpOnly, SameSite=Strict, Path /, 64 hex digits not holding the token", c)
	}
	if code, body := withCookie("/", c); code != 200 || !strings.Contains(body, `id="namespace">test<`) || !strings.Contains(body, `action="/logout"`) {
		t.Fatalf("monitor with the session cookie: %d %q", code, body)
	}
	// The API and the metrics stay Bearer-only.
	for _, p := range []string{"/api/segment/get/users", "/api/snowflake/get/orders", "/metrics", "/decodeSnowflakeId?snowflakeId=1"} {
		if code, _ := withCookie(p, c); code != 401 {
			t.Errorf("%s with the session cookie: %d, want 401", p, code)
		}
	}
	// A forged or altered cookie is refused.
	for _, v := range []string{strings.Repeat("0", 64), c.Value[:63] + "x", c.Value[:62], "s3cret"} {
		if code, body := withCookie("/", &http.Cookie{Name: "idsql_session", Value: v}); code != 401 || !strings.Contains(body, `id="login"`) {
			t.Errorf("cookie %q: %d, want 401 and the login form", v, code)
		}
	}
	resp = post("/logout", "", c)
	if cs := resp.Cookies(); resp.StatusCode != http.StatusSeeOther || len(cs) != 1 || cs[0].MaxAge >= 0 {
		t.Errorf("logout: %d, cookies %v; want 303 and the cookie deleted", resp.StatusCode, cs)
	}
}
