package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

// Defaults applied to zero fields of Settings.
const (
	DefaultMaxBatch        = 10_000
	DefaultShutdownTimeout = 10 * time.Second
	DefaultRefresh         = 5 * time.Second
	// DefaultSnowflakeTable is the table whose generator serves
	// /api/snowflake/get/{key} for keys that name no snowflake table.
	DefaultSnowflakeTable = "leaf_snowflake"
	// MaxKeyLen is the longest segment key the ID endpoints accept.
	MaxKeyLen = 128
	// startRetry is how long a snowflake table whose generator failed to
	// start answers that error before the next request tries again.
	startRetry = time.Second
)

// Settings configure a Server. Zero fields mean the defaults.
type Settings struct {
	// Keys serves the snowflake endpoint: each snowflake table of its
	// configuration is a key. Required (it also supplies the namespace and
	// the layout /decodeSnowflakeId decodes with).
	Keys *keyset.Keys
	// SnowflakeTable is the snowflake table whose generator answers
	// /api/snowflake/get/{key} for every key that names no snowflake table
	// of the configuration, as Leaf's one snowflake generator answers any
	// key (default DefaultSnowflakeTable, "leaf_snowflake"). It must be a
	// snowflake table of Keys' configuration: WithSnowflakeTable adds it
	// before the Keys are made. Naming an application table (say orders)
	// shares that table's generator and worker lease instead of taking one
	// more; IDs stay unique either way, and lookup names the table.
	SnowflakeTable string
	// SnowflakeOff, when not empty, turns off the table for keys that name
	// no snowflake table (SnowflakeTable is then ignored): the snowflake
	// endpoint answers such keys 404 with this text, which should say how
	// to turn it on (idsql serve sets it when the configuration has no
	// snowflake table and its holder has no worker ID for one).
	SnowflakeOff string
	// Segments serves the segment endpoint: every key of its store.
	// Nil answers the segment endpoint with 503.
	Segments *segment.Generator
	// Registry, when set, lists the namespace's worker leases on the
	// monitor page.
	Registry *registry.Registry
	// Tokens, when not empty, are the accepted API tokens. Every endpoint
	// but /healthz then needs one, in an "Authorization: Bearer TOKEN"
	// header and nowhere else: a token in the URL would end up in access
	// logs and browser histories. Tokens are compared in constant time.
	Tokens []string
	// MaxBatch caps n of the batch endpoints (default 10,000).
	MaxBatch int
	// ShutdownTimeout bounds how long Serve waits for in-flight requests
	// after its context ends (default 10 s).
	ShutdownTimeout time.Duration
	// Refresh is the monitor page's auto-refresh interval (default 5 s).
	Refresh time.Duration
	// Store, when set, is the TimedStore the Segments generator allocates
	// through; /metrics then shows how long segment refills take.
	Store *TimedStore
	// Log receives errors the clients do not see in full; nil means the
	// standard logger.
	Log *log.Logger
	// Now is the clock for the monitor page, decoding, error bodies and
	// the pause between attempts to start a generator that failed to
	// start; nil means time.Now.
	Now func() time.Time
}

// Server is the HTTP ID server. It is an http.Handler; Serve runs it on a
// listener with graceful shutdown.
type Server struct {
	s       Settings
	cfg     *keyset.Config
	codecs  *keyset.Codecs // the keys' table codecs: decode reads IDs with them
	layout  snowflake.Layout
	started time.Time
	epoch   time.Time // for mono; carries a monotonic reading

	snow      map[string]*snowEntry // configured snowflake tables; read-only
	snowNames []string
	// uuids are the configured uuid7 tables (read-only), whose keys
	// /api/uuid7/get/ writes with uuidKeys as UUIDs.
	uuids    map[string]*snowEntry
	uuidKeys *keyform.UUIDKeys
	anyKey   *snowEntry // serves keys that name no snowflake table
	// viaKeys maps the segment keys of tables whose keys are more than the
	// key's numbers (max_id, shard or app bits, a Redis buffer, a spread
	// shape) to their table: those are
	// served through Keys, which applies the table's rules.
	viaKeys map[string]string

	segMu sync.Mutex                           // serializes writers of segs
	segs  atomic.Pointer[map[string]*segEntry] // copy on write

	tokens   [][sha256.Size]byte
	sessions [][sha256.Size]byte // the monitor page's session cookie value per token (session.go)
	m        *metrics
	closing  atomic.Bool // set when Serve starts shutting down

	lastLog    atomic.Int64  // Unix nanoseconds of the last failure logged
	suppressed atomic.Uint64 // failures not logged since
}

// stats are the per-key counters shown on the monitor page.
type stats struct {
	served  atomic.Uint64 // IDs handed out
	errors  atomic.Uint64 // failed requests
	lastErr atomic.Pointer[errRecord]
}

type errRecord struct {
	Msg string
	At  time.Time
}

type segEntry struct {
	key *segment.Key
	stats
}

type snowEntry struct {
	table string
	src   atomic.Pointer[snowSource]
	mu    sync.Mutex // serializes starts
	// startErr is the last failed start and when it failed; requests
	// answer it for startRetry before trying again.
	startErr      error
	startFailedAt time.Time
	// stoppedMsg is set once a request found the generator stopped (its
	// worker lease lost or released).
	stoppedMsg atomic.Pointer[string]
	stats
}

// snowSource is a snowflake table's key source, the one its Keys owns (and
// renews after a lease ends).
type snowSource struct {
	src   keyset.KeySource
	table *keyset.SnowflakeTable // for the monitor and metrics; nil for a source of another kind
}

// New returns a Server for s. The Server owns s.Keys and s.Segments from
// then on: Close, and Serve when it ends, close them.
func New(s Settings) (*Server, error) {
	if s.Keys == nil {
		return nil, errors.New("server: Settings.Keys is required")
	}
	if s.MaxBatch < 0 || s.ShutdownTimeout < 0 || s.Refresh < 0 {
		return nil, errors.New("server: Settings.MaxBatch, ShutdownTimeout and Refresh must not be negative")
	}
	if s.MaxBatch == 0 {
		s.MaxBatch = DefaultMaxBatch
	}
	if s.ShutdownTimeout == 0 {
		s.ShutdownTimeout = DefaultShutdownTimeout
	}
	if s.Refresh == 0 {
		s.Refresh = DefaultRefresh
	}
	if s.Log == nil {
		s.Log = log.Default()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	cfg := s.Keys.Config()
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if s.SnowflakeTable == "" {
		s.SnowflakeTable = DefaultSnowflakeTable
	}
	srv := &Server{s: s, cfg: cfg, codecs: s.Keys.Codecs(), layout: layout, started: s.Now(), epoch: time.Now(), snow: map[string]*snowEntry{},
		viaKeys: map[string]string{}}
	for _, t := range cfg.TableNames() {
		switch tc := cfg.Tables[t]; {
		case tc.Strategy == keyset.Snowflake:
			srv.snow[t] = &snowEntry{table: t}
			srv.snowNames = append(srv.snowNames, t)
		case tc.Strategy == keyset.UUID7:
			if srv.uuids == nil {
				srv.uuids = map[string]*snowEntry{}
			}
			srv.uuids[t] = &snowEntry{table: t}
			if srv.uuidKeys, err = cfg.UUIDKeys(t); err != nil {
				return nil, fmt.Errorf("server: %w", err)
			}
		case tc.MaxID > 0 || !tc.Gene().Plain() || tc.Buffer == keyset.BufferRedis || tc.Spread():
			srv.viaKeys[cfg.SegmentKey(t)] = t
		}
	}
	if s.SnowflakeOff != "" {
		srv.anyKey = nil
	} else if srv.anyKey = srv.snow[s.SnowflakeTable]; srv.anyKey == nil {
		return nil, fmt.Errorf("server: Settings.SnowflakeTable %q is not a snowflake table of the configuration "+
			"(add it with server.WithSnowflakeTable before making the Keys, or name one of: %s)",
			s.SnowflakeTable, strings.Join(srv.snowNames, ", "))
	}
	for i, tok := range s.Tokens {
		if tok == "" {
			return nil, fmt.Errorf("server: Settings.Tokens[%d] is empty", i)
		}
		srv.tokens = append(srv.tokens, sha256.Sum256([]byte(tok)))
	}
	srv.sessions = newSessions(srv.tokens)
	empty := map[string]*segEntry{}
	srv.segs.Store(&empty)
	srv.m = newMetrics(srv)
	return srv, nil
}

// WithSnowflakeTable returns cfg with table as a snowflake table, for
// Settings.SnowflakeTable: cfg itself when it configures table as a
// snowflake table already, else a copy with the table added (cfg is not
// modified). Make the Keys from the result. A table of that name with
// another strategy is an error.
//
// Under the local holder the new table needs a worker ID of its own in
// holder.workers ("leaf_snowflake@INSTANCE": N), like any other table.
func WithSnowflakeTable(cfg *keyset.Config, table string) (*keyset.Config, error) {
	if table == "" {
		table = DefaultSnowflakeTable
	}
	if tc, ok := cfg.Tables[table]; ok {
		if tc.Strategy != keyset.Snowflake {
			return nil, fmt.Errorf("server: table %s serves keys that name no snowflake table, but it is a %s table", table, tc.Strategy)
		}
		return cfg, nil
	}
	if !keyset.ValidTableName(table) {
		return nil, fmt.Errorf("server: snowflake table %q is not a valid table name", table)
	}
	c := *cfg
	c.Tables = maps.Clone(cfg.Tables)
	if c.Tables == nil {
		c.Tables = map[string]keyset.TableConfig{}
	}
	c.Tables[table] = keyset.TableConfig{Strategy: keyset.Snowflake}
	return &c, nil
}

// Warm starts every snowflake table's generator (acquiring its worker
// lease) and loads every configured segment table's key, so the first
// requests do not wait and configuration problems show at start-up. It
// hands out no key: the first request for a segment key answers the first
// key of the range loaded.
func (srv *Server) Warm(ctx context.Context) error {
	var errs []error
	for _, t := range srv.snowNames {
		e := srv.snow[t]
		if _, err := srv.snowflakeSource(ctx, e); err != nil {
			if e == srv.anyKey {
				err = fmt.Errorf("server: snowflake table %s answers keys that name no snowflake table "+
					"(Settings.SnowflakeTable, idsql serve --snowflake-table; name an existing table to share its generator): %w", t, err)
			}
			errs = append(errs, err)
		}
	}
	if srv.s.Segments != nil {
		for _, t := range srv.cfg.TableNames() {
			if tc := srv.cfg.Tables[t]; tc.Strategy != keyset.Segment || tc.Gene().ShardBits > 0 {
				continue // a sharded table's keys are per shard (key#shard), drawn on insert
			}
			var err error
			if _, viaKeys := srv.viaKeys[srv.cfg.SegmentKey(t)]; viaKeys {
				_, err = srv.s.Keys.Source(ctx, t) // served through Keys
			} else {
				var e *segEntry
				e, err = srv.segmentEntry(ctx, srv.cfg.SegmentKey(t))
				if err == nil {
					err = e.key.Warm(ctx) // loads the first segment, drawing no key
				}
			}
			switch {
			case errors.Is(err, segment.ErrUnknownKey):
				errs = append(errs, fmt.Errorf("server: table %s: its segment key %q has no row in idsql_alloc: run `idsql migrate --config idsql.yaml --dsn ...` "+
					"(or idsql serve --migrate, or idsql.Migrate) once after adding the table to the configuration: %w", t, srv.cfg.SegmentKey(t), err))
			case err != nil:
				errs = append(errs, fmt.Errorf("server: segment key of table %s: %w", t, err))
			}
		}
	}
	return errors.Join(errs...)
}

// segmentEntry returns the entry of a segment key, asking the generator for
// keys not seen yet (which re-reads the key list at most once a second).
func (srv *Server) segmentEntry(ctx context.Context, name string) (*segEntry, error) {
	if e := (*srv.segs.Load())[name]; e != nil {
		return e, nil
	}
	k, err := srv.s.Segments.Key(ctx, name)
	if err != nil {
		return nil, err
	}
	srv.segMu.Lock()
	defer srv.segMu.Unlock()
	old := *srv.segs.Load()
	if e := old[name]; e != nil {
		return e, nil
	}
	m := make(map[string]*segEntry, len(old)+1)
	for n, e := range old {
		m[n] = e
	}
	e := &segEntry{key: k}
	m[k.Name()] = e
	srv.segs.Store(&m)
	return e, nil
}

// snowflakeSource returns the table's key source, starting it on first use.
// After a failed start it answers that error for startRetry before trying
// again, so a holder that is down is not asked once per request.
func (srv *Server) snowflakeSource(ctx context.Context, e *snowEntry) (*snowSource, error) {
	if src := e.src.Load(); src != nil {
		return src, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if src := e.src.Load(); src != nil {
		return src, nil
	}
	if e.startErr != nil && srv.s.Now().Sub(e.startFailedAt) < startRetry {
		return nil, e.startErr
	}
	ks, err := srv.s.Keys.Source(ctx, e.table)
	if err != nil {
		err = &startError{err}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			e.startErr, e.startFailedAt = err, srv.s.Now()
		}
		return nil, err
	}
	e.startErr = nil
	src := &snowSource{src: ks}
	src.table, _ = ks.(*keyset.SnowflakeTable)
	e.src.Store(src)
	return src, nil
}

// appendIDs appends n IDs of the source to dst.
func (src *snowSource) appendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	return src.src.AppendIDs(ctx, dst, n)
}

func (src *snowSource) next(ctx context.Context) (int64, error) { return src.src.NextID(ctx) }

// mono reads the monotonic clock alone, for the latency histograms:
// time.Since of a reading with a monotonic part skips the wall clock,
// which time.Now reads too, at half the cost on a VM's clock.
func (srv *Server) mono() time.Duration { return time.Since(srv.epoch) }

// startError is a snowflake generator that did not start: Leaf's
// "not initialized" answer.
type startError struct{ err error }

func (e *startError) Error() string { return e.err.Error() }
func (e *startError) Unwrap() error { return e.err }

// authorized reports whether r carries one of the configured tokens (or
// none are configured) in its Authorization header, scheme Bearer (the
// scheme matched without regard to case, RFC 9110). Every configured token
// is compared, in constant time, whatever matches.
func (srv *Server) authorized(r *http.Request) bool {
	if len(srv.tokens) == 0 {
		return true
	}
	h := r.Header.Get("Authorization")
	if len(h) <= 7 || !strings.EqualFold(h[:7], "bearer ") {
		return false
	}
	tok := strings.TrimLeft(h[7:], " ")
	if tok == "" {
		return false
	}
	_, ok := srv.tokenMatches(tok)
	return ok
}

// Serve serves HTTP on ln until ctx ends. Then it stops accepting, lets
// in-flight requests finish (up to Settings.ShutdownTimeout), and closes
// the server: worker leases are released and the segment generator stops.
func (srv *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           srv,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          srv.s.Log,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-errc:
	case <-ctx.Done():
		srv.closing.Store(true)
		sctx, cancel := context.WithTimeout(context.Background(), srv.s.ShutdownTimeout)
		err = hs.Shutdown(sctx)
		cancel()
		if serr := <-errc; !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return errors.Join(err, srv.Close())
}

// Close releases the worker leases of the snowflake tables (Keys.Close) and
// stops the segment generator. IDs are no longer handed out after it.
func (srv *Server) Close() error {
	srv.closing.Store(true)
	var errs []error
	errs = append(errs, srv.s.Keys.Close())
	if srv.s.Segments != nil {
		errs = append(errs, srv.s.Segments.Close())
	}
	return errors.Join(errs...)
}

// segmentEntries returns the entries of the segment keys served so far, sorted.
func (srv *Server) segmentEntries() []*segEntry {
	m := *srv.segs.Load()
	out := make([]*segEntry, 0, len(m))
	for _, e := range m {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key.Name() < out[j].key.Name() })
	return out
}
