package redisqueue

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// Defaults applied to zero fields of Settings.
const (
	DefaultNamespace     = "idsql"
	DefaultStep          = 1000
	DefaultBatch         = 100
	DefaultLowWater      = 0.2
	DefaultLockTTL       = 10 * time.Second
	DefaultWaitTimeout   = 3 * time.Second
	DefaultLoadTimeout   = 5 * time.Second
	DefaultRetryInterval = time.Second
	DefaultPushChunk     = 1000
)

// maxPushChunk bounds PushChunk: the push script passes a chunk to RPUSH
// through Lua's unpack, whose stack holds a few thousand values.
const maxPushChunk = 4000

// Settings configures a Queue. The zero value means "all defaults"; each
// zero field takes the default named in its comment. Impossible values are
// rejected by New with an error naming the field.
type Settings struct {
	// Namespace prefixes every Redis key the queue uses (default "idsql").
	// Queues that share keys must share the namespace and the database;
	// two databases must never share a namespace on one Redis, or ranges
	// of both would mix in one list.
	Namespace string

	// Step is how many keys one refill allocates from the store and pushes
	// (default 1000). The key's stored step in idsql_alloc is not used.
	Step int64

	// Batch is how many keys one pop takes from Redis into the process's
	// local buffer (default 100). Keys in the buffer of a process that dies
	// are lost (skipped, never reissued): at most about two batches per
	// key, the buffer and one batch popped ahead in the background.
	Batch int

	// LowWater is the fraction of Step below which the list is refilled
	// (default 0.2): a pop that leaves fewer than LowWater*Step keys in the
	// list starts a refill in the background. Must be in (0, 1].
	LowWater float64

	// LockTTL is the time to live of the refill lock (default 10 s). The
	// lock only keeps refillers from allocating ranges at the same time;
	// uniqueness never depends on it.
	LockTTL time.Duration

	// WaitTimeout bounds how long a caller waits for keys when the list is
	// empty and another process is refilling it (default 3 s).
	WaitTimeout time.Duration

	// LoadTimeout bounds one allocation against the store (default 5 s).
	LoadTimeout time.Duration

	// PushChunk is how many keys one push script appends (default 1000,
	// at most 4000).
	PushChunk int

	// NoFallback turns the fallback off: when Redis cannot be reached, Next
	// fails with an error wrapping ErrRedisDown instead of handing out
	// keys from ranges allocated directly from the store.
	NoFallback bool

	// RetryInterval is how often, while Redis is down, one caller tries
	// Redis again (default 1 s).
	RetryInterval time.Duration

	// Fallback configures the segment generator used while Redis is down
	// (its zero value: the segment package's defaults). Its Instance and
	// LoadTimeout default to this Settings' ones.
	Fallback segment.Settings

	// Instance identifies this process in idsql_alloc_log.instance
	// (default "host:pid").
	Instance string

	// Logger receives the queue's notes: Redis down and back, refills that
	// failed, stale lists found after a Redis restart (default
	// slog.Default()).
	Logger *slog.Logger
}

// ErrInvalidSettings is wrapped by the error New returns for bad Settings.
var ErrInvalidSettings = errors.New("redisqueue: invalid settings")

func (s Settings) withDefaults() (Settings, error) {
	bad := func(field string, v any, reason string) (Settings, error) {
		return Settings{}, fmt.Errorf("%w: Settings.%s %v: %s", ErrInvalidSettings, field, v, reason)
	}
	if s.Namespace == "" {
		s.Namespace = DefaultNamespace
	}
	if s.Step < 0 {
		return bad("Step", s.Step, "must not be negative")
	}
	if s.Step == 0 {
		s.Step = DefaultStep
	}
	if s.Batch < 0 {
		return bad("Batch", s.Batch, "must not be negative")
	}
	if s.Batch == 0 {
		s.Batch = DefaultBatch
	}
	if s.LowWater == 0 {
		s.LowWater = DefaultLowWater
	}
	if !(s.LowWater > 0 && s.LowWater <= 1) {
		return bad("LowWater", s.LowWater, "must be in (0, 1]")
	}
	if s.PushChunk < 0 || s.PushChunk > maxPushChunk {
		return bad("PushChunk", s.PushChunk, fmt.Sprintf("must be in [0, %d]", maxPushChunk))
	}
	if s.PushChunk == 0 {
		s.PushChunk = DefaultPushChunk
	}
	for _, d := range []struct {
		name string
		p    *time.Duration
		def  time.Duration
	}{
		{"LockTTL", &s.LockTTL, DefaultLockTTL},
		{"WaitTimeout", &s.WaitTimeout, DefaultWaitTimeout},
		{"LoadTimeout", &s.LoadTimeout, DefaultLoadTimeout},
		{"RetryInterval", &s.RetryInterval, DefaultRetryInterval},
	} {
		if *d.p < 0 {
			return bad(d.name, *d.p, "must not be negative")
		}
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	if s.Instance == "" {
		s.Instance = segment.DefaultInstance()
	}
	if s.Fallback.Instance == "" {
		s.Fallback.Instance = s.Instance
	}
	if s.Fallback.LoadTimeout == 0 {
		s.Fallback.LoadTimeout = s.LoadTimeout
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s, nil
}
