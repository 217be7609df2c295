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
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

const (
	segmentPrefix   = "/api/segment/get/"
	snowflakePrefix = "/api/snowflake/get/"
)

// Header values shared by every response; net/http never modifies them.
var (
	textPlain = []string{"text/plain; charset=utf-8"}
	jsonType  = []string{"application/json"}
	noSniff   = []string{"nosniff"}
	noStore   = []string{"no-store"}
)

// mode is the generator kind an ID endpoint serves.
type mode int

const (
	modeSegment mode = iota
	modeSnowflake
	numModes
)

var modeNames = [numModes]string{"segment", "snowflake"}

// errKind classifies failed requests for /metrics.
type errKind int

const (
	errBadKey errKind = iota
	errBadCount
	errUnknownKey
	errNotReady
	errClockBackwards
	errStopped
	errExhausted
	errCanceled
	errInternal
	errUnauthorized
	errNotFound
	errMethod
	errBadRequest
	numErrKinds
)

var errKindNames = [numErrKinds]string{
	"bad_key", "bad_count", "unknown_key", "not_ready", "clock_backwards", "stopped",
	"exhausted", "canceled", "internal", "unauthorized", "not_found", "method", "bad_request",
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
	p := r.URL.Path
	if p == "/healthz" {
		srv.serveHealth(w)
		return
	}
	if !srv.authorized(r) {
		w.Header()["Www-Authenticate"] = []string{`Bearer realm="idsql"`}
		srv.fail(w, nil, errUnauthorized, http.StatusUnauthorized, "missing or invalid token (send Authorization: Bearer TOKEN)")
		return
	}
	switch {
	case strings.HasPrefix(p, segmentPrefix):
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			srv.methodNotAllowed(w, "GET, POST")
			return
		}
		srv.serveIDs(w, r, modeSegment, p[len(segmentPrefix):])
	case strings.HasPrefix(p, snowflakePrefix):
		if r.Method != http.MethodGet && r.Method != http.MethodPost {
			srv.methodNotAllowed(w, "GET, POST")
			return
		}
		srv.serveIDs(w, r, modeSnowflake, p[len(snowflakePrefix):])
	case p == "/decodeSnowflakeId":
		srv.serveDecode(w, r)
	case p == "/metrics":
		if !getOrHead(w, r, srv) {
			return
		}
		srv.serveMetrics(w, r)
	case p == "/" || p == "/monitor" || p == "/cache" || p == "/db":
		if !getOrHead(w, r, srv) {
			return
		}
		srv.serveMonitor(w, r)
	default:
		srv.fail(w, nil, errNotFound, http.StatusNotFound, "no such endpoint: "+quote(p))
	}
}

func getOrHead(w http.ResponseWriter, r *http.Request, srv *Server) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	srv.methodNotAllowed(w, "GET, HEAD")
	return false
}

func (srv *Server) methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header()["Allow"] = []string{allow}
	srv.fail(w, nil, errMethod, http.StatusMethodNotAllowed, "method not allowed (use "+allow+")")
}

func (srv *Server) serveHealth(w http.ResponseWriter) {
	h := w.Header()
	h["Content-Type"] = textPlain
	h["Cache-Control"] = noStore
	if srv.closing.Load() {
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, "shutting down\n")
		return
	}
	io.WriteString(w, "ok\n")
}

// serveIDs answers /api/{mode}/get/{key} and /api/{mode}/get/{key}/{n}.
func (srv *Server) serveIDs(w http.ResponseWriter, r *http.Request, md mode, rest string) {
	key, count, batch := rest, "", false
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		key, count, batch = rest[:i], rest[i+1:], true
	}
	if msg := checkKey(key); msg != "" {
		srv.fail(w, nil, errBadKey, http.StatusBadRequest, msg)
		return
	}
	n := 1
	if batch {
		var ok bool
		if n, ok = parseCount(count, srv.s.MaxBatch); !ok {
			srv.fail(w, nil, errBadCount, http.StatusBadRequest,
				"invalid count "+quote(count)+": want a whole number from 1 to "+strconv.Itoa(srv.s.MaxBatch))
			return
		}
	}
	srv.m.requests[md].Add(1)
	ctx := r.Context()
	if md == modeSegment {
		srv.serveSegment(ctx, w, key, n, batch)
		return
	}
	srv.serveSnowflake(ctx, w, key, n, batch)
}

func (srv *Server) serveSegment(ctx context.Context, w http.ResponseWriter, key string, n int, batch bool) {
	if srv.s.Segments == nil {
		srv.fail(w, nil, errUnknownKey, http.StatusServiceUnavailable, "segment mode is not enabled on this server (no database)")
		return
	}
	e, err := srv.segmentEntry(ctx, key)
	if err != nil {
		srv.failErr(w, nil, "segment", key, err)
		return
	}
	if !batch {
		id, err := e.key.Next(ctx)
		if err != nil {
			srv.failErr(w, &e.stats, "segment", key, err)
			return
		}
		e.served.Add(1)
		writeID(w, id)
		return
	}
	ids, err := e.key.NextIDs(ctx, n)
	if err != nil {
		srv.failErr(w, &e.stats, "segment", key, err)
		return
	}
	e.served.Add(uint64(len(ids)))
	writeIDs(w, ids)
}

func (srv *Server) serveSnowflake(ctx context.Context, w http.ResponseWriter, key string, n int, batch bool) {
	e := srv.snow[key]
	if e == nil {
		srv.fail(w, nil, errUnknownKey, http.StatusNotFound, "unknown snowflake key "+quote(key)+
			" (snowflake tables: "+strings.Join(srv.snowNames, ", ")+")")
		return
	}
	src, err := srv.snowflakeSource(ctx, e)
	if err != nil {
		srv.failSnowflake(w, e, key, err)
		return
	}
	if !batch {
		id, err := src.next(ctx)
		if err != nil {
			srv.failSnowflake(w, e, key, err)
			return
		}
		e.served.Add(1)
		e.running()
		writeID(w, id)
		return
	}
	p := idsPool.Get().(*[]int64)
	ids, err := src.appendIDs(ctx, (*p)[:0], n)
	if err != nil {
		// IDs taken before the error are valid but dropped: gaps are allowed.
		putIDs(p, ids)
		srv.failSnowflake(w, e, key, err)
		return
	}
	e.served.Add(uint64(len(ids)))
	e.running()
	writeIDs(w, ids)
	putIDs(p, ids)
}

func putIDs(p *[]int64, ids []int64) {
	if cap(ids) <= maxPooled/8 {
		*p = ids[:0]
		idsPool.Put(p)
	}
}

// writeID writes one ID as decimal text, Leaf's answer.
func writeID(w http.ResponseWriter, id int64) {
	p := bufPool.Get().(*[]byte)
	b := strconv.AppendInt((*p)[:0], id, 10)
	w.Header()["Content-Type"] = textPlain
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

// checkKey returns why key is not acceptable, or "".
func checkKey(key string) string {
	if key == "" {
		return "invalid key: empty"
	}
	if len(key) > MaxKeyLen {
		return "invalid key: longer than " + strconv.Itoa(MaxKeyLen) + " bytes"
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == ':' {
			continue
		}
		return "invalid key " + quote(key) + ": only letters, digits and _ - . : are allowed"
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

// quote quotes s for an error message, shortening what a client may have
// made arbitrarily long.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return strconv.Quote(s)
}

// fail answers a short text error and counts it.
func (srv *Server) fail(w http.ResponseWriter, st *stats, kind errKind, status int, msg string) {
	srv.m.errors[kind].Add(1)
	if st != nil {
		st.errors.Add(1)
		st.lastErr.Store(&errRecord{Msg: msg, At: srv.s.Now()})
	}
	h := w.Header()
	h["Content-Type"] = textPlain
	h["X-Content-Type-Options"] = noSniff
	h["Cache-Control"] = noStore
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

// failErr maps a generator error to a status and a message naming the key.
func (srv *Server) failErr(w http.ResponseWriter, st *stats, md, key string, err error) {
	kind, status, what := classify(err)
	msg := md + " key " + quote(key) + ": " + what
	if kind == errUnknownKey {
		msg = "unknown " + md + " key " + quote(key)
	}
	if kind == errInternal || kind == errExhausted || (kind == errStopped && !srv.closing.Load()) {
		srv.s.Log.Printf("idsql server: %s key %q: %v", md, key, err)
	}
	if kind == errClockBackwards {
		var cb *snowflake.ClockBackwardError
		if errors.As(err, &cb) {
			msg += " (clock " + cb.Behind.String() + " behind, waits at most " + cb.Max.String() + ")"
		}
	}
	srv.fail(w, st, kind, status, msg)
}

// failSnowflake is failErr for a snowflake table, remembering for the
// monitor page that its generator stopped.
func (srv *Server) failSnowflake(w http.ResponseWriter, e *snowEntry, key string, err error) {
	if kind, _, what := classify(err); kind == errStopped {
		e.stoppedMsg.Store(&what)
	}
	srv.failErr(w, &e.stats, "snowflake", key, err)
}

// running clears the monitor's stopped message once the table serves again
// (its Keys acquired a new lease).
func (e *snowEntry) running() {
	if e.stoppedMsg.Load() != nil {
		e.stoppedMsg.Store(nil)
	}
}

// classify maps an error of the generators to its kind, HTTP status and a
// short description.
func classify(err error) (errKind, int, string) {
	var behind *snowflake.ClockBehindError
	switch {
	case errors.Is(err, segment.ErrUnknownKey), errors.Is(err, idsql.ErrUnknownTable):
		return errUnknownKey, http.StatusNotFound, "unknown key"
	case errors.Is(err, segment.ErrTimeout):
		return errNotReady, http.StatusServiceUnavailable, "segments not ready (no range arrived in time)"
	case errors.As(err, &behind):
		return errClockBackwards, http.StatusServiceUnavailable, "clock behind the worker's persisted horizon"
	case errors.Is(err, snowflake.ErrClockBackwards):
		return errClockBackwards, http.StatusServiceUnavailable, "clock moved backwards"
	case errors.Is(err, segment.ErrClosed), errors.Is(err, idsql.ErrClosed), errors.Is(err, snowflake.ErrClosed),
		errors.Is(err, holder.ErrReleased):
		return errStopped, http.StatusServiceUnavailable, "shutting down"
	case errors.Is(err, snowflake.ErrStopped), errors.Is(err, holder.ErrLeaseLost):
		return errStopped, http.StatusServiceUnavailable, "worker lease lost, generator stopped"
	case errors.Is(err, segment.ErrExhausted), errors.Is(err, snowflake.ErrExhausted):
		return errExhausted, http.StatusInternalServerError, "ID space exhausted"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return errCanceled, http.StatusServiceUnavailable, "request canceled or timed out"
	}
	return errInternal, http.StatusInternalServerError, "internal error (details in the server log)"
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
}

func (srv *Server) serveDecode(w http.ResponseWriter, r *http.Request) {
	if !getOrHead(w, r, srv) {
		return
	}
	q := r.URL.Query()
	raw := q.Get("snowflakeId")
	if raw == "" {
		srv.fail(w, nil, errBadRequest, http.StatusBadRequest, "missing query parameter snowflakeId")
		return
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		srv.fail(w, nil, errBadRequest, http.StatusBadRequest, "invalid snowflakeId "+quote(raw)+": not a 64-bit decimal integer")
		return
	}
	p, err := srv.layout.Decode(id, srv.s.Now(), time.Minute)
	if err != nil {
		srv.fail(w, nil, errBadRequest, http.StatusBadRequest, "invalid snowflakeId "+quote(raw)+": "+err.Error())
		return
	}
	d := Decoded{
		Timestamp:  fmt.Sprintf("%d(%s)", p.Time.UnixMilli(), p.Time.UTC().Format("2006-01-02 15:04:05.000")),
		WorkerID:   strconv.FormatInt(p.Worker, 10),
		SequenceID: strconv.FormatInt(p.Sequence, 10),
		Time:       p.Time.UTC().Format(time.RFC3339Nano),
		Layout:     srv.layout.Name,
	}
	h := w.Header()
	h["Content-Type"] = jsonType
	h["Cache-Control"] = noStore
	json.NewEncoder(w).Encode(d)
}
