package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/dialect"
)

const (
	segmentPrefix   = "/api/segment/get/"
	snowflakePrefix = "/api/snowflake/get/"
	uuid7Prefix     = "/api/uuid7/get/"
)

// Header values shared by every response; net/http never modifies them.
var (
	textPlain = []string{"text/plain; charset=utf-8"}
	jsonType  = []string{"application/json"}
	// errorJSON is the Content-Type of error answers, spelled as Leaf's
	// Spring Boot sends it.
	errorJSON = []string{"application/json;charset=UTF-8"}
	noSniff   = []string{"nosniff"}
	noStore   = []string{"no-store"}
)

// mode is the generator kind an ID endpoint serves.
type mode int

const (
	modeSegment mode = iota
	modeSnowflake
	modeUUID7 // a uuid7 table's keys, as UUIDs
	numModes
)

var modeNames = [numModes]string{"segment", "snowflake", "uuid7"}

// endpoint labels the request latency histogram.
type endpoint int

const (
	epSegment endpoint = iota
	epSegmentBatch
	epSnowflake
	epSnowflakeBatch
	epUUID7
	epUUID7Batch
	epDecode
	epMonitor
	epMetrics
	epHealth
	epLogin
	epOther
	numEndpoints
)

var endpointNames = [numEndpoints]string{
	"segment", "segment_batch", "snowflake", "snowflake_batch", "uuid7", "uuid7_batch", "decode", "monitor", "metrics", "healthz", "login", "other",
}

// errKind classifies failed requests for /metrics and the monitor page.
type errKind int

const (
	errBadKey errKind = iota
	errBadCount
	errUnknownKey
	errNotRunning
	errNotReady
	errStore
	errClockBackwards
	errExhausted
	errShuttingDown
	errCanceled
	errInternal
	errUnauthorized
	errNotFound
	errMethod
	errBadRequest
	numErrKinds
)

var errKindNames = [numErrKinds]string{
	"bad_key", "bad_count", "unknown_key", "not_running", "not_ready", "store", "clock_backwards",
	"exhausted", "shutting_down", "canceled", "internal", "unauthorized", "not_found", "method", "bad_request",
}

// Leaf's Result ids for failures (SegmentIDGenImpl's constants; its
// snowflake generator uses -1 and -3 for the clock).
const (
	leafNotInitialized = -1 // the generator is not initialized
	leafKeyNotExists   = -2 // no such segment key
	leafSegmentsNull   = -3 // neither segment holds IDs; clock far behind (snowflake)
)

// leafException is the exception Leaf's Spring Boot error body names for a
// generator failure.
const leafException = "com.sankuai.inf.leaf.server.exception.LeafServerException"

// failure is the answer to a failed request.
type failure struct {
	kind   errKind
	status int
	// leaf is the Result id Leaf answers in the same situation (message
	// "Result{id=-2, status=EXCEPTION}"), 0 where Leaf has none.
	leaf int64
	// generator marks a failure of a generator, which Leaf reports as
	// LeafServerException.
	generator bool
	// msg is idsql's description, sent in the X-Idsql-Error header (and
	// as the message where Leaf has no Result id).
	msg string
}

// bufPool holds response buffers; idsPool holds ID slices of batches.
var (
	bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}
	idsPool = sync.Pool{New: func() any { s := make([]int64, 0, 64); return &s }}
)

// maxPooled bounds the buffers returned to the pools, so one huge batch
// does not pin memory.
const maxPooled = 1 << 18

// ServeHTTP routes a request to the endpoint its path names; see the
// package documentation for the endpoints and their answers.
func (srv *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := srv.mono()
	ep := endpointOf(r.URL.Path)
	code := srv.route(w, r, ep)
	srv.m.observeRequest(ep, code, srv.mono()-start)
}

// endpointOf returns the endpoint path p names.
func endpointOf(p string) endpoint {
	switch {
	case strings.HasPrefix(p, segmentPrefix):
		if strings.IndexByte(p[len(segmentPrefix):], '/') >= 0 {
			return epSegmentBatch
		}
		return epSegment
	case strings.HasPrefix(p, snowflakePrefix):
		if strings.IndexByte(p[len(snowflakePrefix):], '/') >= 0 {
			return epSnowflakeBatch
		}
		return epSnowflake
	case strings.HasPrefix(p, uuid7Prefix):
		if strings.IndexByte(p[len(uuid7Prefix):], '/') >= 0 {
			return epUUID7Batch
		}
		return epUUID7
	case p == "/decodeSnowflakeId", p == "/decodeId":
		return epDecode
	case p == "/" || p == "/monitor" || p == "/cache" || p == "/db":
		return epMonitor
	case p == "/metrics":
		return epMetrics
	case p == "/healthz":
		return epHealth
	case p == "/login" || p == "/logout":
		return epLogin
	}
	return epOther
}

// route answers r and returns the status it answered.
func (srv *Server) route(w http.ResponseWriter, r *http.Request, ep endpoint) int {
	switch {
	case ep == epHealth:
		return srv.serveHealth(w)
	case ep == epLogin:
		return srv.serveLogin(w, r)
	case ep == epMonitor && isGetOrHead(r) && !srv.authorized(r) && !srv.hasSession(r):
		// A browser cannot send the Bearer header: it gets the login form.
		srv.m.errors[errUnauthorized].Add(1)
		return srv.loginForm(w, http.StatusUnauthorized, "")
	case !srv.authorized(r) && !(ep == epMonitor && srv.hasSession(r)):
		w.Header()["Www-Authenticate"] = []string{`Bearer realm="idsql"`}
		return srv.fail(w, r, nil, failure{kind: errUnauthorized, status: http.StatusUnauthorized,
			msg: "missing or invalid token (send Authorization: Bearer TOKEN)"})
	}
	p := r.URL.Path
	switch ep {
	case epSegment, epSegmentBatch:
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			return srv.methodNotAllowed(w, r, "GET, POST")
		}
		return srv.serveIDs(w, r, modeSegment, p[len(segmentPrefix):])
	case epSnowflake, epSnowflakeBatch:
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			return srv.methodNotAllowed(w, r, "GET, POST")
		}
		return srv.serveIDs(w, r, modeSnowflake, p[len(snowflakePrefix):])
	case epUUID7, epUUID7Batch:
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			return srv.methodNotAllowed(w, r, "GET, POST")
		}
		return srv.serveIDs(w, r, modeUUID7, p[len(uuid7Prefix):])
	case epDecode:
		if !isGetOrHead(r) {
			return srv.methodNotAllowed(w, r, "GET, HEAD")
		}
		if p == "/decodeId" {
			return srv.serveDecodeGene(w, r)
		}
		return srv.serveDecode(w, r)
	case epMetrics:
		if !isGetOrHead(r) {
			return srv.methodNotAllowed(w, r, "GET, HEAD")
		}
		return srv.serveMetrics(w, r)
	case epMonitor:
		if !isGetOrHead(r) {
			return srv.methodNotAllowed(w, r, "GET, HEAD")
		}
		return srv.serveMonitor(w, r)
	}
	return srv.fail(w, r, nil, failure{kind: errNotFound, status: http.StatusNotFound, msg: "no such endpoint: " + quote(p)})
}

func isGetOrHead(r *http.Request) bool {
	return r.Method == http.MethodGet || r.Method == http.MethodHead
}

func (srv *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) int {
	w.Header()["Allow"] = []string{allow}
	return srv.fail(w, r, nil, failure{kind: errMethod, status: http.StatusMethodNotAllowed, msg: "method not allowed (use " + allow + ")"})
}

func (srv *Server) serveHealth(w http.ResponseWriter) int {
	h := w.Header()
	h["Content-Type"] = textPlain
	h["Cache-Control"] = noStore
	if srv.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "shutting down\n")
		return http.StatusServiceUnavailable
	}
	io.WriteString(w, "ok\n")
	return http.StatusOK
}

// serveIDs answers /api/{mode}/get/{key} and /api/{mode}/get/{key}/{n}.
func (srv *Server) serveIDs(w http.ResponseWriter, r *http.Request, md mode, rest string) int {
	key, count, batch := rest, "", false
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		key, count, batch = rest[:i], rest[i+1:], true
	}
	if key == "" { // Leaf has no mapping for an empty key: Spring answers 404
		return srv.fail(w, r, nil, failure{kind: errNotFound, status: http.StatusNotFound,
			msg: "no key: want /api/" + modeNames[md] + "/get/{key}"})
	}
	n := 1
	if batch {
		var ok bool
		if n, ok = parseCount(count, srv.s.MaxBatch); !ok {
			return srv.fail(w, r, nil, failure{kind: errBadCount, status: http.StatusBadRequest,
				msg: "invalid count " + quote(count) + ": want a whole number from 1 to " + strconv.Itoa(srv.s.MaxBatch)})
		}
	}
	srv.m.requests[md].Add(1)
	switch md {
	case modeSegment:
		return srv.serveSegment(w, r, key, n, batch)
	case modeUUID7:
		return srv.serveUUID7(w, r, key, n, batch)
	}
	return srv.serveSnowflake(w, r, key, n, batch)
}

func (srv *Server) serveSegment(w http.ResponseWriter, r *http.Request, key string, n int, batch bool) int {
	if msg := checkKey(key); msg != "" {
		// No key of idsql_alloc can be spelled so: Leaf's "no such key",
		// as a client error.
		return srv.fail(w, r, nil, failure{kind: errBadKey, status: http.StatusBadRequest,
			leaf: leafKeyNotExists, msg: msg})
	}
	if srv.s.Segments == nil {
		return srv.fail(w, r, nil, failure{kind: errNotRunning, status: http.StatusInternalServerError,
			leaf: leafNotInitialized, generator: true, msg: "segment mode is not enabled on this server (no database)"})
	}
	ctx := r.Context()
	table, viaKeys := srv.viaKeys[key]
	shard := -1
	if g := srv.cfg.Tables[table].Gene(); viaKeys && g.ShardBits > 0 {
		var msg string
		if shard, msg = parseShard(r.URL.Query().Get("shard"), g.Shards()); msg != "" {
			return srv.fail(w, r, nil, failure{kind: errBadKey, status: http.StatusBadRequest,
				msg: "segment key " + quote(key) + ": table " + table + " is sharded: " + msg + "; ask for one shard's keys with " +
					segmentPrefix + key + "?shard=N, N from 0 to " + strconv.Itoa(g.Shards()-1) + " (on insert the shard comes from the row's " +
					srv.cfg.Tables[table].Shard.Column + " column)"})
		}
		key = g.ShardKey(key, shard)
	}
	e, err := srv.segmentEntry(ctx, key)
	if err != nil {
		return srv.fail(w, r, nil, srv.segmentFailure(key, err, true))
	}
	if viaKeys {
		return srv.serveTableSegment(w, r, e, key, table, shard, n, batch)
	}
	t0 := srv.mono()
	if !batch {
		id, err := e.key.Next(ctx)
		srv.m.observeWait(modeSegment, srv.mono()-t0)
		if err != nil {
			return srv.fail(w, r, &e.stats, srv.segmentFailure(key, err, false))
		}
		e.served.Add(1)
		writeID(w, id)
		return http.StatusOK
	}
	ids, err := e.key.NextIDs(ctx, n)
	srv.m.observeWait(modeSegment, srv.mono()-t0)
	if err != nil {
		return srv.fail(w, r, &e.stats, srv.segmentFailure(key, err, false))
	}
	e.served.Add(uint64(len(ids)))
	writeIDs(w, ids)
	return http.StatusOK
}

// parseShard parses a shard number below shards, or says what is wrong.
func parseShard(s string, shards int) (int, string) {
	if s == "" {
		return -1, "no shard given"
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n >= shards {
		return -1, "shard " + quote(s) + " is not a shard"
	}
	return n, ""
}

// serveTableSegment answers a segment key whose table has a max_id or gene
// bits: its keys come from Keys, which checks the limit and composes them.
// A sharded table's keys come from the one shard given (shard >= 0).
func (srv *Server) serveTableSegment(w http.ResponseWriter, r *http.Request, e *segEntry, key, table string, shard, n int, batch bool) int {
	t0 := srv.mono()
	var ids []int64
	var err error
	if shard >= 0 {
		shards := make([]int, n)
		for i := range shards {
			shards[i] = shard
		}
		ids, err = srv.s.Keys.AppendShardIDs(r.Context(), make([]int64, 0, n), table, shards)
	} else {
		ids, err = srv.s.Keys.AppendIDs(r.Context(), make([]int64, 0, n), table, n)
	}
	srv.m.observeWait(modeSegment, srv.mono()-t0)
	if err != nil {
		return srv.fail(w, r, &e.stats, srv.segmentFailure(key, err, false))
	}
	e.served.Add(uint64(len(ids)))
	if batch {
		writeIDs(w, ids)
	} else {
		writeID(w, ids[0])
	}
	return http.StatusOK
}

// serveSnowflake answers any key, as Leaf does: a key naming a snowflake
// table takes that table's IDs, any other key those of the table of
// Settings.SnowflakeTable.
func (srv *Server) serveSnowflake(w http.ResponseWriter, r *http.Request, key string, n int, batch bool) int {
	e := srv.snow[key]
	if e == nil {
		e = srv.anyKey
	}
	if e == nil {
		return srv.fail(w, r, nil, failure{kind: errUnknownKey, status: http.StatusNotFound,
			msg: "snowflake key " + quote(key) + " names no snowflake table, and no table answers other keys: " + srv.s.SnowflakeOff})
	}
	ctx := r.Context()
	src, err := srv.snowflakeSource(ctx, e)
	if err != nil {
		return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
	}
	t0 := srv.mono()
	if !batch {
		id, err := src.next(ctx)
		srv.m.observeWait(modeSnowflake, srv.mono()-t0)
		if err != nil {
			return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
		}
		e.served.Add(1)
		e.running()
		writeID(w, id)
		return http.StatusOK
	}
	p := idsPool.Get().(*[]int64)
	ids, err := src.appendIDs(ctx, (*p)[:0], n)
	srv.m.observeWait(modeSnowflake, srv.mono()-t0)
	if err != nil {
		// IDs taken before the error are valid but dropped: gaps are allowed.
		putIDs(p, ids)
		return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
	}
	e.served.Add(uint64(len(ids)))
	e.running()
	writeIDs(w, ids)
	putIDs(p, ids)
	return http.StatusOK
}

// serveUUID7 answers /api/uuid7/get/{table}[/{n}]: keys of the uuid7
// table, one canonical UUID per line. A key that names no uuid7 table is
// 404: no other table answers for it.
func (srv *Server) serveUUID7(w http.ResponseWriter, r *http.Request, key string, n int, batch bool) int {
	e := srv.uuids[key]
	if e == nil {
		return srv.fail(w, r, nil, failure{kind: errUnknownKey, status: http.StatusNotFound,
			msg: "uuid7 key " + quote(key) + " names no uuid7 table of the configuration"})
	}
	ctx := r.Context()
	src, err := srv.snowflakeSource(ctx, e)
	if err != nil {
		return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
	}
	t0 := srv.mono()
	p := idsPool.Get().(*[]int64)
	ids, err := src.appendIDs(ctx, (*p)[:0], n)
	srv.m.observeWait(modeUUID7, srv.mono()-t0)
	if err != nil {
		putIDs(p, ids)
		return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
	}
	b := make([]byte, 0, 37*len(ids))
	for i, id := range ids {
		u, err := srv.uuidKeys.UUID(id)
		if err != nil {
			putIDs(p, ids)
			return srv.fail(w, r, &e.stats, srv.snowflakeFailure(e, key, err))
		}
		if i > 0 {
			b = append(b, '\n')
		}
		b = append(b, keyform.FormatUUID(u)...)
	}
	putIDs(p, ids)
	e.served.Add(uint64(len(ids)))
	e.running()
	h := w.Header()
	h["Content-Type"] = textPlain
	h["Cache-Control"] = noStore
	w.Write(b)
	return http.StatusOK
}

func putIDs(p *[]int64, ids []int64) {
	if cap(ids) <= maxPooled/8 {
		*p = ids[:0]
		idsPool.Put(p)
	}
}

// writeID writes one ID as decimal text, Leaf's answer. Like every answer
// holding IDs it is marked no-store: a cache that answered a second client
// with it would hand out the same ID twice.
func writeID(w http.ResponseWriter, id int64) {
	p := bufPool.Get().(*[]byte)
	b := strconv.AppendInt((*p)[:0], id, 10)
	h := w.Header()
	h["Content-Type"] = textPlain
	h["Cache-Control"] = noStore
	w.Write(b)
	*p = b
	bufPool.Put(p)
}

// writeIDs writes IDs one per line (no newline after the last).
func writeIDs(w http.ResponseWriter, ids []int64) {
	p := bufPool.Get().(*[]byte)
	b := (*p)[:0]
	if need := 20 * len(ids); cap(b) < need {
		b = make([]byte, 0, need)
	}
	b = appendIDs(b, ids)
	h := w.Header()
	h["Content-Type"] = textPlain
	h["Cache-Control"] = noStore
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	w.Write(b)
	if cap(b) <= maxPooled {
		*p = b
		bufPool.Put(p)
	}
}

// appendIDs appends ids to b in decimal, one per line. Batches are runs of
// consecutive IDs (a segment range, a snowflake tick's sequence), so an ID
// one above its predecessor is written by copying the predecessor's digits
// and adding one in place, about five times cheaper than formatting it.
func appendIDs(b []byte, ids []int64) []byte {
	prevStart, prevEnd := 0, 0
	for i, id := range ids {
		if i > 0 {
			b = append(b, '\n')
			if prev := ids[i-1]; prev > 0 && id == prev+1 {
				start := len(b)
				b = append(b, b[prevStart:prevEnd]...)
				if incDecimal(b[start:]) {
					prevStart, prevEnd = start, len(b)
					continue
				}
				b = b[:start] // all nines: the number grows a digit
			}
		}
		prevStart = len(b)
		b = strconv.AppendInt(b, id, 10)
		prevEnd = len(b)
	}
	return b
}

// incDecimal adds one to the decimal digits d in place; it reports false
// (leaving d all zeros) when d is all nines.
func incDecimal(d []byte) bool {
	for j := len(d) - 1; j >= 0; j-- {
		if d[j] != '9' {
			d[j]++
			return true
		}
		d[j] = '0'
	}
	return false
}

// checkKey returns why a segment key is not acceptable, or "".
func checkKey(key string) string {
	if len(key) > MaxKeyLen {
		return "invalid segment key: longer than " + strconv.Itoa(MaxKeyLen) + " bytes"
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' {
			continue
		}
		return "invalid segment key " + quote(key) + ": only letters, digits and _ - . : are allowed"
	}
	return ""
}

// parseCount parses a batch size in [1, max] without allocating.
func parseCount(s string, max int) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n >= 1 && n <= max
}

// quote quotes s for an error message in ASCII (it travels in a header),
// shortening what a client may have made arbitrarily long.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.QuoteToASCII(s)
}

// errText is err's message for an error answer, as it is (not quoted
// again: the body's JSON and the header each escape it once), shortened
// past 1,024 bytes, since an error may quote what a client sent.
// net/http turns any line break in it into a space in the header.
func errText(err error) string {
	s := err.Error()
	if len(s) > 1024 {
		s = strings.ToValidUTF8(s[:1024], "") + "..."
	}
	return s
}

// errorBody is an error answer: the body Spring Boot 1.5's error
// controller sends Leaf's machine clients, field for field.
type errorBody struct {
	Timestamp int64  `json:"timestamp"` // Unix milliseconds
	Status    int    `json:"status"`
	Error     string `json:"error"` // the status's reason phrase
	Exception string `json:"exception,omitempty"`
	Message   string `json:"message"`
	Path      string `json:"path"`
}

// fail answers f, counts it and returns its status.
func (srv *Server) fail(w http.ResponseWriter, r *http.Request, st *stats, f failure) int {
	srv.m.errors[f.kind].Add(1)
	if st != nil {
		st.errors.Add(1)
		st.lastErr.Store(&errRecord{Msg: f.msg, At: srv.s.Now()})
	}
	b := errorBody{
		Timestamp: srv.s.Now().UnixMilli(),
		Status:    f.status,
		Error:     http.StatusText(f.status),
		Message:   f.msg,
		Path:      r.URL.EscapedPath(),
	}
	if f.generator {
		b.Exception = leafException
	}
	if f.leaf != 0 {
		// Leaf's message first, unchanged, for clients that match it;
		// then what went wrong and what to do.
		b.Message = "Result{id=" + strconv.FormatInt(f.leaf, 10) + ", status=EXCEPTION}: " + f.msg
	}
	if f.kind == errBadKey || f.kind == errUnknownKey || f.kind == errBadCount || f.kind == errBadRequest {
		srv.logf("%s %s: %d: %s", r.Method, r.URL.EscapedPath(), f.status, f.msg)
	}
	body, _ := json.Marshal(b)
	h := w.Header()
	h["Content-Type"] = errorJSON
	h["X-Content-Type-Options"] = noSniff
	h["Cache-Control"] = noStore
	h["X-Idsql-Error"] = []string{f.msg}
	w.WriteHeader(f.status)
	w.Write(body)
	return f.status
}

// segmentFailure maps an error of the segment generator for key to its
// answer; lookup says it came from finding the key (the cache of key
// names), not from taking IDs.
func (srv *Server) segmentFailure(key string, err error, lookup bool) failure {
	what := "segment key " + quote(key) + ": "
	f := failure{status: http.StatusInternalServerError, generator: true}
	switch {
	case errors.Is(err, segment.ErrClosed), errors.Is(err, keyset.ErrClosed):
		return failure{kind: errShuttingDown, status: http.StatusServiceUnavailable, msg: what + "shutting down"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure{kind: errCanceled, status: http.StatusServiceUnavailable, msg: what + "request canceled or timed out"}
	case errors.Is(err, segment.ErrUnknownKey):
		f.kind, f.status, f.leaf, f.generator, f.msg = errUnknownKey, http.StatusNotFound, leafKeyNotExists, false, srv.unknownKey(key)
	case dialect.AnyUndefinedTable(err):
		f.kind, f.leaf, f.msg = errStore, leafKeyNotExists, what+"idsql's tables (idsql_alloc) are missing in the database: "+
			"run `idsql migrate --config idsql.yaml --dsn ...` (or idsql serve --migrate, or idsql.Migrate) once"
	case lookup:
		// Leaf answers "no such key" for any key its cache lacks.
		f.kind, f.leaf, f.msg = errStore, leafKeyNotExists, what+"the key list could not be read (details in the server log)"
		srv.logf("segment key %q: %v", key, err)
	case errors.Is(err, segment.ErrTimeout):
		f.kind, f.leaf, f.msg = errNotReady, leafSegmentsNull, what+"segments not ready (no range arrived in time)"
	case errors.Is(err, segment.ErrExhausted):
		f.kind, f.msg = errExhausted, what+"ID space exhausted"
		srv.logf("segment key %q: %v", key, err)
	case errors.Is(err, keyset.ErrKeySpaceExhausted):
		f.kind, f.msg = errExhausted, what+err.Error()
	default: // the store failed: the database is down or refused
		f.kind, f.leaf, f.msg = errStore, leafSegmentsNull, what+"segments not ready: no range could be allocated (details in the server log)"
		srv.logf("segment key %q: %v", key, err)
	}
	return f
}

// unknownKey describes a segment key with no row in the store, and how to
// give it one: a configured table's key comes from migrate.
func (srv *Server) unknownKey(key string) string {
	var tables []string
	if srv.cfg != nil {
		tables = srv.cfg.TableNames()
	}
	for _, t := range tables {
		tc := srv.cfg.Tables[t]
		if tc.Strategy == keyset.UUID7 && t == key {
			return "unknown segment key " + quote(key) + ": table " + t + " has UUID keys (strategy uuid7): its keys come from " +
				"/api/uuid7/get/" + t + ", not from the segment route"
		}
		if tc.Strategy == keyset.Snowflake && t == key {
			return "unknown segment key " + quote(key) + ": table " + t + " is a snowflake table: its keys come from " +
				"/api/snowflake/get/" + t + ", not from the segment route"
		}
		if tc.Strategy != keyset.Segment {
			continue
		}
		if k := srv.cfg.SegmentKey(t); k == key || strings.HasPrefix(key, k+"#") {
			return "unknown segment key " + quote(key) + ": table " + t + " is configured but its key has no row in idsql_alloc yet: " +
				"run `idsql migrate --config idsql.yaml --dsn ...` (or idsql.Migrate) once after adding a table to the configuration"
		}
	}
	return "unknown segment key " + quote(key) + ": no row of idsql_alloc has this key (the list is re-read at most once a second), and no segment table of the configuration uses it " +
		"(add the table to the configuration and run `idsql migrate`, or create the row as Leaf's biz_tag)"
}

// snowflakeFailure maps an error of table e's snowflake generator, asked
// for key, to its answer, and remembers for the monitor page when the
// generator stopped.
func (srv *Server) snowflakeFailure(e *snowEntry, key string, err error) failure {
	what := "snowflake key " + quote(key)
	if key != e.table {
		what += " (table " + e.table + ")"
	}
	what += ": "
	f := failure{status: http.StatusInternalServerError, generator: true}
	var back *snowflake.ClockBackwardError
	var behind *snowflake.ClockBehindError
	var start *startError
	switch {
	case srv.closing.Load(), errors.Is(err, keyset.ErrClosed), errors.Is(err, snowflake.ErrClosed):
		f = failure{kind: errShuttingDown, status: http.StatusServiceUnavailable, msg: what + "shutting down"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return failure{kind: errCanceled, status: http.StatusServiceUnavailable, msg: what + "request canceled or timed out"}
	case errors.As(err, &back):
		// Leaf refuses at once when the clock is more than its 5 ms wait
		// behind: -3.
		f.kind, f.leaf = errClockBackwards, leafSegmentsNull
		f.msg = what + "clock moved backwards (" + back.Behind.String() + " behind, waits at most " + back.Max.String() + ")"
	case errors.As(err, &behind):
		f.kind, f.leaf, f.msg = errClockBackwards, leafNotInitialized, what+"generator not started: clock behind the worker's persisted horizon"
		srv.logf("snowflake table %s: %v", e.table, err)
	case errors.Is(err, snowflake.ErrExhausted):
		f.kind, f.msg = errExhausted, what+"ID space exhausted"
		srv.logf("snowflake table %s: %v", e.table, err)
	case errors.As(err, &start):
		f.kind, f.leaf, f.msg = errNotRunning, leafNotInitialized, what+"generator not started (details in the server log)"
		srv.logf("snowflake table %s: %v", e.table, err)
	case errors.Is(err, snowflake.ErrStopped), errors.Is(err, holder.ErrLeaseLost), errors.Is(err, holder.ErrReleased):
		f.kind, f.leaf, f.msg = errNotRunning, leafNotInitialized, what+"worker lease lost, generator stopped until a new lease is acquired"
		srv.logf("snowflake table %s: %v", e.table, err)
	default: // a new lease could not be acquired, or something unforeseen
		f.kind, f.leaf, f.msg = errNotRunning, leafNotInitialized, what+"generator not running (details in the server log)"
		srv.logf("snowflake table %s: %v", e.table, err)
	}
	if f.kind == errNotRunning || f.kind == errShuttingDown {
		stopped := strings.TrimPrefix(f.msg, what)
		e.stoppedMsg.Store(&stopped)
	}
	return f
}

// running clears the monitor's stopped message once the table serves again
// (its Keys acquired a new lease).
func (e *snowEntry) running() {
	if e.stoppedMsg.Load() != nil {
		e.stoppedMsg.Store(nil)
	}
}

// logf logs a failure the client sees only in brief, at most one line a
// second: a database that is down fails every request.
func (srv *Server) logf(format string, args ...any) {
	now := time.Now().UnixNano()
	last := srv.lastLog.Load()
	if now-last < int64(time.Second) || !srv.lastLog.CompareAndSwap(last, now) {
		srv.suppressed.Add(1)
		return
	}
	if n := srv.suppressed.Swap(0); n > 0 {
		format += " (and %d more errors in the last second or more)"
		args = append(args, n)
	}
	srv.s.Log.Printf("idsql server: "+format, args...)
}

// Decoded is the answer of /decodeSnowflakeId. The first three fields are
// Leaf's, as strings as Leaf sends them: timestamp is the Unix milliseconds
// of the ID's tick followed by the time in parentheses.
type Decoded struct {
	Timestamp  string `json:"timestamp"`
	WorkerID   string `json:"workerId"`
	SequenceID string `json:"sequenceId"`
	// Time is the tick's start in RFC 3339 (UTC).
	Time string `json:"time"`
	// Layout names the bit layout used.
	Layout string `json:"layout"`
	// ID is the ID in decimal, as a string (JavaScript numbers lose
	// precision above 2^53).
	ID string `json:"id"`
	// Table is the table whose text form snowflakeId was given in, or the
	// table parameter; empty for decimal.
	Table string `json:"table,omitempty"`
	// Key is the ID before its table's shape, in decimal, and Shape that
	// shape, when the table's shape is a spread (tables.T.shape): the
	// parts above describe Key.
	Key   string `json:"key,omitempty"`
	Shape string `json:"shape,omitempty"`
}

// DecodedGene is the answer of /decodeId?table=T&id=N for a segment table
// whose keys carry shard or application bits (see keyset.Gene).
type DecodedGene struct {
	ID    string `json:"id"` // a string, as JavaScript numbers lose precision above 2^53
	Table string `json:"table"`
	Index int64  `json:"index"`
	Shard int    `json:"shard"`
	App   int64  `json:"app"`
}

func (srv *Server) serveDecodeGene(w http.ResponseWriter, r *http.Request) int {
	q := r.URL.Query()
	bad := func(msg string) int {
		return srv.fail(w, r, nil, failure{kind: errBadRequest, status: http.StatusBadRequest, msg: msg})
	}
	table, raw := q.Get("table"), q.Get("id")
	if table == "" {
		return bad("missing query parameter table: /decodeId takes a key of a segment table with shard or app bits apart, and needs that table's name (/decodeId?table=T&id=N); a snowflake ID decodes with /decodeSnowflakeId?snowflakeId=N")
	}
	tc, ok := srv.cfg.Tables[table]
	switch {
	case !ok:
		return bad("table " + quote(table) + " is not configured (configured: " + strings.Join(srv.cfg.TableNames(), ", ") + ")")
	case tc.Strategy != keyset.Segment || tc.Gene().Plain():
		return bad("table " + quote(table) + " is not a segment table with shard or app bits: its keys are plain numbers with nothing to take apart (a snowflake ID decodes with /decodeSnowflakeId?snowflakeId=N)")
	case raw == "":
		return bad("missing query parameter id: /decodeId?table=" + table + "&id=N")
	}
	id, from, err := srv.codecs.ParseKey(raw)
	switch {
	case errors.Is(err, keyset.ErrTextKey):
		return srv.failTextKey(w, r, err)
	case err != nil:
		return bad("invalid id " + quote(raw) + ": not a positive 64-bit decimal integer, nor a key in a table's text form")
	case from != "" && from != table:
		return bad("id " + quote(raw) + " is a key of table " + from + " (its text form), not of table " + table)
	}
	codec, err := srv.codecs.Of(table)
	if err != nil {
		return bad(err.Error())
	}
	key, err := codec.Unshape(id)
	if err != nil {
		return bad(fmt.Sprintf("id %d is not a key of table %s: %s", id, table, err))
	}
	g := tc.Gene()
	p := g.Decompose(key)
	if p.App != g.App || p.Index < 1 {
		return bad(fmt.Sprintf("id %d is not a key of table %s: app bits %d (want %d), index %d", id, table, p.App, g.App, p.Index))
	}
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	json.NewEncoder(w).Encode(DecodedGene{ID: strconv.FormatInt(id, 10), Table: table, Index: p.Index, Shard: p.Shard, App: p.App})
	return http.StatusOK
}

// failTextKey answers a decode request for a keyed text (tables.T.text.key_env)
// whose secret the server's environment lacks: 500, since the fault is the
// server's, with the error naming the variable (never a secret).
func (srv *Server) failTextKey(w http.ResponseWriter, r *http.Request, err error) int {
	return srv.fail(w, r, nil, failure{kind: errInternal, status: http.StatusInternalServerError, msg: errText(err)})
}

func (srv *Server) serveDecode(w http.ResponseWriter, r *http.Request) int {
	q := r.URL.Query()
	raw := q.Get("snowflakeId")
	bad := func(msg string) int {
		return srv.fail(w, r, nil, failure{kind: errBadRequest, status: http.StatusBadRequest, msg: msg})
	}
	if raw == "" {
		return bad("missing query parameter snowflakeId")
	}
	id, from, err := srv.codecs.ParseKey(raw)
	if errors.Is(err, keyset.ErrTextKey) {
		return srv.failTextKey(w, r, err)
	}
	if err != nil {
		return bad("invalid snowflakeId " + quote(raw) + ": not a positive 64-bit decimal integer, nor a key in a table's text form")
	}
	key, shape, err := srv.unshape(q.Get("table"), from, id)
	if err != nil {
		return bad("snowflakeId " + quote(raw) + ": " + errText(err))
	}
	if from == "" {
		from = q.Get("table")
	}
	p, err := srv.layout.Decode(key, srv.s.Now(), time.Minute)
	if err != nil {
		return bad("invalid snowflakeId " + quote(raw) + ": " + errText(err))
	}
	d := Decoded{
		Timestamp:  fmt.Sprintf("%d(%s)", p.Time.UnixMilli(), p.Time.UTC().Format("2006-01-02 15:04:05.000")),
		WorkerID:   strconv.FormatInt(p.Worker, 10),
		SequenceID: strconv.FormatInt(p.Sequence, 10),
		Time:       p.Time.UTC().Format(time.RFC3339Nano),
		Layout:     srv.layout.Name,
		ID:         strconv.FormatInt(id, 10),
		Table:      from,
	}
	if shape != "" {
		d.Key, d.Shape = strconv.FormatInt(key, 10), shape
	}
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	json.NewEncoder(w).Encode(d)
	return http.StatusOK
}

// unshape returns id, a key of table (the table parameter, or the table
// whose text form it was given in), before the table's shape, and the
// shape's name ("" for an ordered table): Codecs.UnshapeKey, with the
// parameter to add when the ID needs its table.
func (srv *Server) unshape(table, from string, id int64) (int64, string, error) {
	switch {
	case table != "" && from != "" && table != from:
		return 0, "", fmt.Errorf("a key of table %s (its text form), not of table %s", from, table)
	case table == "":
		table = from
	}
	key, shape, err := srv.codecs.UnshapeKey(table, id)
	if errors.Is(err, keyset.ErrTableNeeded) {
		err = fmt.Errorf("%w: add &table=T", err)
	}
	return key, shape, err
}
