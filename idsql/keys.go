package idsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrUnknownTable is wrapped by errors about a table the configuration does
// not name.
var ErrUnknownTable = errors.New("idsql: table not configured")

// ErrClosed is returned by Keys after Close.
var ErrClosed = errors.New("idsql: keys closed")

// A KeySource issues the keys of one table.
type KeySource interface {
	NextID(ctx context.Context) (int64, error)
}

// batchSource is a KeySource that issues many keys at once (the snowflake
// generator reserves a tick's sequences with one compare-and-swap).
type batchSource interface {
	AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error)
}

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
	// SegmentStore allocates segment ranges; nil means a PostgreSQL store on
	// DB.
	SegmentStore segment.Store
	// Segment tunes the segment generator.
	Segment segment.Settings
	// Instance identifies this process to holders; the zero value means
	// holder.LocalInstance(Config.Holder.Port).
	Instance holder.Instance
	// Clock is the snowflake generators' clock; nil means the system clock.
	Clock snowflake.Clock
}

// Keys issues primary keys for the tables of one Config: a snowflake
// generator per snowflake table, each under its own worker lease, and one
// segment generator serving every segment table. A table's generator is
// started on first use. Keys is safe for concurrent use; Close releases the
// leases.
type Keys struct {
	cfg    *Config
	layout snowflake.Layout
	opts   KeysOptions

	mu      sync.Mutex
	sources sync.Map      // table name -> KeySource
	leases  holder.Holder // grants snowflake worker leases; see Keys.holder
	seg     *segment.Generator
	closers []func(context.Context) error
	closed  bool
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
		case "hostname":
			opts.Instance.ID = opts.Instance.Host
		default:
			opts.Instance.ID = cfg.Holder.Instance
		}
	}
	return &Keys{cfg: cfg, layout: layout, opts: opts}, nil
}

// Config returns the configuration the keys serve.
func (k *Keys) Config() *Config { return k.cfg }

// NextID returns a new key for table (a name as configured).
func (k *Keys) NextID(ctx context.Context, table string) (int64, error) {
	ids, err := k.AppendIDs(ctx, make([]int64, 0, 1), table, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// NextIDs returns n new keys for table.
func (k *Keys) NextIDs(ctx context.Context, table string, n int) ([]int64, error) {
	return k.AppendIDs(ctx, make([]int64, 0, n), table, n)
}

// AppendIDs appends n new keys for table to dst. When a snowflake table's
// worker lease was lost, the table gets a new lease once and the call goes
// on: the holder fenced the old lease before its worker ID could be reused.
func (k *Keys) AppendIDs(ctx context.Context, dst []int64, table string, n int) ([]int64, error) {
	start := len(dst)
	for retried := false; ; retried = true {
		src, err := k.Source(ctx, table)
		if err != nil {
			return dst, err
		}
		dst, err = appendFrom(ctx, src, dst, n-(len(dst)-start))
		if err == nil || retried || !errors.Is(err, snowflake.ErrStopped) {
			return dst, err
		}
		k.sources.CompareAndDelete(table, src) // lease lost: start anew
	}
}

// appendFrom appends n keys from src to dst.
func appendFrom(ctx context.Context, src KeySource, dst []int64, n int) ([]int64, error) {
	if b, ok := src.(batchSource); ok {
		return b.AppendIDs(ctx, dst, n)
	}
	for range n {
		id, err := src.NextID(ctx)
		if err != nil {
			return dst, err
		}
		dst = append(dst, id)
	}
	return dst, nil
}

// Source returns table's key source, starting it on first use.
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
	var src KeySource
	var err error
	switch tc.Strategy {
	case Snowflake:
		src, err = k.startSnowflake(ctx, table, tc)
	case Segment:
		src, err = k.startSegment(ctx, table)
	}
	if err != nil {
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
	lease, err := k.leases.Acquire(ctx, holder.Request{
		Namespace:  k.cfg.Namespace,
		Table:      table,
		Instance:   k.opts.Instance,
		WorkerBits: k.layout.WorkerBits,
	})
	if err != nil {
		return nil, err
	}
	settings := snowflake.Settings{
		Layout:      k.layout,
		Clock:       k.opts.Clock,
		MaxBackward: k.cfg.Snowflake.MaxBackward,
		RandomStart: k.cfg.Snowflake.RandomStart,
	}
	if tc.Cached {
		c, err := snowflake.NewCached(lease, settings, snowflake.CachedSettings{})
		if err != nil {
			lease.Release(ctx)
			return nil, err
		}
		k.closers = append(k.closers, func(ctx context.Context) error {
			c.Close()
			return lease.Release(ctx)
		})
		return c, nil
	}
	g, err := snowflake.New(lease, settings)
	if err != nil {
		lease.Release(ctx)
		return nil, err
	}
	k.closers = append(k.closers, lease.Release)
	return g, nil
}

func (k *Keys) startSegment(ctx context.Context, table string) (KeySource, error) {
	if k.seg == nil {
		store := k.opts.SegmentStore
		if store == nil {
			if k.opts.DB == nil {
				return nil, errors.New("segment tables need a database: set KeysOptions.DB or SegmentStore")
			}
			store = segment.NewPostgresStore(k.opts.DB)
		}
		g, err := segment.New(ctx, store, k.opts.Segment)
		if err != nil {
			return nil, err
		}
		k.seg = g
		k.closers = append(k.closers, func(context.Context) error { return g.Close() })
	}
	key, err := k.seg.Key(ctx, k.cfg.SegmentKey(table))
	if err != nil {
		return nil, err
	}
	return segmentSource{key}, nil
}

// Segments returns the segment generator, or nil before any segment table
// was used.
func (k *Keys) Segments() *segment.Generator {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.seg
}

// segmentSource adapts a segment key to KeySource.
type segmentSource struct{ key *segment.Key }

func (s segmentSource) NextID(ctx context.Context) (int64, error) { return s.key.Next(ctx) }

func (s segmentSource) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	if n == 1 {
		id, err := s.key.Next(ctx)
		if err != nil {
			return dst, err
		}
		return append(dst, id), nil
	}
	ids, err := s.key.NextIDs(ctx, n)
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
