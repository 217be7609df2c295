package segment

import (
	"fmt"
	"math"
	"os"
	"time"
)

// Defaults applied to zero fields of Settings.
const (
	DefaultThreshold       = 0.1
	DefaultTargetDuration  = 15 * time.Minute
	DefaultMaxStep         = 1_000_000
	DefaultRefreshInterval = 60 * time.Second
	DefaultWaitTimeout     = 3 * time.Second
	DefaultLoadTimeout     = 10 * time.Second
	DefaultRetryMin        = 50 * time.Millisecond
	DefaultRetryMax        = 5 * time.Second
)

// MaxID is the largest ID a segment key hands out. The space above it is kept
// free so that counters overshooting a segment's end can never wrap around.
const MaxID = math.MaxInt64 - 1<<32

// Settings configures a Generator. The zero value means "all defaults";
// each zero field takes the default named in its comment. Negative or
// otherwise impossible values are rejected by New with a *SettingsError
// naming the field.
type Settings struct {
	// Threshold is the fraction of the current segment that must be used
	// before the next segment is loaded in the background (default 0.1, as
	// in Leaf). Must be in (0, 1).
	Threshold float64

	// TargetDuration is how long one segment should last (default 15 min).
	// A segment consumed faster doubles the next step (up to MaxStep); one
	// lasting between 1x and 2x keeps it; a slower one halves it, never below
	// the step stored in the database.
	TargetDuration time.Duration

	// MaxStep bounds the adaptive step (default 1,000,000). The stored step
	// of a key wins when it is larger.
	MaxStep int64

	// RefreshInterval is how often the key list is re-read from the store to
	// pick up new keys and drop removed ones (default 60 s). Negative
	// disables the periodic refresh (Refresh can still be called).
	RefreshInterval time.Duration

	// WaitTimeout bounds how long a caller waits for a range when both
	// segments of its key are empty (default 3 s).
	WaitTimeout time.Duration

	// LoadTimeout bounds one allocation attempt against the store
	// (default 10 s).
	LoadTimeout time.Duration

	// RetryMin and RetryMax bound the exponential backoff between failed
	// background loads (defaults 50 ms and 5 s).
	RetryMin, RetryMax time.Duration

	// Instance identifies this process in idsql_alloc_log.instance
	// (default "host:pid").
	Instance string

	// Now is the clock used for step adaptation and the times in
	// snapshots (default time.Now). Tests inject a fake one.
	Now func() time.Time
}

// withDefaults validates s and returns a copy with defaults filled in.
func (s Settings) withDefaults() (Settings, error) {
	bad := func(field string, v any, reason string) (Settings, error) {
		return Settings{}, &SettingsError{Field: field, Value: v, Reason: reason}
	}
	if s.Threshold == 0 {
		s.Threshold = DefaultThreshold
	}
	if !(s.Threshold > 0 && s.Threshold < 1) { // also rejects NaN
		return bad("Threshold", s.Threshold, "must be in (0, 1)")
	}
	durations := []struct {
		name string
		p    *time.Duration
		def  time.Duration
		neg  bool // negative allowed
	}{
		{"TargetDuration", &s.TargetDuration, DefaultTargetDuration, false},
		{"RefreshInterval", &s.RefreshInterval, DefaultRefreshInterval, true},
		{"WaitTimeout", &s.WaitTimeout, DefaultWaitTimeout, false},
		{"LoadTimeout", &s.LoadTimeout, DefaultLoadTimeout, false},
		{"RetryMin", &s.RetryMin, DefaultRetryMin, false},
		{"RetryMax", &s.RetryMax, DefaultRetryMax, false},
	}
	for _, d := range durations {
		if *d.p < 0 && !d.neg {
			return bad(d.name, *d.p, "must not be negative")
		}
		if *d.p == 0 {
			*d.p = d.def
		}
	}
	if s.RetryMax < s.RetryMin {
		return bad("RetryMax", s.RetryMax, fmt.Sprintf("must be at least RetryMin (%v)", s.RetryMin))
	}
	if s.MaxStep < 0 {
		return bad("MaxStep", s.MaxStep, "must not be negative")
	}
	if s.MaxStep == 0 {
		s.MaxStep = DefaultMaxStep
	}
	if s.Instance == "" {
		s.Instance = DefaultInstance()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	return s, nil
}

// DefaultInstance returns "host:pid", the default Settings.Instance.
func DefaultInstance() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}
