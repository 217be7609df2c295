package keyset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrUnknownTable is wrapped by errors about a table the configuration does
// not name.
var ErrUnknownTable = errors.New("idsql: table not configured")

// ErrClosed is returned by Keys after Close.
var ErrClosed = errors.New("idsql: keys closed")

// MaxBatch is the most keys one NextIDs or AppendIDs call returns; larger
// requests are refused (ask in several calls). It is also the HTTP
// server's default batch limit.
const MaxBatch = engine.MaxBatch

// ErrBatch is wrapped by the error refusing a request for more than
// MaxBatch keys at once (NextIDs, AppendIDs, an INSERT whose rows take
// more keys, an HTTP batch).
var ErrBatch = engine.ErrBatch

// A KeySource issues the keys of one table. Keys makes them (Source); a
// caller that issues keys of one table often keeps its source, saving the
// lookup by name.
//
// It has two methods: NextID(ctx) (int64, error), and AppendIDs(ctx, dst,
// n), which appends n keys to dst, 0 <= n <= MaxBatch (a snowflake table
// reserves a tick's sequences at once). It is the type the statement
// engine draws keys from.
type KeySource = engine.Source

// KeysOptions supply what a Keys needs beyond the Config. Zero fields mean
// the defaults.
type KeysOptions struct {
	// DB is the database for segment allocations and the worker registry.
	// It must not be an idsql-wrapped handle. Needed by segment tables and
	// the postgres holder.
	DB *sql.DB
	// Holder grants snowflake worker IDs; nil means the holder the Config
	// describes.
	Holder holder.Holder
	// Registry records every worker lease before it is used, for Lookup.
	// Nil means leases are not recorded (Connector sets it for PostgreSQL).
	Registry *registry.Registry
	// SegmentStore allocates segment ranges; nil means the store
	// registered for DB's dialect (see StoresFor), on DB.
	SegmentStore segment.Store
	// Segment tunes the segment generator.
	Segment segment.Settings
	// Instance identifies this process to holders; the zero value means
	// holder.LocalInstance(Config.Holder.Port).
	Instance holder.Instance
	// Clock is the snowflake generators' clock, and the clock of the holders
	// Keys builds from the Config; nil means the system clock. Its Now must
	// carry Go's monotonic reading (time.Now().Add(d) does): lease
	// deadlines are readings of it.
	Clock snowflake.Clock
	// Logger receives a line whenever a table's worker lease ends and a new
	// one is acquired, and (through the registry idsql.Open and pgxid
	// build when none is given) whenever a lease's heartbeat is still
	// running a heartbeat after it was sent, and the holder's client
	// events (the zookeeper kind's connections made and lost, sessions
	// granted and expired); nil means slog.Default().
	Logger *slog.Logger
}

// Now returns the Now of the configured clock (time.Now without one).
func (o KeysOptions) Now() func() time.Time {
	if o.Clock == nil {
		return time.Now
	}
	return o.Clock.Now
}

// Keys issues primary keys for the tables of one Config: a snowflake
// generator per snowflake table, each under its own worker lease, and one
// segment generator serving every segment table. A table's generator is
// started on first use. Keys is safe for concurrent use; Close releases the
// leases.
type Keys struct {
	cfg    *Config
	codecs *Codecs // the tables' codecs, which shape the keys issued
	layout snowflake.Layout
	opts   KeysOptions

	mu      sync.Mutex
	sources sync.Map      // table name -> KeySource
	leases  holder.Holder // grants snowflake worker leases; see Keys.holder
	seg     *segment.Generator
	closers []func(context.Context) error
	closed  bool

	workers map[string]int64     // the local holder's map: holder.workers, or the pod ordinal's
	limits  map[string]*keyLimit // tables with a max_id; fixed at NewKeys
}

// NewKeys returns the key set for cfg. It starts nothing yet: leases are
// acquired and segments loaded on each table's first key.
func NewKeys(cfg *Config, opts KeysOptions) (*Keys, error) {
	if err := cfg.Validate(time.Now()); err != nil {
		return nil, err
	}
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return nil, err
	}
	if opts.Instance == (holder.Instance{}) {
		opts.Instance = holder.LocalInstance(cfg.Holder.Port)
		switch cfg.Holder.Instance {
		case "":
		case "hostname", InstanceOrdinal:
			opts.Instance.ID = opts.Instance.Host
		default:
			opts.Instance.ID = cfg.Holder.Instance
		}
	}
	var workers map[string]int64
	if opts.Holder == nil {
		if workers, err = localWorkers(cfg, layout, opts.Instance); err != nil {
			return nil, err
		}
		if err := checkLocalWorkers(cfg, workers, opts.Instance); err != nil {
			return nil, err
		}
		if err := cfg.Holder.Kind.checkWorkerTable(opts.Registry); err != nil {
			return nil, err
		}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	codecs, err := cfg.Codecs()
	if err != nil {
		return nil, err
	}
	k := &Keys{cfg: cfg, codecs: codecs, layout: layout, opts: opts, workers: workers, limits: map[string]*keyLimit{}}
	for name, tc := range cfg.Tables {
		if l := newKeyLimit(name, tc.MaxID, codecs.of[name], opts.Logger); l != nil {
			k.limits[name] = l
		}
	}
	return k, nil
}

// Config returns the configuration the keys serve.
func (k *Keys) Config() *Config { return k.cfg }

// Codecs returns the codecs of the tables the keys serve: those that shape
// the keys they issue.
func (k *Keys) Codecs() *Codecs { return k.codecs }

// NextID returns a new key for table (a name as configured).
func (k *Keys) NextID(ctx context.Context, table string) (int64, error) {
	ids, err := k.AppendIDs(ctx, make([]int64, 0, 1), table, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// NextIDs returns n new keys for table, 0 <= n <= MaxBatch.
func (k *Keys) NextIDs(ctx context.Context, table string, n int) ([]int64, error) {
	if err := checkBatch(table, n); err != nil {
		return nil, err
	}
	return k.AppendIDs(ctx, make([]int64, 0, n), table, n)
}

// checkBatch refuses a batch size outside 0..MaxBatch.
func checkBatch(table string, n int) error {
	if n < 0 || n > MaxBatch {
		return batchError(table, n)
	}
	return nil
}

// batchError is checkBatch's error, out of line so that checkBatch inlines.
func batchError(table string, n int) error { return engine.BatchError(table, n) }

// AppendIDs appends n new keys for table to dst, 0 <= n <= MaxBatch. When
// a snowflake table's worker lease ended, the table releases it and acquires
// a new one (see SnowflakeTable) and the call goes on.
func (k *Keys) AppendIDs(ctx context.Context, dst []int64, table string, n int) ([]int64, error) {
	if err := checkBatch(table, n); err != nil {
		return dst, err
	}
	src, err := k.Source(ctx, table)
	if err != nil {
		return dst, err
	}
	return src.AppendIDs(ctx, dst, n)
}

// Source returns table's key source, starting it on first use: a
// *SnowflakeTable for a snowflake table, a *GeneTable for a segment table
// with shard or app bits. Keys owns it: the wrapper, the
// HTTP server and callers all share this one source per table.
func (k *Keys) Source(ctx context.Context, table string) (KeySource, error) {
	if src, ok := k.sources.Load(table); ok {
		return src.(KeySource), nil
	}
	return k.start(ctx, table)
}

func (k *Keys) start(ctx context.Context, table string) (KeySource, error) {
	tc, ok := k.cfg.Tables[table]
	if !ok {
		return nil, fmt.Errorf("%w: %q (configured: %s)", ErrUnknownTable, table, strings.Join(k.cfg.TableNames(), ", "))
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil, ErrClosed
	}
	if src, ok := k.sources.Load(table); ok {
		return src.(KeySource), nil
	}
	if err := k.checkShape(ctx, table); err != nil {
		return nil, err
	}
	var src KeySource
	var err error
	switch tc.Strategy {
	case Snowflake, UUID7:
		src, err = k.startSnowflake(ctx, table, tc)
	case Segment:
		switch {
		case !tc.Gene().Plain():
			src, err = k.startGene(ctx, table, tc)
		case tc.Buffer == BufferRedis:
			src, err = k.startRedisQueue(ctx, table, tc)
		default:
			src, err = k.startSegment(ctx, table, tc)
		}
	}
	if err != nil {
		if tc.Strategy == Segment && errors.Is(err, segment.ErrUnknownKey) {
			return nil, fmt.Errorf("%w: table %s: its segment key %q has no row in the allocation table (idsql_alloc) yet: %s after adding the table to the configuration: %w",
				ErrNotMigrated, table, k.cfg.SegmentKey(table), migrateFix, err)
		}
		if nm := notMigrated("start key generator for table "+table, err); nm != nil {
			return nil, nm
		}
		return nil, fmt.Errorf("idsql: start key generator for table %s: %w", table, err)
	}
	k.sources.Store(table, src)
	return src, nil
}

func (k *Keys) startSnowflake(ctx context.Context, table string, tc TableConfig) (KeySource, error) {
	if k.leases == nil {
		h, err := k.holder()
		if err != nil {
			return nil, err
		}
		k.leases = h
	}
	t := &SnowflakeTable{k: k, table: table, cached: tc.Cached, lim: k.limits[table]}
	if _, err := t.renew(ctx, nil); err != nil {
		return nil, err
	}
	k.closers = append(k.closers, t.close)
	return t, nil
}

// SnowflakeTable is the key source of one snowflake table: a generator
// under a worker lease. Keys owns it. When the lease ends (lost, or its
// deadline passed) the table stops the generator, releases the lease and
// acquires a new one, never holding two at once; after a failed attempt it
// waits before trying again (up to MaxRenewBackoff, see there), answering
// the error meanwhile.
type SnowflakeTable struct {
	k      *Keys
	table  string
	cached bool
	lim    *keyLimit   // max_id, or nil
	src    limitSource // its use of max_id

	cur atomic.Pointer[leasedGenerator]

	mu       sync.Mutex // serializes renewals
	closed   bool
	failedAt time.Time
	backoff  time.Duration
	lastErr  error
}

// MaxRenewBackoff bounds how long a SnowflakeTable waits between attempts
// to acquire a new lease; a holder.session_timeout shorter than twice it
// lowers the bound to half the timeout, so that a process whose link to
// its holder healed issues again within about one lease period.
const MaxRenewBackoff = 5 * time.Second

// maxRenewBackoff is MaxRenewBackoff, or half the configured session
// timeout when that is shorter.
func (k *Keys) maxRenewBackoff() time.Duration {
	if st := k.cfg.Holder.SessionTimeout; st > 0 {
		return min(MaxRenewBackoff, st/2)
	}
	return MaxRenewBackoff
}

// leasedGenerator is a generator and the lease it issues under.
type leasedGenerator struct {
	lease  holder.Lease
	gen    *snowflake.Generator
	cached *snowflake.Cached // nil unless the table is cached
}

func (g *leasedGenerator) appendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	if g.cached == nil {
		return g.gen.AppendIDs(ctx, dst, n)
	}
	for range n {
		id, err := g.cached.NextID(ctx)
		if err != nil {
			return dst, err
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// stop stops the generator and releases the lease with its final tick.
func (g *leasedGenerator) stop(ctx context.Context) error {
	if g.cached != nil {
		g.cached.Close()
	}
	return g.lease.Release(ctx, g.gen.Stop())
}

// NextID returns a new key.
func (t *SnowflakeTable) NextID(ctx context.Context) (int64, error) {
	if g := t.cur.Load(); g != nil && g.cached == nil && t.lim == nil {
		// AppendIDs' path for one key, without a slice to hold it.
		id, err := g.gen.NextID(ctx)
		if err == nil || !errors.Is(err, snowflake.ErrStopped) {
			return id, err
		}
	}
	ids, err := t.AppendIDs(ctx, make([]int64, 0, 1), 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// AppendIDs appends n new keys to dst. When the lease has ended it renews
// it once and goes on. When the table has a max_id and one of the n keys
// would be above it, none is appended and the error wraps
// ErrKeySpaceExhausted; the refusal costs no key (see KeySpace).
func (t *SnowflakeTable) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	if n == 1 && t.lim == nil { // one row's key: straight to the generator
		if g := t.cur.Load(); g != nil && g.cached == nil {
			id, err := g.gen.NextID(ctx)
			switch {
			case err == nil:
				return append(dst, id), nil
			case !errors.Is(err, snowflake.ErrStopped):
				return dst, err
			}
			// The lease ended: the path below renews it.
		}
	}
	if t.lim == nil {
		return t.appendIDs(ctx, dst, n)
	}
	return t.lim.take(dst, n, &t.src, func(dst []int64) ([]int64, error) { return t.appendIDs(ctx, dst, n) })
}

func (t *SnowflakeTable) appendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	start := len(dst)
	g := t.cur.Load()
	for renewed := false; ; renewed = true {
		var err error
		if g != nil {
			dst, err = g.appendIDs(ctx, dst, n-(len(dst)-start))
			if err == nil || renewed || !errors.Is(err, snowflake.ErrStopped) {
				return dst, err
			}
		}
		if g, err = t.renew(ctx, g); err != nil {
			return dst, err
		}
	}
}

// Generator returns the current generator and the ring in front of it (nil
// unless the table is cached); nil before the first lease or between leases.
func (t *SnowflakeTable) Generator() (*snowflake.Generator, *snowflake.Cached) {
	if g := t.cur.Load(); g != nil {
		return g.gen, g.cached
	}
	return nil, nil
}

// renew replaces old (nil at start) by a generator on a new lease, unless
// another caller did already.
func (t *SnowflakeTable) renew(ctx context.Context, old *leasedGenerator) (*leasedGenerator, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if cur := t.cur.Load(); cur != old {
		return cur, nil
	}
	if t.closed {
		return nil, ErrClosed
	}
	if old != nil {
		cause := old.lease.Err()
		t.cur.Store(nil)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := old.stop(rctx)
		cancel()
		t.k.opts.Logger.Warn("idsql: worker lease ended; acquiring a new one",
			"table", t.table, "worker", old.lease.WorkerID(), "cause", cause, "release_error", err)
	}
	if t.lastErr != nil && time.Since(t.failedAt) < t.backoff {
		return nil, t.lastErr
	}
	g, err := t.k.startGenerator(ctx, t.table, t.cached)
	if err != nil {
		t.failedAt = time.Now()
		t.backoff = min(max(2*t.backoff, 100*time.Millisecond), t.k.maxRenewBackoff())
		t.lastErr = fmt.Errorf("idsql: table %s: new worker lease: %w (next attempt in %s)", t.table, err, t.backoff)
		return nil, t.lastErr
	}
	t.lastErr, t.backoff = nil, 0
	t.cur.Store(g)
	return g, nil
}

// close stops the generator and releases its lease for good.
func (t *SnowflakeTable) close(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	g := t.cur.Swap(nil)
	if g == nil {
		return nil
	}
	return g.stop(ctx)
}

// snowflakeBlock is the most keys a table's generator draws at once when
// its statements come quickly (snowflake.Settings.Block): a one-row
// INSERT then takes no lock for its key, only a clock reading (which must
// still be in the block's tick and before the lease's deadline) and one
// atomic add. The keys a burst leaves in a block are dropped, never
// handed to a later tick's statements.
const snowflakeBlock = 16

// startGenerator acquires a lease for table and starts a generator on it.
func (k *Keys) startGenerator(ctx context.Context, table string, cached bool) (*leasedGenerator, error) {
	lease, err := k.leases.Acquire(ctx, holder.Request{
		Namespace:  k.cfg.Namespace,
		Table:      table,
		Instance:   k.opts.Instance,
		WorkerBits: k.layout.WorkerBits,
		Reserved:   k.cfg.Holder.DatabaseWorkers,
	})
	if err != nil {
		return nil, err
	}
	settings := snowflake.Settings{
		Layout:      k.layout,
		Clock:       k.opts.Clock,
		MaxBackward: k.cfg.Snowflake.MaxBackward,
		RandomStart: k.cfg.Snowflake.RandomStart,
		Block:       int(min(snowflakeBlock, k.layout.MaxSequence()+1)),
	}
	if cached {
		settings.Block = 0 // the ring takes its IDs in runs already
	}
	g := &leasedGenerator{lease: lease}
	if cached {
		g.cached, err = snowflake.NewCached(ctx, lease, settings, snowflake.CachedSettings{})
		if err == nil {
			g.gen = g.cached.Generator()
		}
	} else {
		g.gen, err = snowflake.New(ctx, lease, settings)
	}
	if err != nil {
		lease.Release(context.WithoutCancel(ctx), time.Time{})
		return nil, err
	}
	return g, nil
}

func (k *Keys) startSegment(ctx context.Context, table string, tc TableConfig) (KeySource, error) {
	if err := k.startSegments(ctx); err != nil {
		return nil, err
	}
	key, err := k.seg.Key(ctx, k.cfg.SegmentKey(table))
	if err != nil {
		return nil, err
	}
	return &segmentSource{key: key, lim: k.limits[table]}, nil
}

// startSegments starts the segment generator unless it runs. k.mu is held.
func (k *Keys) startSegments(ctx context.Context) error {
	if k.seg == nil {
		store, err := k.segmentStore()
		if err != nil {
			return err
		}
		g, err := segment.New(ctx, store, k.opts.Segment)
		if err != nil {
			return err
		}
		k.seg = g
		k.closers = append(k.closers, func(context.Context) error { return g.Close() })
	}
	return nil
}

// segmentStore returns the store of segment ranges.
func (k *Keys) segmentStore() (segment.Store, error) {
	if k.opts.SegmentStore != nil {
		return k.opts.SegmentStore, nil
	}
	if k.opts.DB == nil {
		return nil, errors.New("segment tables need a database: set KeysOptions.DB or SegmentStore")
	}
	d, err := DialectOf(k.opts.DB)
	if err != nil {
		return nil, err
	}
	store, err := SegmentStore(k.opts.DB, d)
	if err != nil {
		return nil, err
	}
	k.cfg.Holder.ConfigureStore(store)
	return store, nil
}

// Segments returns the segment generator, or nil before any segment table
// was used.
func (k *Keys) Segments() *segment.Generator {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.seg
}

// segmentSource adapts a segment key to KeySource, under the table's
// max_id when it has one.
type segmentSource struct {
	key segmentKey  // a *segment.Key, or a Redis queue's key (redisbuffer.go)
	lim *keyLimit   // nil: no max_id
	src limitSource // its use of max_id
}

func (s *segmentSource) NextID(ctx context.Context) (int64, error) {
	if s.lim == nil {
		return s.key.Next(ctx)
	}
	ids, err := s.AppendIDs(ctx, make([]int64, 0, 1), 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// segmentKey is what a segmentSource draws keys from.
type segmentKey interface {
	Next(ctx context.Context) (int64, error)
	NextIDs(ctx context.Context, n int) ([]int64, error)
}

// AppendIDs appends n keys to dst; with a max_id, all n or none.
func (s *segmentSource) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	return s.lim.take(dst, n, &s.src, func(dst []int64) ([]int64, error) { return appendKeys(ctx, s.key, dst, n) })
}

// appendKeys appends n keys of key to dst: with Next for one (no slice),
// with NextIDs for more.
func appendKeys(ctx context.Context, key segmentKey, dst []int64, n int) ([]int64, error) {
	if n == 1 {
		id, err := key.Next(ctx)
		if err != nil {
			return dst, err
		}
		return append(dst, id), nil
	}
	ids, err := key.NextIDs(ctx, n)
	return append(dst, ids...), err
}

// Close stops every generator and releases the worker leases. Keys issued
// before stay valid; no key is issued after.
func (k *Keys) Close() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return nil
	}
	k.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var errs []error
	for i := len(k.closers) - 1; i >= 0; i-- {
		errs = append(errs, k.closers[i](ctx))
	}
	return errors.Join(errs...)
}

// Options returns the options the keys were made with.
func (k *Keys) Options() KeysOptions { return k.opts }
