package kinds

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"
)

// HolderSettings is what a holder kind is made from: the configuration's
// holder section, with what idsql adds.
type HolderSettings struct {
	Mode           string           // holder.mode; empty means the kind's default
	Servers        []string         // holder.servers (zookeeper), holder.endpoints (etcd)
	Workers        map[string]int64 // holder.workers
	SessionTimeout time.Duration    // holder.session_timeout; zero means the kind's default
	CacheDir       string           // where the holder keeps cache files
	Now            func() time.Time // the clock; never nil
	// Registry is the worker table idsql_workers on the application's
	// database, nil where there is none (SQLite).
	Registry *registry.Registry
}

// Holder describes one holder kind.
type Holder struct {
	// Modes lists the kind's modes, the default first; the configuration
	// is checked against it.
	Modes []string
	// DefaultSessionTimeout is the session or lease timeout the kind uses
	// when the configuration sets none (checked against ZooKeeper's tick
	// time); zero when the kind has none to check.
	DefaultSessionTimeout time.Duration
	// Records says that the kind writes its leases into the worker table
	// itself; idsql records the leases of the other kinds there.
	Records bool
	// CacheDir says that the kind keeps files in HolderSettings.CacheDir
	// (idsql finds the directory only for such kinds).
	CacheDir bool
	// New makes the holder. When it is also an io.Closer, idsql closes
	// it with the Keys that made it.
	New func(HolderSettings) (holder.Holder, error)
}

// StoreFunc makes the segment store on an application's database.
type StoreFunc func(db *sql.DB) *segment.SQLStore

// BufferSettings is what a buffer kind's queue is made from.
type BufferSettings struct {
	Addr      string           // redis.addr: the server
	Namespace string           // prefix of the buffer's names ("idsql:<namespace>")
	Step      int64            // keys per refill: the table's step
	Batch     int              // keys per pop; zero means the kind's default
	Store     segment.Store    // where ranges are allocated
	Fallback  segment.Settings // the generator used while the server is down
	Instance  string           // this process, in the range log
	Logger    *slog.Logger
}

// A Buffer hands out the pre-allocated keys of segment keys, shared by
// every process that uses the same server.
type Buffer interface {
	Next(ctx context.Context, key string) (int64, error)
	NextN(ctx context.Context, key string, n int) ([]int64, error)
	// Close stops the buffer and closes its connections.
	Close() error
}

// BufferFunc starts a buffer.
type BufferFunc func(ctx context.Context, s BufferSettings) (Buffer, error)

// imports names the package that registers each kind idsql knows, for
// the error that says what to import. PostgreSQL's segment store needs
// no import: it is in package segment, which has no driver dependency.
var imports = map[string]map[string]string{
	"holder": {
		"local":     "github.com/idsql/idsql/holder/local",
		"postgres":  "github.com/idsql/idsql/holder/postgres",
		"mysql":     "github.com/idsql/idsql/holder/postgres",
		"zookeeper": "github.com/idsql/idsql/holder/zookeeper",
		"etcd":      "github.com/idsql/idsql/holder/etcd",
	},
	"segment store": {
		"mysql":  "github.com/idsql/idsql/idsql/segment/mysqlstore",
		"sqlite": "github.com/idsql/idsql/idsql/segment/sqlitestore",
	},
	"buffer": {
		"redis": "github.com/idsql/idsql/idsql/segment/redisqueue",
	},
}

var (
	mu      sync.RWMutex
	holders = map[string]Holder{}
	stores  = map[string]StoreFunc{"postgres": segment.NewPostgresStore}
	buffers = map[string]BufferFunc{}
)

// RegisterHolder makes a holder kind available by name. It is called from
// the init function of the kind's package, and panics when the name is
// taken or h has no New, as sql.Register does.
func RegisterHolder(kind string, h Holder) {
	if h.New == nil {
		panic("kinds: RegisterHolder " + kind + " without New")
	}
	register(holders, "holder", kind, h)
}

// RegisterStore makes the segment store of a dialect ("postgres",
// "mysql", "sqlite") available. It is called from the init function of
// the store's package.
func RegisterStore(dialect string, f StoreFunc) { register(stores, "segment store", dialect, f) }

// RegisterBuffer makes a buffer kind (the `buffer:` of a segment table)
// available. It is called from the init function of the kind's package.
func RegisterBuffer(kind string, f BufferFunc) { register(buffers, "buffer", kind, f) }

// LookupHolder returns the holder kind registered under kind.
func LookupHolder(kind string) (Holder, error) { return lookup(holders, "holder", kind) }

// LookupStore returns the segment store registered for a dialect.
func LookupStore(dialect string) (StoreFunc, error) { return lookup(stores, "segment store", dialect) }

// LookupBuffer returns the buffer kind registered under kind.
func LookupBuffer(kind string) (BufferFunc, error) { return lookup(buffers, "buffer", kind) }

func register[T any](m map[string]T, what, name string, v T) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := m[name]; dup {
		panic(fmt.Sprintf("kinds: %s %q registered twice", what, name))
	}
	m[name] = v
}

// lookup returns m[name], or an error that says which import registers
// it, or which names are known.
func lookup[T any](m map[string]T, what, name string) (T, error) {
	mu.RLock()
	defer mu.RUnlock()
	v, ok := m[name]
	if ok {
		return v, nil
	}
	if path, known := imports[what][name]; known {
		return v, fmt.Errorf("%s %q is not linked in: add import _ %q", what, name, path)
	}
	var names []string
	for n := range m {
		names = append(names, n)
	}
	for n := range imports[what] {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	return v, fmt.Errorf("unknown %s %q (want %s)", what, name, want)
}

// Names returns a holder package's modes as strings, for Holder.Modes.
func Names[M ~string](modes []M) []string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return names
}
