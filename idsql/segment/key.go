package segment

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// segment is one range of IDs in memory. Only cursor and fast change after
// creation; the other fields are read-only.
type segment struct {
	max       int64 // last ID of the range (0 for the empty sentinel)
	preloadAt int64 // handing out this value starts the next load (-1: never)
	first     int64
	loaded    time.Time

	// fast bounds Next's fast path: a value v < fast is returned at once,
	// anything else goes to nextSlow. It starts at preloadAt, so the caller
	// that draws preloadAt always takes the slow path and starts the load;
	// that caller then raises it to max+1 (passedPreload). It only ever
	// moves up to max+1, so a stale read only sends a caller down the slow
	// path, which returns v itself while v <= max.
	fast atomic.Int64

	// cursor is the last value handed out (first-1 before any). Next takes
	// cursor.Add(1): every value is handed to exactly one caller, values
	// above max are not handed to anyone. It has a cache line of its own so
	// that reading max and preloadAt never waits for another core's write.
	_      [64]byte
	cursor atomic.Int64
	_      [56]byte
}

func newSegment(r Range, threshold float64, now time.Time) *segment {
	s := &segment{max: r.Last, first: r.First, loaded: now}
	s.cursor.Store(r.First - 1)
	at := r.First + int64(float64(r.Len())*threshold)
	s.preloadAt = min(max(at, r.First), r.Last)
	s.fast.Store(s.preloadAt)
	return s
}

// emptySegment returns an exhausted segment: the one a key starts with and
// the one a closed key ends with. Its fast bound of 0 sends every caller to
// the slow path.
func emptySegment() *segment {
	return &segment{preloadAt: -1, first: 1}
}

// passedPreload opens the fast path up to the segment's last value; only
// the caller that drew (or took) preloadAt calls it, after starting the
// load.
func (s *segment) passedPreload() { s.fast.Store(s.max + 1) }

func (s *segment) exhausted() bool { return s.cursor.Load() >= s.max }

// take reserves up to n consecutive values, [lo, hi]; ok is false when the
// segment is exhausted.
func (s *segment) take(n int64) (lo, hi int64, ok bool) {
	for {
		c := s.cursor.Load()
		if c >= s.max {
			return 0, 0, false
		}
		t := min(n, s.max-c)
		if s.cursor.CompareAndSwap(c, c+t) {
			return c + 1, c + t, true
		}
	}
}

// Key is the handle of one segment key: its two segments and the state of
// its background load. Obtain it from Generator.Key; it is safe for
// concurrent use.
type Key struct {
	cur atomic.Pointer[segment] // the segment IDs come from

	g       *Generator
	name    string
	removed atomic.Bool
	// found is the key as Generator.NextID last found it by name.
	found atomic.Pointer[found]

	mu         sync.Mutex
	next       *segment      // loaded and waiting, or nil
	loading    bool          // a background load goroutine is running
	backingOff bool          // ... and sleeping after a failed attempt
	kick       chan struct{} // wakes a backing-off loader early
	reqs       chan Request  // to the loader goroutine; capacity 1, one request at a time
	loader     bool          // the loader goroutine is running
	changed    chan struct{} // closed after every load attempt
	lastErr    error         // error of the last attempt, nil after a success
	closed     bool
	step       int64     // size requested by the last load (0 before the first)
	minStep    int64     // the key's stored step, the floor of step
	lastLoad   time.Time // when the last load started
	loads      uint64
	loadErrors uint64
	waits      uint64
	timeouts   uint64
	direct     uint64
}

func newKey(g *Generator, name string) *Key {
	k := &Key{g: g, name: name, kick: make(chan struct{}, 1), reqs: make(chan Request, 1), changed: make(chan struct{})}
	k.cur.Store(emptySegment())
	return k
}

// Name returns the key's name (idsql_alloc.biz_tag).
func (k *Key) Name() string { return k.name }

// Next returns the next ID. While the current segment lasts this is one
// atomic add and one comparison, inlined into the caller; crossing the
// preload threshold starts the background load of the next segment, and
// running out switches to it with no wait when it is ready. Only when both
// segments are empty does Next wait, at most Settings.WaitTimeout (or until
// ctx is done), for the load in flight.
func (k *Key) Next(ctx context.Context) (int64, error) {
	return nextFast(k, ctx, (*Key).nextSlow)
}

// nextFast is Next's fast path. The slow path comes in as a parameter
// because the inliner charges a call through a parameter 17 where a direct
// call costs 57 (cmd/compile's inlineParamCallCost): that is what brings
// Next under the budget of 80. Once inlined, slow is a known function and
// the call is made only when the segment's fast bound is reached.
func nextFast(k *Key, ctx context.Context, slow func(*Key, context.Context, *segment, int64) (int64, error)) (v int64, err error) {
	s := k.cur.Load()
	if v = s.cursor.Add(1); v >= s.fast.Load() {
		v, err = slow(k, ctx, s, v)
	}
	return
}

// nextSlow is Next's outlined rest: the preload threshold, the tail of a
// segment read before its fast bound was raised, and the switch.
func (k *Key) nextSlow(ctx context.Context, s *segment, v int64) (int64, error) {
	if v > s.max {
		return k.wait(ctx, s)
	}
	if v == s.preloadAt { // this caller starts the next load
		k.preload()
		s.passedPreload()
	}
	return v, nil
}

// wait runs when segment s is exhausted: it switches to the next segment,
// or waits for the load in flight.
func (k *Key) wait(ctx context.Context, s *segment) (int64, error) {
	var timer *time.Timer // started by awaitLoad on the first wait
	defer stopTimer(&timer)
	waited := false
	for {
		if c := k.cur.Load(); c != s {
			s = c
			if v := s.cursor.Add(1); v <= s.max {
				if v == s.preloadAt {
					k.preload()
					s.passedPreload()
				}
				return v, nil
			}
			continue
		}
		k.mu.Lock()
		if k.cur.Load() != s {
			k.mu.Unlock()
			continue
		}
		if k.next != nil { // the switch: a pointer swap, no I/O
			k.cur.Store(k.next)
			k.next = nil
			k.mu.Unlock()
			continue
		}
		if k.closed {
			k.mu.Unlock()
			return 0, keyErr(k.name, "next id", ErrClosed)
		}
		if waited && k.lastErr != nil { // the attempt we waited for failed
			err := k.lastErr
			k.mu.Unlock()
			return 0, k.wrap("next id", err)
		}
		k.ensureLoadLocked()
		if !waited {
			k.waits++
		}
		ch := k.changed
		k.mu.Unlock()
		if err := k.awaitLoad(ctx, "next id", ch, &timer); err != nil {
			return 0, err
		}
		waited = true
	}
}

// stopTimer stops *t if it was started.
func stopTimer(t **time.Timer) {
	if *t != nil {
		(*t).Stop()
	}
}

// awaitLoad waits for the load attempt under way to end (ch closes), at
// most until *timer fires (it is started on first use, for
// Settings.WaitTimeout; the caller stops it with stopTimer) or ctx ends.
func (k *Key) awaitLoad(ctx context.Context, op string, ch <-chan struct{}, timer **time.Timer) error {
	if *timer == nil {
		*timer = time.NewTimer(k.g.s.WaitTimeout)
	}
	select {
	case <-ch:
		return nil
	case <-(*timer).C:
		return k.timeout()
	case <-ctx.Done():
		return keyErr(k.name, op, ctx.Err())
	}
}

// Warm loads the key's first segment, if none is loaded yet, and waits for
// it (at most Settings.WaitTimeout, or until ctx is done) without handing
// out an ID: the next call of Next returns the first ID of the range loaded.
// A server calls it at start so that configuration problems show then and
// the first request does not wait, without skipping a key.
func (k *Key) Warm(ctx context.Context) error {
	var timer *time.Timer // started by awaitLoad on the first wait
	defer stopTimer(&timer)
	waited := false
	for {
		k.mu.Lock()
		if !k.cur.Load().exhausted() || k.next != nil {
			k.mu.Unlock()
			return nil
		}
		if k.closed {
			k.mu.Unlock()
			return keyErr(k.name, "warm", ErrClosed)
		}
		if waited && k.lastErr != nil {
			err := k.lastErr
			k.mu.Unlock()
			return k.wrap("warm", err)
		}
		k.ensureLoadLocked()
		ch := k.changed
		k.mu.Unlock()
		if err := k.awaitLoad(ctx, "warm", ch, &timer); err != nil {
			return err
		}
		waited = true
	}
}

func (k *Key) timeout() error {
	k.mu.Lock()
	k.timeouts++
	last := k.lastErr
	k.mu.Unlock()
	if last != nil {
		return keyErr(k.name, "next id", fmt.Errorf("%w after %v (last load error: %w)", ErrTimeout, k.g.s.WaitTimeout, last))
	}
	return keyErr(k.name, "next id", fmt.Errorf("%w after %v (load still in flight)", ErrTimeout, k.g.s.WaitTimeout))
}

// wrap names the key in err unless err already does.
func (k *Key) wrap(op string, err error) error {
	var ke *KeyError
	if errors.As(err, &ke) && ke.Key == k.name {
		return err
	}
	return keyErr(k.name, op, err)
}

// NextIDs returns n IDs. They come from the current segment and the ready
// next one first (no wait); whatever is still missing is allocated as one
// range of exactly that size in a single round trip, so a call waits at
// most once whatever n is. The IDs are increasing within each range but a
// later range may lie below an earlier one only if the store hands ranges
// out of order (SQLStore never does).
func (k *Key) NextIDs(ctx context.Context, n int) ([]int64, error) {
	if n < 0 {
		return nil, keyErr(k.name, "next ids", fmt.Errorf("negative count %d", n))
	}
	out := make([]int64, 0, n)
	for len(out) < n {
		s := k.cur.Load()
		need := int64(n - len(out))
		if lo, hi, ok := s.take(need); ok {
			for v := lo; v <= hi; v++ {
				out = append(out, v)
			}
			if lo <= s.preloadAt && s.preloadAt <= hi {
				k.preload()
				s.passedPreload()
			}
			continue
		}
		k.mu.Lock()
		if k.cur.Load() != s {
			k.mu.Unlock()
			continue
		}
		if k.next != nil {
			k.cur.Store(k.next)
			k.next = nil
			k.mu.Unlock()
			continue
		}
		if k.closed {
			k.mu.Unlock()
			return nil, keyErr(k.name, "next ids", ErrClosed)
		}
		if k.minStep == 0 || need <= max(k.step, k.minStep) {
			// The load in flight (or started now) brings a whole segment,
			// enough for the rest (or, on a key's first load, tells how
			// big a segment is): wait for it as Next does, rather than
			// paying a round trip for a range of exactly this size.
			k.mu.Unlock()
			v, err := k.wait(ctx, s)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
			continue
		}
		k.ensureLoadLocked() // refill the buffers for the callers after us
		k.direct++
		k.mu.Unlock()

		actx, cancel := context.WithTimeout(ctx, k.g.s.WaitTimeout)
		r, err := k.g.store.Allocate(actx, Request{Key: k.name, Step: need, Instance: k.g.s.Instance})
		cancel()
		if err == nil {
			err = checkRange(k.name, need, r)
		}
		if err != nil {
			return nil, k.wrap("next ids", err)
		}
		for v := r.First; v <= r.Last; v++ {
			out = append(out, v)
		}
	}
	return out, nil
}

// preload starts the background load of the next segment unless one is
// loaded or loading.
func (k *Key) preload() {
	k.mu.Lock()
	if !k.loading && k.next == nil && !k.closed {
		k.startLoadLocked()
	}
	k.mu.Unlock()
}

// ensureLoadLocked makes sure a load is under way for a caller that needs
// one now: it starts one, or wakes a loader that is backing off.
func (k *Key) ensureLoadLocked() {
	if k.loading {
		if k.backingOff {
			select {
			case k.kick <- struct{}{}:
			default:
			}
		}
		return
	}
	if k.next == nil && !k.closed {
		k.startLoadLocked()
	}
}

func (k *Key) startLoadLocked() {
	now := k.g.s.Now()
	req := Request{Key: k.name, Step: k.nextStepLocked(now), Instance: k.g.s.Instance}
	k.lastLoad = now
	if !k.loader {
		if !k.g.goBackground(k.loadLoop) {
			return // closed
		}
		k.loader = true
	}
	k.loading = true
	k.reqs <- req // never blocks: the loader took the previous request before loading went false
}

// loadLoop is the key's loader goroutine, started with its first load. It
// stays parked between loads: waking a parked goroutine costs the caller
// who crosses the preload threshold less than starting one.
func (k *Key) loadLoop() {
	for {
		select {
		case req := <-k.reqs:
			k.load(req)
		case <-k.g.ctx.Done():
			return
		}
	}
}

// nextStepLocked adapts the step as Leaf does: a segment that lasted less
// than the target doubles it, up to 2x the target keeps it, longer halves
// it; bounded by MaxStep above and the stored step below (the stored step
// wins). 0 (the stored step) before the first load.
func (k *Key) nextStepLocked(now time.Time) int64 {
	if k.minStep == 0 {
		return 0
	}
	s := &k.g.s
	step := k.step
	switch d := now.Sub(k.lastLoad); {
	case d < s.TargetDuration:
		if step > s.MaxStep/2 {
			step = s.MaxStep
		} else {
			step *= 2
		}
	case d < 2*s.TargetDuration:
	default:
		step /= 2
	}
	step = max(min(step, s.MaxStep), k.minStep)
	k.step = step
	return step
}

// load runs in the background until one range is installed, retrying with
// backoff, or until the error cannot be cured by retrying.
func (k *Key) load(req Request) {
	g := k.g
	for attempt := 0; ; attempt++ {
		started := time.Now()
		ctx, cancel := context.WithTimeout(g.ctx, g.s.LoadTimeout)
		r, err := g.store.Allocate(ctx, req)
		cancel()
		if err == nil {
			err = checkRange(k.name, req.Step, r)
		}
		now := g.s.Now()
		k.mu.Lock()
		if err == nil {
			k.installLocked(req, r, now)
			k.mu.Unlock()
			return
		}
		k.loadErrors++
		k.lastErr = err
		k.notifyLocked()
		if k.closed || g.ctx.Err() != nil || errors.Is(err, ErrUnknownKey) ||
			errors.Is(err, ErrExhausted) || errors.Is(err, ErrInvalidRange) {
			k.loading = false
			k.mu.Unlock()
			return
		}
		k.backingOff = true
		k.mu.Unlock()

		if !k.backoff(attempt, started) {
			k.mu.Lock()
			k.loading, k.backingOff = false, false
			k.mu.Unlock()
			return
		}
		k.mu.Lock()
		k.backingOff = false
		k.mu.Unlock()
	}
}

func (k *Key) installLocked(req Request, r Range, now time.Time) {
	k.loads++
	k.lastErr = nil
	k.loading = false
	if r.StoredStep > 0 {
		k.minStep = r.StoredStep
	} else if k.minStep == 0 {
		k.minStep = r.Len()
	}
	if req.Step == 0 {
		k.step = r.Len()
	}
	if !k.closed {
		seg := newSegment(r, k.g.s.Threshold, now)
		if c := k.cur.Load(); c.exhausted() {
			k.cur.Store(seg) // callers are waiting: give it to them directly
		} else {
			k.next = seg
		}
	}
	k.notifyLocked()
}

// backoff sleeps before retry attempt+1; a caller in need (kick) cuts the
// sleep short, but never below RetryMin after the last attempt started.
// It reports false when the generator closed.
func (k *Key) backoff(attempt int, started time.Time) bool {
	s := &k.g.s
	d := s.RetryMax
	if attempt < 30 && s.RetryMin<<attempt < s.RetryMax {
		d = s.RetryMin << attempt
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-k.g.ctx.Done():
		return false
	case <-k.kick:
	}
	if rest := s.RetryMin - time.Since(started); rest > 0 {
		t.Reset(rest)
		select {
		case <-t.C:
		case <-k.g.ctx.Done():
			return false
		}
	}
	return true
}

func (k *Key) notifyLocked() {
	close(k.changed)
	k.changed = make(chan struct{})
}

func (k *Key) close() {
	k.mu.Lock()
	k.closed = true
	k.next = nil
	k.cur.Store(emptySegment())
	k.notifyLocked()
	k.mu.Unlock()
}

// checkRange rejects ranges the generator must not use.
func checkRange(key string, step int64, r Range) error {
	switch {
	case r.Key != "" && r.Key != key:
		return fmt.Errorf("%w: asked for key %q, got a range of %q", ErrInvalidRange, key, r.Key)
	case r.First < 1 || r.Last < r.First || r.Last > MaxID:
		return fmt.Errorf("%w: [%d, %d]", ErrInvalidRange, r.First, r.Last)
	case step > 0 && r.Len() != step:
		return fmt.Errorf("%w: asked for %d IDs, got [%d, %d]", ErrInvalidRange, step, r.First, r.Last)
	}
	return nil
}
