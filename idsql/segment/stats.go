package segment

import (
	"slices"
	"strings"
	"time"
)

// Snapshot is the state of a Generator at one moment, for monitoring (the
// HTTP monitor page renders it). Obtain it with Generator.Snapshot.
type Snapshot struct {
	Time         time.Time  // when it was taken (Settings.Now)
	Instance     string     // Settings.Instance
	LastRefresh  time.Time  // last read of the key list
	RefreshError string     // error of that read, "" if it succeeded
	Keys         []KeyStats // sorted by key
}

// KeyStats is the state of one key.
type KeyStats struct {
	Key        string
	Current    SegmentStats // the segment IDs come from
	Next       SegmentStats // the segment loaded in advance (Ready false if none)
	Loading    bool         // a background load is under way
	BackingOff bool         // ... and waiting to retry after an error
	Step       int64        // size requested by the last load
	StoredStep int64        // the key's step in the store, floor of Step
	LastLoad   time.Time    // when the last load started
	Loads      uint64       // ranges installed by background loads
	LoadErrors uint64       // failed load attempts
	Waits      uint64       // calls that found both segments empty and waited
	Timeouts   uint64       // waits that ended with ErrTimeout
	Direct     uint64       // ranges allocated directly by NextIDs
	LastError  string       // error of the last load attempt, "" after a success
	Removed    bool         // dropped by a refresh: the key no longer exists
}

// SegmentStats describes one in-memory segment.
type SegmentStats struct {
	Ready  bool      // holds a range
	First  int64     // first ID of the range
	Max    int64     // last ID of the range
	Value  int64     // last ID handed out (First-1 if none)
	Step   int64     // number of IDs in the range
	Idle   int64     // IDs left
	Loaded time.Time // when the range arrived
}

func segmentStats(s *segment) SegmentStats {
	if s == nil || s.max == 0 {
		return SegmentStats{}
	}
	v := min(s.cursor.Load(), s.max)
	return SegmentStats{
		Ready: true, First: s.first, Max: s.max, Value: v,
		Step: s.max - s.first + 1, Idle: s.max - v, Loaded: s.loaded,
	}
}

// Stats returns the key's state.
func (k *Key) Stats() KeyStats {
	k.mu.Lock()
	defer k.mu.Unlock()
	st := KeyStats{
		Key:        k.name,
		Current:    segmentStats(k.cur.Load()),
		Next:       segmentStats(k.next),
		Loading:    k.loading,
		BackingOff: k.backingOff,
		Step:       k.step,
		StoredStep: k.minStep,
		LastLoad:   k.lastLoad,
		Loads:      k.loads,
		LoadErrors: k.loadErrors,
		Waits:      k.waits,
		Timeouts:   k.timeouts,
		Direct:     k.direct,
		Removed:    k.removed.Load(),
	}
	if k.lastErr != nil {
		st.LastError = k.lastErr.Error()
	}
	return st
}

// Snapshot returns the state of every key.
func (g *Generator) Snapshot() Snapshot {
	g.refreshMu.Lock()
	snap := Snapshot{Time: g.s.Now(), Instance: g.s.Instance, LastRefresh: g.lastRefresh}
	if g.lastRefreshErr != nil {
		snap.RefreshError = g.lastRefreshErr.Error()
	}
	g.refreshMu.Unlock()
	for _, k := range *g.keys.Load() {
		snap.Keys = append(snap.Keys, k.Stats())
	}
	slices.SortFunc(snap.Keys, func(a, b KeyStats) int { return strings.Compare(a.Key, b.Key) })
	return snap
}
