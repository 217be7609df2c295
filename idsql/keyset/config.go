package keyset

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/dialect"
)

// A Strategy is how a table's keys are made: Snowflake, UUID7 or Segment.
type Strategy string

// Strategies a table can use.
const (
	Snowflake Strategy = "snowflake"
	// UUID7 keys are snowflake keys, issued under a worker lease with all
	// of snowflake's fencing, stored as RFC 9562 UUIDv7s
	// (keyform.UUIDKeys): for a key column of a UUID type.
	UUID7   Strategy = "uuid7"
	Segment Strategy = "segment"
)

// Leased reports whether the table's keys are issued under a snowflake
// worker lease: a snowflake or uuid7 table.
func (t TableConfig) Leased() bool { return t.Strategy == Snowflake || t.Strategy == UUID7 }

// A HolderKind names where snowflake worker IDs come from: the name a
// holder kind registered under (package kinds): idsql's own are "local"
// (the default), "postgres" (the worker table in PostgreSQL), "mysql" (the
// worker table in MySQL or MariaDB), "zookeeper" and "etcd".
type HolderKind string

// holderLocal is the kind of an empty holder.kind.
const holderLocal HolderKind = "local"

// checkWorkerTable refuses a holder kind that keeps its leases in the
// worker table of a database of one dialect (holderkind.Kind.WorkerTable:
// postgres, mysql) when the worker table's database reg is of another:
// MySQL's table chosen with kind postgres, or PostgreSQL's with kind
// mysql. Other kinds, no registry, and a registry without a dialect (the
// holder says why) pass.
func (k HolderKind) checkWorkerTable(reg *registry.Registry) error {
	if reg == nil {
		return nil
	}
	kind, err := holderKind(k)
	if err != nil || kind.WorkerTable == "" {
		return nil
	}
	want, err := dialect.ByName(kind.WorkerTable)
	if err != nil {
		return &FieldError{Field: "holder.kind", Err: fmt.Errorf("%s: %w", k, err)}
	}
	if got, err := reg.Dialect(); err == nil && got != want {
		return &FieldError{Field: "holder.kind", Err: fmt.Errorf("%s names a %s worker table, but the database is %s: set holder.kind: %s", k, want, got, got)}
	}
	return nil
}

// InstanceOrdinal is the holder.instance that takes a StatefulSet pod's
// ordinal from the host name; see HolderConfig.Instance.
const InstanceOrdinal = "ordinal"

// DefaultStep is a segment table's step when the configuration gives none.
const DefaultStep = 1000

// DefaultTickTime is holder.tick_time when the configuration gives none:
// the tickTime of ZooKeeper's sample configuration (zoo_sample.cfg), which
// most deployments keep. The zookeeper holder checks against its own copy,
// zookeeper.DefaultTickTime (package idsql links no ZooKeeper code); this
// one stays for programs that name it.
const DefaultTickTime = 2 * time.Second

// Config is idsql's configuration, usually loaded from idsql.yaml with Load.
// The same file drives the wrapper, the code generator, the command-line
// tool and the ID server. Zero fields mean the documented defaults.
//
//	namespace: shop
//	layout: leaf
//	holder: {kind: zookeeper, servers: [127.0.0.1:2181], mode: recycle}
//	tables:
//	  orders: {strategy: snowflake}
//	  users:  {strategy: segment, step: 1000}
type Config struct {
	// Namespace separates worker IDs and lookups of unrelated deployments
	// sharing one ZooKeeper or database. Required.
	Namespace string `yaml:"namespace"`
	// Dialect is the SQL dialect of the application's database: postgres,
	// mysql (MySQL and MariaDB) or sqlite. Empty means "from the driver":
	// lib/pq, pgx's stdlib, go-sql-driver/mysql, modernc.org/sqlite and
	// mattn/go-sqlite3 are recognised; any other driver (a tracing
	// wrapper, say) needs this setting.
	Dialect string `yaml:"dialect"`
	// Layout is the snowflake bit layout; the zero value means "leaf".
	Layout LayoutConfig `yaml:"layout"`
	// Holder says where snowflake worker IDs come from.
	Holder HolderConfig `yaml:"holder"`
	// Snowflake tunes the snowflake generators.
	Snowflake SnowflakeConfig `yaml:"snowflake"`
	// Tables maps table names (optionally schema-qualified, parts optionally
	// "quoted"; see ValidTableName) to their keys. It may be empty: the
	// wrapper then passes every statement unchanged.
	Tables map[string]TableConfig `yaml:"tables"`
	// Redis is the server of the tables with `buffer: redis`.
	Redis RedisConfig `yaml:"redis"`
}

// LayoutConfig is a preset name or a custom layout. In YAML it is either a
// scalar (`layout: leaf`) or a mapping with time_bits, worker_bits,
// sequence_bits, unit and epoch (RFC 3339 or Unix milliseconds).
type LayoutConfig struct {
	Preset       string        `yaml:"preset"`
	TimeBits     int           `yaml:"time_bits"`
	WorkerBits   int           `yaml:"worker_bits"`
	SequenceBits int           `yaml:"sequence_bits"`
	Unit         time.Duration `yaml:"unit"`
	Epoch        time.Time     `yaml:"epoch"`
}

// HolderConfig configures the worker-ID holder.
type HolderConfig struct {
	// Kind is local (the default), postgres, mysql (MySQL or MariaDB),
	// zookeeper or etcd. postgres and mysql keep the leases in the worker
	// table of the application's database, which must be of that kind.
	Kind HolderKind `yaml:"kind"`
	// Servers are ZooKeeper addresses (zookeeper kind).
	Servers []string `yaml:"servers"`
	// Endpoints are etcd client addresses, host:port or http://host:port
	// (etcd kind). It is a field of its own rather than servers because it
	// is etcd's own word (etcdctl --endpoints), and each kind then has one
	// spelling: a zookeeper holder given endpoints, or an etcd holder given
	// servers, is an error that names the right field.
	Endpoints []string `yaml:"endpoints"`
	// Mode: sticky or recycle for zookeeper and etcd; sticky, disposable
	// or lease for postgres and mysql; empty means sticky.
	Mode string `yaml:"mode"`
	// Instance is this process's identity for sticky modes; empty means
	// host:port, "hostname" means the host name alone (Kubernetes
	// StatefulSets), anything else is used as it is. "ordinal" is the
	// host name too, which must then be a StatefulSet pod's, ending in
	// -<ordinal> (web-3): with the local holder and no workers map, the
	// worker ID is that ordinal plus OrdinalOffset, and NewKeys refuses
	// one that does not fit the layout's worker bits.
	Instance string `yaml:"instance"`
	// OrdinalOffset is added to the pod ordinal to make the worker ID
	// (instance: ordinal with the local holder), so that two StatefulSets
	// in one namespace can take disjoint ranges.
	OrdinalOffset int64 `yaml:"ordinal_offset"`
	// Port is the port in the default host:port identity.
	Port int `yaml:"port"`
	// Workers is the local holder's static map from identity to worker ID.
	Workers map[string]int64 `yaml:"workers"`
	// DatabaseWorkers is how many worker IDs at the top of the layout's
	// range no holder hands to a process: they are kept for database-side
	// defaults of snowflake tables (idsql migrate --db-defaults), which
	// compose keys inside the database under a worker ID reserved in the
	// worker table. Every process of the namespace must carry the same
	// value; one that records its leases in the worker table refuses a
	// reserved worker ID with an error naming the table it serves.
	DatabaseWorkers int64 `yaml:"database_workers"`
	// CacheDir keeps the local cache file of worker IDs and timestamps;
	// empty means the user cache directory.
	CacheDir string `yaml:"cache_dir"`
	// SessionTimeout is the ZooKeeper session or lease timeout; zero means
	// the holder's default. For the etcd holder it is the lease TTL asked
	// for, rounded up to whole seconds (default 10s; etcd grants at least
	// its minimum TTL, about 2s, and deadlines count from what it grants). For the postgres holder it is the lease TTL and
	// must be at least twice the worker registry's default heartbeat
	// (registry.DefaultHeartbeat, so 6s): a shorter lease could expire
	// between two heartbeats of a live process. For the zookeeper holder it
	// must lie within what ZooKeeper negotiates, [2, 20] times TickTime
	// ([4s, 40s] by default), or the server clamps it: a longer timeout is
	// cut short, so the session could expire, and its worker ID go to
	// another process, sooner than the holder counts on; a shorter one is
	// stretched, so a dead process's worker ID stays taken longer.
	SessionTimeout time.Duration `yaml:"session_timeout"`
	// TickTime is the tickTime of the ZooKeeper servers (zookeeper holder
	// only); zero means DefaultTickTime (2s). It is not sent anywhere: Load
	// uses it to check SessionTimeout against the range ZooKeeper clamps
	// session timeouts to by default, [2*tickTime, 20*tickTime]. (A server
	// whose configuration omits tickTime uses 3s; one that sets
	// minSessionTimeout or maxSessionTimeout negotiates within those.)
	TickTime time.Duration `yaml:"tick_time"`
	// Heartbeat is how often worker leases recorded in the database renew
	// their rows and horizons (the postgres holder, and the worker table of
	// any holder); zero means 3s. A restarted process waits at most about
	// three heartbeats for the horizon its previous run had persisted.
	Heartbeat time.Duration `yaml:"heartbeat"`
	// AcceptLazyCommits lets the worker table (idsql_workers) record leases
	// on a MySQL or MariaDB server that does not flush every commit to disk
	// (innodb_flush_log_at_trx_commit other than 1, or sync_binlog other
	// than 1 with binary logging). Such a server can lose a lease row in an
	// operating-system crash and hand its worker ID out twice, so by
	// default it is refused with registry.ErrNotDurable. On PostgreSQL each
	// lease commit asks for a synchronous commit, which a standby listed in
	// synchronous_standby_names holds too; a primary streaming to an
	// asynchronous standby, which a failover may promote without the last
	// leases, is refused the same way, and this accepts it (a logical
	// replication consumer, never promoted, counts as such a standby).
	// Segment ranges on such a PostgreSQL primary are refused and
	// accepted alike (segment.ErrNotDurable): a failover could lose an
	// allocation and hand its range out again.
	AcceptLazyCommits bool `yaml:"accept_lazy_commits"`
	// OneWriterNode says every process reaches a multi-writer cluster (a
	// MariaDB Galera cluster) through one node at a time: a proxy with one
	// writer node, which moves to another only when that one failed. A
	// Galera cluster can lose one of two concurrent updates of a row made
	// on different nodes, so worker-ID claims (registry.ErrMultiWriter)
	// and segment allocations (segment.ErrMultiWriter) on a Galera node
	// are refused without it. With it, each first waits until the node has
	// applied what the cluster committed before.
	OneWriterNode bool `yaml:"one_writer_node"`
	// Options holds the keys of the holder section that no field above
	// has: a holder kind's own keys (holderkind.Kind.Keys), handed to the kind
	// as they were decoded (holderkind.Settings.Options). A key that the
	// configured kind does not list is refused.
	Options map[string]any `yaml:",inline"`
}

// lastProcessWorker is the largest worker ID a process may lease: the
// layout's last less the database workers.
func (h HolderConfig) lastProcessWorker(layout snowflake.Layout) int64 {
	return layout.MaxWorker() - h.DatabaseWorkers
}

// reservedNote says, for an error about a worker ID out of range, that
// the range's top is kept for the database; empty when none is.
func (h HolderConfig) reservedNote(layout snowflake.Layout) string {
	if h.DatabaseWorkers == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d..%d are holder.database_workers)", h.lastProcessWorker(layout)+1, layout.MaxWorker())
}

// HeartbeatOrDefault returns Heartbeat, or the registry's default.
func (h HolderConfig) HeartbeatOrDefault() time.Duration {
	if h.Heartbeat > 0 {
		return h.Heartbeat
	}
	return registry.DefaultHeartbeat
}

// SnowflakeConfig tunes every snowflake generator of the namespace.
type SnowflakeConfig struct {
	// MaxBackward is how long to wait for a clock that stepped back; zero
	// means 5ms.
	MaxBackward time.Duration `yaml:"max_backward"`
	// RandomStart starts each tick's sequence at random below it (0 = off).
	RandomStart int `yaml:"random_start"`
}

// TableConfig configures one table's key.
type TableConfig struct {
	// Strategy is snowflake, uuid7 or segment. Required.
	Strategy Strategy `yaml:"strategy"`
	// Column is the key column; empty means "id".
	Column string `yaml:"column"`
	// Step is a segment table's initial range size; zero means DefaultStep.
	Step int64 `yaml:"step"`
	// Key is the segment key (Leaf's biz_tag); empty means the table name.
	Key string `yaml:"key"`
	// GoName overrides the Go type name the code generator derives from
	// the table name (OrderID for orders).
	GoName string `yaml:"go_name"`
	// Cached serves a snowflake table from a pre-filled ring buffer.
	Cached bool `yaml:"cached"`

	// MaxID caps the table's keys: a key above it is refused with an error
	// naming the table and the limit, never wrapped. Zero means no cap. See
	// keyspace.go.
	MaxID int64 `yaml:"max_id"`
	// Shard puts shard bits taken from a column of each inserted row into
	// the key (segment tables only). See ShardConfig.
	Shard *ShardConfig `yaml:"shard"`
	// App puts a fixed application ID into the low bits of every key
	// (segment tables only). See AppConfig.
	App *AppConfig `yaml:"app"`
	// FillZero fills the key of a row whose INSERT lists the key column
	// with DEFAULT, NULL, 0, or a bind value that is 0 or NULL (what gorm
	// and bun send for a new row); a non-zero key is always kept. Nil
	// means on; set it to false for a table where 0 is a real key. It does
	// not apply to a table with Shard (such statements pass unchanged).
	FillZero *bool `yaml:"fill_zero"`
	// Text is how the table's keys are written as text by the generated
	// key types (String, MarshalText, MarshalJSON, Parse) and read by the
	// CLI's decode and the ID server's decode endpoints; the zero value is
	// decimal. See TextForm.
	Text TextForm `yaml:"text"`
	// Shape is how the table's keys are laid out in the key space:
	// ordered (the default: in time order for a snowflake table, counting
	// up for a segment table), {spread: reverse} or {spread: hashed, bits:
	// N}, which spread inserts over a range-partitioned store. See Shape
	// and Config.Codec.
	Shape Shape `yaml:"shape"`
	// Buffer is where a segment table's pre-allocated keys wait: memory
	// (the default, each process's own double buffer) or redis (a Redis
	// list shared by every process, see Config.Redis and redisbuffer.go).
	Buffer string `yaml:"buffer"`
}

// FillsZero reports whether the front doors fill zero keys: FillZero, on
// by default, and never for a table with Shard.
func (t TableConfig) FillsZero() bool { return (t.FillZero == nil || *t.FillZero) && t.Shard == nil }

// KeyColumn returns the key column, defaulting to "id".
func (t TableConfig) KeyColumn() string {
	if t.Column == "" {
		return "id"
	}
	return t.Column
}

// StepOrDefault returns the segment step, defaulting to DefaultStep.
func (t TableConfig) StepOrDefault() int64 {
	if t.Step == 0 {
		return DefaultStep
	}
	return t.Step
}

// SegmentKey returns the table's segment key, defaulting to the table name.
func (c *Config) SegmentKey(table string) string {
	if k := c.Tables[table].Key; k != "" {
		return k
	}
	return table
}

// TableNames returns the configured table names in sorted order.
func (c *Config) TableNames() []string {
	names := make([]string, 0, len(c.Tables))
	for name := range c.Tables {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// SnowflakeLayout resolves the configured layout.
func (c *Config) SnowflakeLayout() (snowflake.Layout, error) {
	lc := c.Layout
	custom := lc.TimeBits != 0 || lc.WorkerBits != 0 || lc.SequenceBits != 0 || lc.Unit != 0 || !lc.Epoch.IsZero()
	switch {
	case custom && lc.Preset != "":
		return snowflake.Layout{}, fmt.Errorf("%w: give a preset or custom bits, not both", snowflake.ErrLayout)
	case custom:
		unit := lc.Unit
		if unit == 0 {
			unit = time.Millisecond
		}
		return snowflake.Layout{Name: "custom", TimeBits: lc.TimeBits, WorkerBits: lc.WorkerBits,
			SequenceBits: lc.SequenceBits, Unit: unit, Epoch: lc.Epoch}, nil
	case lc.Preset == "":
		return snowflake.Leaf, nil
	}
	return snowflake.Preset(lc.Preset)
}

// FieldError is a configuration problem in one field. Load adds the file and
// line.
type FieldError struct {
	File  string // the configuration file, when loaded from one
	Line  int    // 1-based line in File, 0 when unknown
	Field string // dotted path, e.g. "tables.orders.strategy"; empty when the problem is in no one field (a second YAML document)
	Err   error
}

func (e *FieldError) Error() string {
	var b strings.Builder
	b.WriteString("idsql: config: ")
	if e.File != "" {
		b.WriteString(e.File)
		if e.Line > 0 {
			b.WriteString(":" + strconv.Itoa(e.Line))
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause.
func (e *FieldError) Unwrap() error { return e.Err }

var (
	identRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	namespaceRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$`)
)

// ValidTableName reports whether name is a table name the configuration
// takes: an SQL identifier or a double-quoted name ("Mixed Case", with ""
// for a quote), optionally schema-qualified (shop.orders, "My Shop"."Order
// Items"). Unquoted names are not folded to lower case: every name is the
// catalog's name, and quotes only allow any character in it.
func ValidTableName(name string) bool {
	_, ok := dialect.SplitQualified(name)
	return ok
}

// SplitTableName returns the schema ("" when unqualified) and table of a
// configured table name, without quotes. ok is false when name is not
// valid (see ValidTableName).
func SplitTableName(name string) (schema, table string, ok bool) {
	parts, ok := dialect.SplitQualified(name)
	switch {
	case !ok:
		return "", "", false
	case len(parts) == 1:
		return "", parts[0], true
	}
	return parts[0], parts[1], true
}

// Validate checks the configuration against the time now and returns the
// first problem as a *FieldError naming the field.
func (c *Config) Validate(now time.Time) error {
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
	}
	if !namespaceRE.MatchString(c.Namespace) {
		if c.Namespace == "" {
			return fail("namespace", "is required")
		}
		return fail("namespace", "%q is not a valid namespace (letters, digits, _ . -; at most 64)", c.Namespace)
	}
	if c.Dialect != "" {
		if _, err := dialect.ByName(c.Dialect); err != nil {
			return fail("dialect", "unknown dialect %q (want %s)", c.Dialect, strings.Join(dialect.Names(), ", "))
		}
	}
	layout, err := c.SnowflakeLayout()
	if err == nil {
		err = layout.ValidateAt(now)
	}
	if err != nil {
		return &FieldError{Field: "layout", Err: err}
	}
	if err := c.validateHolder(layout); err != nil {
		return err
	}
	if c.Snowflake.MaxBackward < 0 {
		return fail("snowflake.max_backward", "%s is negative", c.Snowflake.MaxBackward)
	}
	if c.Snowflake.RandomStart < 0 || int64(c.Snowflake.RandomStart) > (layout.MaxSequence()+1)/2 {
		return fail("snowflake.random_start", "%d out of range 0..%d", c.Snowflake.RandomStart, (layout.MaxSequence()+1)/2)
	}
	// No tables is allowed: the wrapper then passes every statement
	// unchanged (and says so once when it opens), so an application can
	// wrap its driver before it configures tables.
	keys := map[string]string{}
	prefixes := map[string]string{}
	for _, name := range c.TableNames() {
		t := c.Tables[name]
		field := "tables." + name
		if !ValidTableName(name) {
			return fail(field, "%q is not a valid table name (an SQL identifier or a \"quoted name\", optionally schema.table)", name)
		}
		if !identRE.MatchString(t.KeyColumn()) {
			return fail(field+".column", "%q is not a valid column name", t.Column)
		}
		if t.GoName != "" && !identRE.MatchString(t.GoName) {
			return fail(field+".go_name", "%q is not a valid Go identifier", t.GoName)
		}
		if err := c.validateText(name, t, layout, prefixes); err != nil {
			return err
		}
		if err := c.validateKeySpace(name, t); err != nil {
			return err
		}
		if err := c.validateShape(name, t); err != nil {
			return err
		}
		if t.FillZero != nil && *t.FillZero && t.Shard != nil {
			return fail(field+".fill_zero", "does not apply to a table with shard: each key needs its row's shard, so leave the key column out of the INSERT")
		}
		if err := c.validateBuffer(name, t); err != nil {
			return err
		}
		switch t.Strategy {
		case Snowflake:
			if t.Step != 0 || t.Key != "" {
				return fail(field, "step and key apply to segment tables only")
			}
		case Segment:
			if t.Step < 0 {
				return fail(field+".step", "%d is negative", t.Step)
			}
			if t.Cached {
				return fail(field+".cached", "applies to snowflake tables only")
			}
			key := c.SegmentKey(name)
			if len(key) > 128 {
				return fail(field+".key", "longer than 128 bytes")
			}
			if other, dup := keys[key]; dup {
				return fail(field+".key", "segment key %q is also used by table %s", key, other)
			}
			keys[key] = name
		case UUID7:
			if err := validateUUID7(t, layout); err != nil {
				return &FieldError{Field: field, Err: err}
			}
		case "":
			return fail(field+".strategy", "is required (snowflake, uuid7 or segment)")
		default:
			return fail(field+".strategy", "unknown strategy %q (want snowflake, uuid7 or segment)", t.Strategy)
		}
	}
	return nil
}

func (c *Config) validateHolder(layout snowflake.Layout) error {
	h := c.Holder
	fail := func(field, format string, args ...any) error {
		return &FieldError{Field: "holder." + field, Err: fmt.Errorf(format, args...)}
	}
	kind := h.Kind
	if kind == "" {
		kind = holderLocal
	}
	hk, err := holderKind(kind)
	if err != nil {
		return &FieldError{Field: "holder.kind", Err: err}
	}
	allowed := hk.Modes
	if h.Mode != "" && !contains(allowed, h.Mode) {
		return fail("mode", "%q is not a mode of the %s holder (want %s)", h.Mode, kind, strings.Join(allowed, ", "))
	}
	if h.DatabaseWorkers < 0 || h.DatabaseWorkers > layout.MaxWorker() {
		return fail("database_workers", "%d is outside 0..%d: the layout %s has %d worker IDs, and processes need at least one",
			h.DatabaseWorkers, layout.MaxWorker(), layout.Name, layout.MaxWorker()+1)
	}
	for id, w := range h.Workers {
		if last := h.lastProcessWorker(layout); w < 0 || w > last {
			return fail("workers."+id, "worker ID %d out of range 0..%d for layout %s%s", w, last, layout.Name, h.reservedNote(layout))
		}
	}
	if h.OrdinalOffset < 0 {
		return fail("ordinal_offset", "%d is negative", h.OrdinalOffset)
	}
	if h.OrdinalOffset != 0 && h.Instance != InstanceOrdinal {
		return fail("ordinal_offset", "is used only with holder.instance: %s", InstanceOrdinal)
	}
	if h.Port < 0 || h.Port > 65535 {
		return fail("port", "%d is not a port", h.Port)
	}
	if h.SessionTimeout < 0 {
		return fail("session_timeout", "%s is negative", h.SessionTimeout)
	}
	if h.TickTime < 0 {
		return fail("tick_time", "%s is negative", h.TickTime)
	}
	if h.Heartbeat < 0 {
		return fail("heartbeat", "%s is negative", h.Heartbeat)
	}
	// What is particular to the kind, the kind checks: the keys it needs,
	// their values, and which keys it reads at all. A key no kind reads
	// is a misspelling, said first; one that another kind reads comes
	// after the kind's check, which may know better ("the etcd holder
	// takes its addresses in holder.endpoints").
	for _, key := range h.kindKeys() {
		if !contains(hk.Keys, key) && len(holderkind.KeyUsers(key)) == 0 {
			return &FieldError{Field: "holder." + key, Err: unreadKey(kind, key)}
		}
	}
	if hk.Check != nil {
		if err := hk.Check(h.settings()); err != nil {
			var ke *holderkind.KeyError
			if errors.As(err, &ke) {
				return &FieldError{Field: "holder." + ke.Key, Err: ke.Err}
			}
			return &FieldError{Field: "holder", Err: fmt.Errorf("the %s holder: %w", kind, err)}
		}
	}
	for _, key := range h.kindKeys() {
		if contains(hk.Keys, key) {
			continue
		}
		return &FieldError{Field: "holder." + key, Err: unreadKey(kind, key)}
	}
	return nil
}

// kindKeys returns the keys of the holder section that only some kinds
// read (holderkind.Kind.Keys) and that h sets, in order: the fields servers,
// endpoints and tick_time, then Options. (session_timeout and workers
// every kind takes: a kind without a session or a static map ignores
// them.)
func (h HolderConfig) kindKeys() []string {
	var keys []string
	for _, k := range []struct {
		key string
		set bool
	}{
		{"servers", len(h.Servers) > 0},
		{"endpoints", len(h.Endpoints) > 0},
		{"tick_time", h.TickTime != 0},
	} {
		if k.set {
			keys = append(keys, k.key)
		}
	}
	return append(keys, slices.Sorted(maps.Keys(h.Options))...)
}

// unreadKey is the error for a holder key that the configured kind does
// not read: it names the kinds that do, or, for a key no kind linked in
// reads and the configuration has no field for, the keys there are.
func unreadKey(kind HolderKind, key string) error {
	users := holderkind.KeyUsers(key)
	switch {
	case len(users) == 1:
		return fmt.Errorf("only the %s holder uses %s", users[0], key)
	case len(users) > 1:
		return fmt.Errorf("only the %s and %s holders use %s", strings.Join(users[:len(users)-1], ", "), users[len(users)-1], key)
	}
	known := yamlKeys()[reflect.TypeOf(HolderConfig{}).String()]
	if contains(known, key) {
		return fmt.Errorf("the %s holder does not use %s", kind, key)
	}
	for _, k := range holderkind.Keys() {
		if !contains(known, k) {
			known = append(known, k)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "unknown key %q", key)
	if near := nearestKey(key, known); near != "" {
		fmt.Fprintf(&b, "; did you mean %q?", near)
	}
	fmt.Fprintf(&b, " (keys here: %s)", strings.Join(known, ", "))
	return errors.New(b.String())
}

// RegistrySettings returns the settings of the worker registry
// (idsql_workers) that the holder section sets: its heartbeat, and the
// risks it accepts (accept_lazy_commits, one_writer_node).
func (h HolderConfig) RegistrySettings() registry.Settings {
	return registry.Settings{Heartbeat: h.Heartbeat, AcceptLazyCommits: h.AcceptLazyCommits, OneWriterNode: h.OneWriterNode}
}

// ConfigureStore makes a segment store accept the risks the holder
// section accepts (accept_lazy_commits, one_writer_node).
func (h HolderConfig) ConfigureStore(store *segment.SQLStore) {
	store.AcceptLazyCommits(h.AcceptLazyCommits)
	store.OneWriterNode(h.OneWriterNode)
}

// settings returns what the holder kind is made from and checked
// against, from the configuration alone (no cache directory, clock or
// registry).
func (h HolderConfig) settings() holderkind.Settings {
	return holderkind.Settings{Mode: h.Mode, Servers: h.Servers, Endpoints: h.Endpoints, Workers: h.Workers,
		SessionTimeout: h.SessionTimeout, TickTime: h.TickTime, Heartbeat: h.HeartbeatOrDefault(), Options: h.Options}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Load reads and validates a YAML configuration file. Errors name the file,
// the line and the field.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("idsql: config: %w", err)
	}
	return Parse(path, data, time.Now())
}

// Parse decodes and validates YAML configuration read from name, checking
// the layout against now.
func Parse(name string, data []byte, now time.Time) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	switch err := dec.Decode(&c); {
	case errors.Is(err, io.EOF):
		return nil, &FieldError{File: name, Err: errEmptyConfig}
	case err != nil:
		if fe := unknownKeyError(data, err); fe != nil {
			fe.File = name
			return nil, fe
		}
		return nil, fmt.Errorf("idsql: config: %s: %w", name, err)
	}
	// One document only: the fields of a second one would be ignored.
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, fmt.Errorf("idsql: config: %s: after the first YAML document: %w", name, err)
	default:
		return nil, &FieldError{File: name, Line: extra.Line,
			Err: errors.New("a second YAML document starts here; the configuration is one document (remove the --- and what follows, or merge it into the first)")}
	}
	if err := c.Validate(now); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			fe.File = name
			fe.Line = FieldLine(data, fe.Field)
		}
		return nil, err
	}
	return &c, nil
}

// FieldLine returns the 1-based line of a dotted field path, as in
// FieldError.Field ("holder.kind", "tables.public.orders.strategy"), in a
// YAML document: the line of the deepest key of the path that is present, or
// 0. Table names may contain dots, so those are matched against the
// document's keys rather than split.
func FieldLine(data []byte, field string) int {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return 0
	}
	n, line := root.Content[0], 0
	for rest := field; rest != ""; {
		if n.Kind != yaml.MappingNode {
			break
		}
		var key *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			// The longest key that is the whole rest or a dotted prefix.
			if (rest == k || strings.HasPrefix(rest, k+".")) && (key == nil || len(k) > len(key.Value)) {
				key, n = n.Content[i], n.Content[i+1]
			}
		}
		if key == nil {
			break
		}
		line = key.Line
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, key.Value), ".")
	}
	return line
}

// UnmarshalYAML accepts a preset name or a mapping.
func (l *LayoutConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		l.Preset = n.Value
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "preset", "time_bits", "worker_bits", "sequence_bits", "unit", "epoch":
		default:
			// The message yaml gives for an unknown field, so that Parse
			// reports it as it reports every other unknown key.
			return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: field %s not found in type %T", k.Line, k.Value, *l)}}
		}
	}
	var raw struct {
		Preset       string        `yaml:"preset"`
		TimeBits     int           `yaml:"time_bits"`
		WorkerBits   int           `yaml:"worker_bits"`
		SequenceBits int           `yaml:"sequence_bits"`
		Unit         time.Duration `yaml:"unit"`
		Epoch        yaml.Node     `yaml:"epoch"`
	}
	if err := n.Decode(&raw); err != nil {
		return err
	}
	*l = LayoutConfig{Preset: raw.Preset, TimeBits: raw.TimeBits, WorkerBits: raw.WorkerBits,
		SequenceBits: raw.SequenceBits, Unit: raw.Unit}
	if raw.Epoch.Kind == 0 {
		return nil
	}
	if ms, err := strconv.ParseInt(raw.Epoch.Value, 10, 64); err == nil {
		l.Epoch = time.UnixMilli(ms).UTC()
		return nil
	}
	t, err := time.Parse(time.RFC3339Nano, raw.Epoch.Value)
	if err != nil {
		if t, err = time.Parse(time.DateOnly, raw.Epoch.Value); err != nil {
			return fmt.Errorf("line %d: epoch %q: want RFC 3339, YYYY-MM-DD or Unix milliseconds", raw.Epoch.Line, raw.Epoch.Value)
		}
	}
	l.Epoch = t.UTC()
	return nil
}
