package idsql

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"sync/atomic"
)

// ErrKeySpaceExhausted is wrapped by the errors of a table whose next key
// would lie above its max_id. idsql never wraps keys around: once a table
// reaches its max_id it issues no key until the limit is raised (and the
// process restarted).
var ErrKeySpaceExhausted = errors.New("idsql: key space exhausted")

// KeySpaceWarnAt is the fraction of a table's max_id at which Keys logs a
// warning, once per table and process.
const KeySpaceWarnAt = 0.8

// KeySpace is how much of a capped table's key space (max_id) this process
// has seen used.
type KeySpace struct {
	Table   string
	MaxID   int64 // the table's max_id
	Highest int64 // the highest key this process has issued for the table; 0 before the first
	// Exhausted is true once a key above MaxID was drawn (and refused): the
	// table issues no more keys.
	Exhausted bool
}

// Used returns Highest as a fraction of MaxID (1 once exhausted).
func (s KeySpace) Used() float64 {
	if s.Exhausted {
		return 1
	}
	return float64(s.Highest) / float64(s.MaxID)
}

// keyLimit enforces one table's max_id and tracks its use. Every batch of
// keys is checked whole before any of it is handed out, so a multi-row
// INSERT that would cross the limit gets no key at all (and writes nothing).
type keyLimit struct {
	table  string
	max    int64
	warnAt int64
	log    *slog.Logger

	high   atomic.Int64
	gap    atomic.Int64 // the lowest key at most max of the first refused batch: keys from it to max were never handed out
	warned atomic.Bool
	out    atomic.Bool // some source of the table drew a key above max
}

func newKeyLimit(table string, maxID int64, log *slog.Logger) *keyLimit {
	if maxID <= 0 {
		return nil
	}
	return &keyLimit{table: table, max: maxID, warnAt: int64(float64(maxID) * KeySpaceWarnAt), log: log}
}

// check refuses ids when one of them is above the limit. out is the flag of
// the source the ids came from (a sharded table has one per shard, whose
// keys grow independently); once set, the source refuses at once without
// drawing keys it could not use. Keys of one source only grow, so a source
// past the limit stays past it.
func (l *keyLimit) check(ids []int64, out *atomic.Bool) error {
	if l == nil {
		return nil
	}
	if out.Load() {
		return l.exhausted()
	}
	var hi int64
	lo := int64(math.MaxInt64)
	for _, id := range ids {
		hi, lo = max(hi, id), min(lo, id)
	}
	if hi > l.max {
		out.Store(true)
		l.out.Store(true)
		if lo <= l.max {
			l.gap.CompareAndSwap(0, lo)
		}
		return l.refusedBatch(len(ids), lo, hi)
	}
	for {
		c := l.high.Load()
		if hi <= c || l.high.CompareAndSwap(c, hi) {
			break
		}
	}
	if hi >= l.warnAt && !l.warned.Swap(true) {
		l.log.Warn("idsql: table has used most of its key space (max_id); keys are never wrapped: raise max_id before it runs out",
			"table", l.table, "key", hi, "max_id", l.max, "used", float64(hi)/float64(l.max))
	}
	return nil
}

// refused is the error of a source that drew a key above the limit (out
// set): it refuses at once, without drawing keys it could not use. nil
// while the source may draw, and without a limit.
func (l *keyLimit) refused(out *atomic.Bool) error {
	if l == nil || !out.Load() {
		return nil
	}
	return l.exhausted()
}

// admit takes the keys a source appended to dst after start, all or none:
// after err, or when one is above the limit, it returns dst[:start] and the
// error (the keys drawn are gaps).
func (l *keyLimit) admit(dst []int64, start int, out *atomic.Bool, err error) ([]int64, error) {
	if err == nil {
		err = l.check(dst[start:], out)
	}
	if err != nil {
		return dst[:start], err
	}
	return dst, nil
}

// refusedBatch returns the error for a batch of n keys lo..hi drawn and
// refused because hi is above the limit.
func (l *keyLimit) refusedBatch(n int, lo, hi int64) error {
	what := fmt.Sprintf("next key %d is above max_id %d", hi, l.max)
	if n > 1 {
		what = fmt.Sprintf("a batch of %d keys reaching %d would cross max_id %d, so it is refused whole", n, hi, l.max)
	}
	if lo <= l.max {
		what += fmt.Sprintf("; its keys %d..%d were never handed out and are left as a gap", lo, l.max)
	}
	return fmt.Errorf("%w: table %s: %s (keys are never wrapped; raise max_id and restart)", ErrKeySpaceExhausted, l.table, what)
}

// exhausted returns the error of a source that refuses without drawing,
// once a key above the limit was drawn.
func (l *keyLimit) exhausted() error {
	if gap := l.gap.Load(); gap > 0 {
		return fmt.Errorf("%w: table %s issues no more keys: a batch crossing max_id %d was refused, and keys %d..%d were never handed out: they are left as a gap (keys are never wrapped; raise max_id and restart)",
			ErrKeySpaceExhausted, l.table, l.max, gap, l.max)
	}
	return fmt.Errorf("%w: table %s has used its keys up to max_id %d (keys are never wrapped; raise max_id and restart)", ErrKeySpaceExhausted, l.table, l.max)
}

func (l *keyLimit) space() KeySpace {
	return KeySpace{Table: l.table, MaxID: l.max, Highest: l.high.Load(), Exhausted: l.out.Load()}
}

// KeySpaces returns the use of the key space of every table with a max_id,
// sorted by table: what the ID server exports as gauges. It counts the
// keys this process issued only; a table not used yet shows Highest 0.
func (k *Keys) KeySpaces() []KeySpace {
	out := make([]KeySpace, 0, len(k.limits))
	for _, l := range k.limits {
		out = append(out, l.space())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out
}
