// Package holderkind is where worker-ID holder kinds register, by the
// configuration's holder.kind, as database/sql's drivers do: each kind's
// package registers itself in an init function, so a program links only
// the kinds it imports, and idsql looks them up by name.
//
//	import (
//		"github.com/idsql/idsql/idsql"
//		_ "github.com/idsql/idsql/holder/zookeeper" // holder.kind: zookeeper
//	)
//
// idsql's own kinds register from these packages:
//
//	local       holder/local (idsql links it: it is the default)
//	postgres    holder/workertable (holder/postgres, deprecated, too)
//	mysql       holder/workertable (holder/mysql, deprecated, too)
//	zookeeper   holder/zookeeper
//	etcd        holder/etcd
//
// Everything else about a kind is in its registration (Kind): its modes,
// the configuration keys only it reads (Keys; keys of its own reach it in
// Settings.Options) and their checks (Check), and the dialect of the worker
// table it keeps its leases in (WorkerTable). A new kind, of idsql or of
// another module, is its own package and its registration, with no edit
// to idsql or this package. The package sits below both the holders and
// idsql: it imports holder, holder/registry and internal/plugins only.
package holderkind

import (
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/plugins"
)

// Settings is what a holder kind is made from: the configuration's
// holder section, with what idsql adds. Check sees the same settings
// when the configuration is loaded, without CacheDir, Now and Registry.
type Settings struct {
	Mode           string           // holder.mode; empty means the kind's default
	Servers        []string         // holder.servers
	Endpoints      []string         // holder.endpoints
	Workers        map[string]int64 // holder.workers
	SessionTimeout time.Duration    // holder.session_timeout; zero means the kind's default
	TickTime       time.Duration    // holder.tick_time; zero means the kind's default
	Heartbeat      time.Duration    // holder.heartbeat, or the worker registry's default; never zero
	// Options are the keys of the holder section that idsql's
	// configuration has no field for, as YAML decoded them: the kind's own
	// keys (see Kind.Keys).
	Options  map[string]any
	CacheDir string           // where the holder keeps cache files
	Now      func() time.Time // the clock; never nil
	// Registry is the worker table idsql_workers on the application's
	// database, nil where there is none (SQLite).
	Registry *registry.Registry
	// Logger receives the holder's client events (connections made and
	// lost, sessions granted and expired); nil discards them.
	Logger *slog.Logger
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

// Kind describes one holder kind.
type Kind struct {
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
	// CacheDir says that the kind keeps files in Settings.CacheDir
	// (idsql finds the directory only for such kinds).
	CacheDir bool
	// Keys lists the keys of the holder section the kind reads beyond
	// those every kind takes (kind, mode, instance, port, ordinal_offset,
	// cache_dir, heartbeat, database_workers, accept_lazy_commits,
	// one_writer_node, and session_timeout and workers, which a kind
	// without a session or a static map ignores): keys idsql's
	// configuration has a field for (servers, endpoints, tick_time) and
	// keys of the kind's own, which reach it in Settings.Options. A
	// configuration that sets a key its kind does not list is refused,
	// naming the kinds that read it.
	Keys []string
	// Check validates the kind's settings when the configuration is
	// loaded: keys it needs, values out of range. An error about one key
	// is a *KeyError (see KeyErrorf). Nil checks nothing beyond Keys and
	// Modes.
	Check func(Settings) error
	// WorkerTable names the dialect ("postgres", "mysql") of the database
	// whose worker table the kind keeps its leases in; idsql refuses the
	// kind on a database of another dialect. Empty for a kind that keeps
	// its leases elsewhere.
	WorkerTable string
	// New makes the holder. When it is also an io.Closer, idsql closes
	// it with the Keys that made it.
	New func(Settings) (holder.Holder, error)
}

// kinds are the registered holder kinds, with the package that registers
// each of idsql's own.
var kinds = plugins.New[Kind]("holder", map[string]string{
	"local":     "github.com/idsql/idsql/holder/local",
	"postgres":  "github.com/idsql/idsql/holder/workertable",
	"mysql":     "github.com/idsql/idsql/holder/workertable",
	"zookeeper": "github.com/idsql/idsql/holder/zookeeper",
	"etcd":      "github.com/idsql/idsql/holder/etcd",
})

// Register makes a holder kind available by name. It is called from the
// init function of the kind's package, and panics when the name is taken
// or k has no New, as sql.Register does.
func Register(name string, k Kind) {
	if k.New == nil {
		panic("holderkind: Register " + name + " without New")
	}
	kinds.Register(name, k)
}

// Lookup returns the holder kind registered under name, or an error that
// names the import that registers it.
func Lookup(name string) (Kind, error) { return kinds.Lookup(name) }

// KeyUsers returns the registered holder kinds that list key in their
// Keys, sorted.
func KeyUsers(key string) []string {
	var users []string
	for name, k := range kinds.All() {
		if slices.Contains(k.Keys, key) {
			users = append(users, name)
		}
	}
	sort.Strings(users)
	return users
}

// Keys returns every key the registered holder kinds list in their Keys,
// sorted, once each.
func Keys() []string {
	var keys []string
	for _, k := range kinds.All() {
		for _, key := range k.Keys {
			if !slices.Contains(keys, key) {
				keys = append(keys, key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// Names returns a holder package's modes as strings, for Kind.Modes.
func Names[M ~string](modes []M) []string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return names
}
