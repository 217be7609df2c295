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
// holder section, with what idsql adds. Check sees the same settings
// when the configuration is loaded, without CacheDir, Now and Registry.
type HolderSettings struct {
	Mode           string           // holder.mode; empty means the kind's default
	Servers        []string         // holder.servers
	Endpoints      []string         // holder.endpoints
	Workers        map[string]int64 // holder.workers
	SessionTimeout time.Duration    // holder.session_timeout; zero means the kind's default
	TickTime       time.Duration    // holder.tick_time; zero means the kind's default
	Heartbeat      time.Duration    // holder.heartbeat, or the worker registry's default; never zero
	// Options are the keys of the holder section that idsql's
	// configuration has no field for, as YAML decoded them: the kind's own
	// keys (see Holder.Keys).
	Options  map[string]any
	CacheDir string           // where the holder keeps cache files
	Now      func() time.Time // the clock; never nil
	// Registry is the worker table idsql_workers on the application's
	// database, nil where there is none (SQLite).
	Registry *registry.Registry
}

// KeyError is an error of a holder kind's Check about one key of the
// holder section; idsql reports it as holder.<Key>, at the key's line.
type KeyError struct {
	Key string // "servers", or a key of the kind's own
	Err error
}

// Error returns "key: err".
func (e *KeyError) Error() string { return e.Key + ": " + e.Err.Error() }

// Unwrap returns Err.
func (e *KeyError) Unwrap() error { return e.Err }

// KeyErrorf returns a *KeyError about key with a formatted message.
func KeyErrorf(key, format string, args ...any) error {
	return &KeyError{Key: key, Err: fmt.Errorf(format, args...)}
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
	// Keys lists the keys of the holder section the kind reads beyond
	// those every kind takes (kind, mode, instance, port, ordinal_offset,
	// cache_dir, heartbeat, database_workers, accept_lazy_commits, and
	// session_timeout and workers, which a kind without a session or a
	// static map ignores): keys idsql's configuration has a field for
	// (servers, endpoints, tick_time) and keys of the kind's own, which
	// reach it in HolderSettings.Options. A configuration that sets a key
	// its kind does not list is refused, naming the kinds that read it.
	Keys []string
	// Check validates the kind's settings when the configuration is
	// loaded: keys it needs, values out of range. An error about one key
	// is a *KeyError (see KeyErrorf). Nil checks nothing beyond Keys and
	// Modes.
	Check func(HolderSettings) error
	// WorkerTable names the dialect ("postgres", "mysql") of the database
	// whose worker table the kind keeps its leases in; idsql refuses the
	// kind on a database of another dialect. Empty for a kind that keeps
	// its leases elsewhere.
	WorkerTable string
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

// imports names the package that registers each of idsql's own kinds,
// for the error that says what to import when a program does not link
// it. It is the one place that names them: everything else about a kind
// (its modes, its configuration keys and their checks, its worker table)
// is in its registration, so a kind of another module needs no entry
// here. PostgreSQL's segment store needs no import: it is in package
// segment, which has no driver dependency.
var imports = map[string]map[string]string{
	"holder": {
		"local":     "github.com/idsql/idsql/holder/local",
		"postgres":  "github.com/idsql/idsql/holder/postgres",
		"mysql":     "github.com/idsql/idsql/holder/mysql",
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
	// fallbacks are holder kinds registered under a name whose own
	// package registers it properly (RegisterFallbackHolder).
	fallbacks = map[string]Holder{}
	stores    = map[string]StoreFunc{"postgres": segment.NewPostgresStore}
	buffers   = map[string]BufferFunc{}
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

// RegisterFallbackHolder registers h under kind for a package that links
// kind's implementation but is not where kind belongs, to keep an old
// import working: holder/postgres registers "mysql" so, for one release,
// while holder/mysql is where it belongs. A RegisterHolder of the same
// kind takes precedence, whichever init runs first.
func RegisterFallbackHolder(kind string, h Holder) {
	if h.New == nil {
		panic("kinds: RegisterFallbackHolder " + kind + " without New")
	}
	register(fallbacks, "holder", kind, h)
}

// RegisterStore makes the segment store of a dialect ("postgres",
// "mysql", "sqlite") available. It is called from the init function of
// the store's package.
func RegisterStore(dialect string, f StoreFunc) { register(stores, "segment store", dialect, f) }

// RegisterBuffer makes a buffer kind (the `buffer:` of a segment table)
// available. It is called from the init function of the kind's package.
func RegisterBuffer(kind string, f BufferFunc) { register(buffers, "buffer", kind, f) }

// LookupHolder returns the holder kind registered under kind.
func LookupHolder(kind string) (Holder, error) {
	h, err := lookup(holders, "holder", kind)
	if err != nil {
		mu.RLock()
		f, ok := fallbacks[kind]
		mu.RUnlock()
		if ok {
			return f, nil
		}
	}
	return h, err
}

// holderKinds returns the registered holder kinds, fallbacks included,
// by name; the caller holds mu.
func holderKinds() map[string]Holder {
	all := make(map[string]Holder, len(holders)+len(fallbacks))
	for n, h := range fallbacks {
		all[n] = h
	}
	for n, h := range holders {
		all[n] = h
	}
	return all
}

// HolderKeyUsers returns the registered holder kinds that list key in
// their Keys, sorted.
func HolderKeyUsers(key string) []string {
	mu.RLock()
	defer mu.RUnlock()
	var users []string
	for name, h := range holderKinds() {
		if slices.Contains(h.Keys, key) {
			users = append(users, name)
		}
	}
	sort.Strings(users)
	return users
}

// HolderKeys returns every key the registered holder kinds list in their
// Keys, sorted, once each.
func HolderKeys() []string {
	mu.RLock()
	defer mu.RUnlock()
	var keys []string
	for _, h := range holderKinds() {
		for _, k := range h.Keys {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

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
