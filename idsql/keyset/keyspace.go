package keyset

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
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
	Table string
	// MaxID is the table's max_id; with a hashed shape, the largest key
	// the shape takes, 2^(B-N)-1 (see Config.shapeFunc). MaxID and
	// Highest count keys as made, before the table's shape.
	MaxID   int64
	Highest int64 // the highest key this process has issued for the table; 0 before the first
	// Exhausted is true once the table (or one of its shards) can issue no
	// more keys: every key up to MaxID it could reach is issued.
	Exhausted bool
}

// Used returns Highest as a fraction of MaxID (1 once exhausted).
func (s KeySpace) Used() float64 {
	if s.Exhausted {
		return 1
	}
	return float64(s.Highest) / float64(s.MaxID)
}

// keyLimit enforces one table's max_id and tracks its use. A refused
// request costs nothing: a request for more keys than remain below max_id
// is refused before any key is drawn, and when a drawn batch crosses max_id
// anyway (the process could not know the next key, as for the first
// request), the keys at most max_id drawn with it are kept and handed out
// to later requests. A multi-row INSERT that would cross the limit gets no
// key at all (and writes nothing).
//
// It is also where a table's codec shapes its keys (Codec.Shape): the
// one place every key source of Keys passes its keys through, so every
// front door issues shaped keys. The limit counts the keys as made; they
// are shaped as they are handed out, so max is the largest key the shape
// takes (a hashed shape's is below max_id).
type keyLimit struct {
	table  string
	max    int64
	what   string // "max_id N", or the shape's limit, for messages
	report bool   // the table has a max_id: KeySpaces lists it
	warnAt int64
	log    *slog.Logger
	codec  *Codec
	spread bool

	high   atomic.Int64
	warned atomic.Bool
	spent  atomic.Bool // some source of the table can issue no more keys
}

// limitSource is what a keyLimit keeps for one source of a table's keys (a
// sharded table has one per shard, whose keys grow independently). Keys of
// one source only grow, so a source that drew a key above max_id draws no
// more: it hands out what it kept.
type limitSource struct {
	high atomic.Int64 // the highest key the source issued
	out  atomic.Bool  // a key above max_id was drawn
	back atomic.Bool  // keys were given back (giveBack) and wait in kept

	mu   sync.Mutex
	kept []int64 // ascending: keys at most max_id drawn with a refused batch, or given back, not handed out yet
}

// newKeyLimit returns the limit of a table with max_id maxID (0: none)
// and codec c, or nil when it has neither a max_id nor a spread shape.
func newKeyLimit(table string, maxID int64, c *Codec, log *slog.Logger) *keyLimit {
	spread := c.Spread()
	if maxID <= 0 && !spread {
		return nil
	}
	f := c.ShapeFunc()
	l := &keyLimit{table: table, max: maxID, report: maxID > 0, log: log, codec: c, spread: spread}
	if spread {
		l.max = f.MaxKey()
	}
	l.what = fmt.Sprintf("max_id %d", l.max)
	if l.max != maxID {
		l.what = fmt.Sprintf("%d, the largest key shape %s takes", l.max, f.Shape())
	}
	l.warnAt = int64(float64(l.max) * KeySpaceWarnAt)
	return l
}

// shaped applies the table's shape to the keys dst[start:], which are
// within the limit; on an error (which the limit rules out) it drops them.
func (l *keyLimit) shaped(dst []int64, start int) ([]int64, error) {
	if !l.spread {
		return dst, nil
	}
	for i := start; i < len(dst); i++ {
		k, err := l.codec.Shape(dst[i])
		if err != nil {
			return dst[:start], fmt.Errorf("idsql: table %s: %w", l.table, err)
		}
		dst[i] = k
	}
	return dst, nil
}

// take appends n keys of source s to dst, all or none, drawing them with
// draw (which appends n keys to its argument). Without a limit it is draw.
func (l *keyLimit) take(dst []int64, n int, s *limitSource, draw func([]int64) ([]int64, error)) ([]int64, error) {
	if l == nil {
		return draw(dst)
	}
	if n <= 0 {
		return dst, nil
	}
	if s.out.Load() {
		return l.fromKept(dst, n, s)
	}
	if s.back.Load() {
		if dst, ok, err := l.fromBack(dst, n, s); ok {
			return dst, err
		}
	}
	// The source's keys grow by at least 1 each: n keys after its highest
	// reach at least high+n.
	if h := s.high.Load(); h > 0 && h > l.max-int64(n) {
		if h >= l.max {
			l.spent.Store(true)
		}
		return dst, l.tooMany(n, l.max-h, "")
	}
	start := len(dst)
	dst, err := draw(dst)
	if err != nil {
		return dst[:start], err // keys drawn before the error are gaps
	}
	ids := dst[start:]
	var hi int64
	for _, id := range ids {
		hi = max(hi, id)
	}
	if hi > l.max {
		left := l.keep(ids, s)
		return dst[:start], l.crossed(n, hi, left)
	}
	l.issued(hi, s)
	return l.shaped(dst, start)
}

// keep marks s as past the limit and keeps the keys of ids at most max_id
// for later requests. It returns how many keys s has kept.
func (l *keyLimit) keep(ids []int64, s *limitSource) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if id <= l.max {
			s.kept = append(s.kept, id)
		}
	}
	slices.Sort(s.kept)
	s.out.Store(true)
	if len(s.kept) == 0 {
		l.spent.Store(true)
	}
	return len(s.kept)
}

// fromKept hands out n of the keys s kept, or refuses without drawing.
func (l *keyLimit) fromKept(dst []int64, n int, s *limitSource) ([]int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.kept) < n {
		return dst, l.tooMany(n, int64(len(s.kept)), " (they were drawn before a request that crossed it)")
	}
	start := len(dst)
	dst = append(dst, s.kept[:n]...)
	s.kept = s.kept[n:]
	if len(s.kept) == 0 {
		l.spent.Store(true)
	}
	l.issued(dst[len(dst)-1], s)
	return l.shaped(dst, start)
}

// giveBack returns to s keys that take handed out for a request which then
// failed as a whole (another shard's keys were refused), so that the
// failure costs them nothing: s hands them out again before drawing new
// ones. Without a limit nothing refuses a request once it has drawn (a
// failure is then the source's own error), and the keys are gaps.
func (l *keyLimit) giveBack(ids []int64, s *limitSource) {
	if l == nil || len(ids) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if l.spread {
			k, err := l.codec.Unshape(id)
			if err != nil {
				continue // not a key take shaped; cannot happen
			}
			id = k
		}
		s.kept = append(s.kept, id)
	}
	slices.Sort(s.kept)
	s.back.Store(true)
}

// fromBack hands out n keys given back to s (giveBack), the lowest first,
// when that many wait; ok is false when fewer do, which wait for a request
// they cover while this one draws new keys.
func (l *keyLimit) fromBack(dst []int64, n int, s *limitSource) (_ []int64, ok bool, _ error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.out.Load() || len(s.kept) < n {
		return dst, false, nil
	}
	start := len(dst)
	dst = append(dst, s.kept[:n]...)
	s.kept = s.kept[n:]
	if len(s.kept) == 0 {
		s.back.Store(false)
	}
	dst, err := l.shaped(dst, start)
	return dst, true, err
}

// issued records that the keys of s up to hi were issued, and warns once
// when the table passed KeySpaceWarnAt of its key space.
func (l *keyLimit) issued(hi int64, s *limitSource) {
	raise(&s.high, hi)
	raise(&l.high, hi)
	if hi >= l.warnAt && !l.warned.Swap(true) {
		l.log.Warn("idsql: table has used most of its key space (max_id); keys are never wrapped: raise max_id before it runs out",
			"table", l.table, "key", hi, "max_id", l.max, "limit", l.what, "used", float64(hi)/float64(l.max))
	}
}

// raise sets v to hi unless it holds more.
func raise(v *atomic.Int64, hi int64) {
	for {
		c := v.Load()
		if hi <= c || v.CompareAndSwap(c, hi) {
			return
		}
	}
}

// crossed returns the error for a request of n keys refused because the
// keys drawn for it reached hi, above the limit; left keys at most the
// limit remain for later requests.
func (l *keyLimit) crossed(n int, hi int64, left int) error {
	what := fmt.Sprintf("next key %d is above %s", hi, l.what)
	if n > 1 {
		what = fmt.Sprintf("a batch of %d keys reaching %d would cross %s, so it is refused whole", n, hi, l.what)
	}
	fix := "keys are never wrapped; raise max_id and restart"
	if left > 0 {
		what += fmt.Sprintf("; the %d keys below max_id drawn for it are kept for later requests, none is lost", left)
		fix = fmt.Sprintf("ask for at most %d keys, or raise max_id and restart", left)
	}
	return fmt.Errorf("%w: table %s: %s (%s)", ErrKeySpaceExhausted, l.table, what, fix)
}

// tooMany returns the error for a request of n keys refused before
// drawing because at most left keys remain below the limit.
func (l *keyLimit) tooMany(n int, left int64, why string) error {
	if left <= 0 {
		return fmt.Errorf("%w: table %s has used its keys up to %s (keys are never wrapped; raise max_id and restart)", ErrKeySpaceExhausted, l.table, l.what)
	}
	return fmt.Errorf("%w: table %s: %d keys asked, but at most %d remain below %s%s; refused whole, no key was drawn (ask for at most %d keys, or raise max_id and restart)",
		ErrKeySpaceExhausted, l.table, n, left, l.what, why, left)
}

func (l *keyLimit) space() KeySpace {
	return KeySpace{Table: l.table, MaxID: l.max, Highest: l.high.Load(), Exhausted: l.spent.Load()}
}

// KeySpaces returns the use of the key space of every table with a max_id,
// sorted by table: what the ID server exports as gauges. It counts the
// keys this process issued only; a table not used yet shows Highest 0.
func (k *Keys) KeySpaces() []KeySpace {
	out := make([]KeySpace, 0, len(k.limits))
	for _, l := range k.limits {
		if l.report {
			out = append(out, l.space())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Table < out[j].Table })
	return out
}
