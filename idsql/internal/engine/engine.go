package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/internal/dialect"
)

// MaxBatch is the most keys one statement, or one call for keys, may take
// (keyset.MaxBatch).
const MaxBatch = 10_000

// ErrBatch is wrapped by the error refusing a request for more than
// MaxBatch keys at once.
var ErrBatch = errors.New("idsql: too many keys in one request")

// BatchError is the error refusing n keys for table: n is outside
// 0..MaxBatch.
func BatchError(table string, n int) error {
	return fmt.Errorf("%w: %d keys asked for table %s: want 0..%d per call", ErrBatch, n, table, MaxBatch)
}

// A Source issues the keys of one table (keyset.KeySource).
type Source interface {
	NextID(ctx context.Context) (int64, error)
	// AppendIDs appends n keys to dst, 0 <= n <= MaxBatch.
	AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error)
}

// Keys is where the engine draws keys: keyset.Keys.
type Keys interface {
	// Source returns a configured table's key source.
	Source(ctx context.Context, table string) (Source, error)
	// AppendShardIDs appends one key per entry of shards, each drawn in
	// that shard of table.
	AppendShardIDs(ctx context.Context, dst []int64, table string, shards []int) ([]int64, error)
}

// Config is what an Engine is made from.
type Config struct {
	// Dialect is the database's dialect.
	Dialect dialect.Dialect
	// Tables are the configured tables (Tables makes them from idsql's
	// configuration).
	Tables []Table
	// Keys issues the keys.
	Keys Keys
	// ShardOf places a value of a shard column in one of 2^bits shards
	// (keyset.ShardOf).
	ShardOf func(value any, bits int) (int, error)
	// CacheSize bounds the rewriter's plan cache; 0 means the default.
	CacheSize int
	// Prefix begins the engine's errors: the front door's package name
	// ("idsql", "pgxid").
	Prefix string
	// CountsUpdates: the database counts a row an upsert updated twice,
	// and one it left unchanged not at all (MySQL and MariaDB without
	// CLIENT_FOUND_ROWS), so a one-row upsert tells an insert from an
	// update (Known).
	CountsUpdates bool
	// UUIDs holds the UUID codec of each table whose keys are UUIDs
	// (strategy uuid7), by configured name: its keys go into the key
	// column as UUIDv7s, whose column CheckKey requires to be of a UUID
	// type (dialect.Dialect.UUIDColumn).
	UUIDs map[string]*keyform.UUIDKeys
	// Observe, when set, is called after the keys of each filled
	// execution were drawn, with how many and how long drawing them took
	// (the key sources' waits: a lease, a refill, the clock), on the
	// goroutine and with the context of the execution.
	Observe func(ctx context.Context, table string, keys int, took time.Duration)
}

// Engine owns the life of every statement of every front door: the plan
// (cached by query text), the state of the plan's table (key column
// checked, key source at hand), which rows take a key, the keys, the
// arguments that carry them, and what the result may report about them.
// Safe for concurrent use.
type Engine struct {
	cfg   Config
	bits  map[string]int // shard bits of sharded tables, by configured name
	rwCfg rewrite.Config
	// rws holds a rewriter per MySQL sql_mode flag combination (see
	// modeIndex); rws[0] is made by New, the others on first use.
	rws  [4]atomic.Pointer[rewrite.Rewriter]
	rwMu sync.Mutex
	// keyChecked holds the configured names of the tables whose key
	// column was found and found wide enough, each with how the column
	// holds UUID keys (dialect.NoUUID for a table of 64-bit keys).
	keyChecked sync.Map
	states     States[Stmt]
}

// New makes an engine for cfg.
func New(cfg Config) (*Engine, error) {
	e := &Engine{cfg: cfg, bits: map[string]int{}}
	rt := make([]rewrite.Table, len(cfg.Tables))
	for i, t := range cfg.Tables {
		rt[i] = t.Table
		if t.ShardBits > 0 {
			e.bits[t.String()] = t.ShardBits
		}
	}
	e.rwCfg = rewrite.Config{Tables: rt, Dialect: cfg.Dialect, CacheSize: cfg.CacheSize}
	rw, err := rewrite.New(e.rwCfg)
	if err != nil {
		return nil, err
	}
	e.rws[0].Store(rw)
	return e, nil
}

// Rewriter returns the rewriter that reads statements as a session with
// MySQL sql_mode m does (the zero SQLMode for other databases).
func (e *Engine) Rewriter(m dialect.SQLMode) (*rewrite.Rewriter, error) {
	i := modeIndex(m)
	if rw := e.rws[i].Load(); rw != nil {
		return rw, nil
	}
	e.rwMu.Lock()
	defer e.rwMu.Unlock()
	if rw := e.rws[i].Load(); rw != nil {
		return rw, nil
	}
	cfg := e.rwCfg
	cfg.NoBackslashEscapes, cfg.ANSIQuotes = m.NoBackslashEscapes, m.ANSIQuotes
	rw, err := rewrite.New(cfg)
	if err != nil {
		return nil, err
	}
	e.rws[i].Store(rw)
	return rw, nil
}

// modeIndex numbers the sql_mode flags that change how the rewriter reads
// a statement.
func modeIndex(m dialect.SQLMode) int {
	i := 0
	if m.NoBackslashEscapes {
		i |= 1
	}
	if m.ANSIQuotes {
		i |= 2
	}
	return i
}

// ShardOf places v in one of the table's shards.
func (e *Engine) ShardOf(table string, v any) (int, error) {
	return e.cfg.ShardOf(v, e.bits[table])
}

// Table is a configured table as the engine reads it.
type Table struct {
	rewrite.Table
	// ShardBits is the number of shard bits of a sharded table.
	ShardBits int
}

// TableConfig is what Tables reads of a configured table
// (keyset.TableConfig).
type TableConfig interface {
	// KeyColumn is the key column's name.
	KeyColumn() string
	// FillsZero reports whether keys a statement gives as DEFAULT, NULL or
	// 0 are filled (fill_zero; never for a sharded table, whose key needs
	// its row's shard, which the rewriter reads only from statements that
	// leave the key out).
	FillsZero() bool
	// ShardColumn is the column whose value picks the shard of each row's
	// key; "" for a table without shard bits.
	ShardColumn() string
	// ShardBits is the number of shard bits; 0 for a table without.
	ShardBits() int
}

// Tables returns the engine's description of the configured tables
// names, in that order: each labelled with its configuration name, with
// its key column and shard column, and keeping zero keys unless it fills
// them.
func Tables[T TableConfig](names []string, tables map[string]T) []Table {
	out := make([]Table, 0, len(names))
	for _, name := range names {
		tc := tables[name]
		t := rewrite.TableNamed(name, tc.KeyColumn())
		t.KeepZero = !tc.FillsZero()
		t.ShardColumn = tc.ShardColumn()
		out = append(out, Table{Table: t, ShardBits: tc.ShardBits()})
	}
	return out
}

// Sent returns err, the error a door's filled statement met once sent,
// saying how to mend it when its words show that a connection pooler ran
// the statement's parts on different server connections
// (dialect.Dialect.SplitStatement). nil stays nil.
func (e *Engine) Sent(err error) error { return e.cfg.Dialect.SplitStatement(err) }

// Default returns the rewriter of the default sql_mode (and of every
// database without one).
func (e *Engine) Default() *rewrite.Rewriter { return e.rws[0].Load() }
