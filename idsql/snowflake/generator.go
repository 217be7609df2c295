package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of the generator. Compare with errors.Is.
var (
	// ErrClockBackwards is wrapped by *ClockBackwardError.
	ErrClockBackwards = errors.New("snowflake: clock moved backwards")
	// ErrExhausted means the layout's time bits are used up: issuing more
	// IDs would overflow into the sign bit.
	ErrExhausted = errors.New("snowflake: time bits exhausted")
	// ErrStopped means the worker lease ended, its deadline or horizon was
	// reached, or Stop was called; no ID is issued after it.
	ErrStopped = errors.New("snowflake: generator stopped")
)

// ClockBehindError reports a clock at start-up further behind the horizon
// persisted for the worker ID (Lease.After) than the generator may wait for:
// issuing IDs now could repeat IDs issued before.
type ClockBehindError struct {
	WorkerID int64
	Now      time.Time // the clock at the check
	After    time.Time // the persisted horizon
	Max      time.Duration
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("snowflake: clock is behind worker %d's persisted horizon: now %s, horizon %s (%s behind, more than the %s the generator waits at start)",
		e.WorkerID, e.Now.UTC().Format(time.RFC3339Nano), e.After.UTC().Format(time.RFC3339Nano), e.After.Sub(e.Now), e.Max)
}

// Unwrap returns ErrClockBackwards.
func (e *ClockBehindError) Unwrap() error { return ErrClockBackwards }

// ClockBackwardError reports a clock further behind the last issued tick than
// the generator may wait for.
type ClockBackwardError struct {
	Behind time.Duration // how far the clock is behind the last issued tick
	Max    time.Duration // the configured MaxBackward
}

func (e *ClockBackwardError) Error() string {
	return fmt.Sprintf("snowflake: clock moved backwards: %s behind the last issued ID, more than the %s the generator waits",
		e.Behind, e.Max)
}

// Unwrap returns ErrClockBackwards.
func (e *ClockBackwardError) Unwrap() error { return ErrClockBackwards }

// DefaultMaxBackward is how long a generator waits for a clock that stepped
// back, as in Leaf.
const DefaultMaxBackward = 5 * time.Millisecond

// DefaultMaxStartWait is how long New waits for the clock to pass the
// worker ID's persisted horizon. A successor normally waits a fraction of a
// second; a process restarted right after a crash waits for the horizon its
// previous run had reserved (at most one lease period).
const DefaultMaxStartWait = 45 * time.Second

// Settings configure a Generator. The zero value is the leaf layout on the
// system clock.
type Settings struct {
	// Layout is the bit layout; the zero Layout means Leaf.
	Layout Layout
	// Clock is the time source; nil means SystemClock.
	Clock Clock
	// MaxBackward is how long to wait for a clock behind the last issued
	// tick before failing: 0 means DefaultMaxBackward, negative means fail
	// at once.
	MaxBackward time.Duration
	// MaxStartWait is how long New waits for the clock to pass the lease's
	// After horizon before failing with a *ClockBehindError: 0 means
	// DefaultMaxStartWait, negative means fail at once.
	MaxStartWait time.Duration
	// RandomStart, when positive, starts the sequence of each new tick at a
	// random number below it (Leaf uses 100), so low-traffic IDs spread over
	// shards that are chosen by id % n. At most half the sequence space.
	RandomStart int
	// Rand returns a random number in [0, n); nil means math/rand/v2.
	Rand func(n uint64) uint64
	// Block, when above 1, lets NextID draw up to Block IDs of the
	// current tick at once when IDs are asked for quickly, and hand out
	// the others without taking the lock (a clock reading and one atomic
	// add each); see NextID. 0 or 1 means one ID a draw. At most the
	// layout's sequences per tick.
	Block int
}

// A Generator issues snowflake IDs under one worker lease. It is safe for
// concurrent use; the IDs one generator issues strictly increase.
type Generator struct {
	layout      Layout
	clock       Clock
	system      bool      // clock is SystemClock: read time.Since directly
	start       time.Time // clock reading at New
	startOffset time.Duration
	seqBits     uint
	seqMask     uint64
	workerPart  uint64 // the worker's bits: worker << SequenceBits, or worker (WorkerLow)
	seqShift    uint   // where the sequence goes: 0, or WorkerBits (WorkerLow)
	worker      int64
	timeShift   uint // WorkerBits + SequenceBits
	maxTick     int64
	maxBackward time.Duration
	randomStart uint64
	rand        func(uint64) uint64
	blockSize   uint64 // Settings.Block; 0 for none
	lease       Lease
	done        <-chan struct{}
	ended       *atomic.Bool // the lease's EndFlag, or nil

	// mu guards the words below. NextID's fast path holds it only to
	// check a clock reading taken before it against the state and the
	// lease's limits and to store the state; reserve reads the clock
	// under it, then does the same. A compare-and-swap loop on the state
	// word, with the clock read inside its window, had two callers on two
	// cores retry with the cache line bouncing between them.
	_  [64]byte // keep the hot words on their own cache line
	mu sync.Mutex
	// state is tick<<seqBits | seq of the last sequence number issued or
	// reserved, with stopBit once stopped. Guarded by mu.
	state uint64
	// tickDrawn is how many IDs of the state's tick were drawn, blocks
	// included (with Block). Guarded by mu.
	tickDrawn uint64
	// blk is the block NextID hands IDs out of (with Block), or nil. It is
	// replaced under mu; its IDs are taken without it.
	blk atomic.Pointer[idBlock]
	// deadline is the lease's deadline as an elapsed() value: no ID is
	// stamped with a reading at or past it. math.MaxInt64 means none.
	// Guarded by mu.
	deadline int64
	// lastTick is the last tick the lease's horizon allows. Guarded by mu.
	lastTick int64
	// fastLimit is the last tick NextID's fast path may issue in: the
	// lower of lastTick and the layout's last tick. Guarded by mu.
	fastLimit int64
	// tickWake, when not nil, is closed when the caller sleeping for the
	// next tick wakes: the other callers that need a later tick wait on it
	// instead of each sleeping on its own (on Linux each sleeping caller
	// would hold a thread). Guarded by mu.
	tickWake chan struct{}
	_        [16]byte
}

// An idBlock is a run of IDs of one tick that the generator reserved
// under its lock, with the clock reading that stamps them checked against
// the lease's deadline and horizon, and that NextID hands out one atomic
// add at a time (see Settings.Block), each to a call whose own clock
// reading is in the block's window.
type idBlock struct {
	first uint64 // the state word of the block's first ID
	count uint64
	// from and until bound, as elapsed() readings, the window in which a
	// call may take an ID of the block: from the start of the block's tick
	// to its end or the lease's deadline at the draw, whichever is first.
	// So an ID of a block carries the tick of the reading of the call that
	// takes it, as every other ID does, and none is taken at a reading at
	// or past the deadline.
	from, until int64
	taken       atomic.Uint64 // IDs taken; above count once used up or dropped
}

// dropped is the taken count of a dropped block: above every count, and
// far from overflowing however many callers still add to it.
const dropped = uint64(1) << 62

// dropBlockLocked drops the block, if any: its IDs not yet taken are
// never issued. reserve and Stop call it first, and NextID's fast path
// takes from a block with IDs left before it issues another ID, so IDs
// issued later are above every ID a block gave. Called with mu held.
func (g *Generator) dropBlockLocked() {
	if b := g.blk.Load(); b != nil {
		b.taken.Store(dropped)
		g.blk.Store(nil)
	}
}

// stopBit marks a stopped state word. A state word holds tick<<seqBits|seq,
// at most 62 bits (every layout has a worker bit), so the top bit is free.
const stopBit = uint64(1) << 63

// New returns a generator issuing IDs under lease. It refuses a layout that
// is invalid or runs out within a year and a worker ID outside the layout.
// When the clock is behind the lease's After horizon it waits for the clock
// to pass it, up to MaxStartWait, then refuses with a *ClockBehindError.
func New(ctx context.Context, lease Lease, s Settings) (*Generator, error) {
	if s.Layout == (Layout{}) {
		s.Layout = Leaf
	}
	if s.Clock == nil {
		s.Clock = SystemClock{}
	}
	switch {
	case s.MaxBackward == 0:
		s.MaxBackward = DefaultMaxBackward
	case s.MaxBackward < 0:
		s.MaxBackward = 0
	}
	switch {
	case s.MaxStartWait == 0:
		s.MaxStartWait = DefaultMaxStartWait
	case s.MaxStartWait < 0:
		s.MaxStartWait = 0
	}
	if s.Rand == nil {
		s.Rand = rand.Uint64N
	}
	l := s.Layout
	if s.Block < 0 || int64(s.Block) > l.MaxSequence()+1 {
		return nil, fmt.Errorf("snowflake: Block %d out of range 0..%d (the sequences of a tick)", s.Block, l.MaxSequence()+1)
	}
	now := s.Clock.Now()
	if err := l.ValidateAt(now); err != nil {
		return nil, err
	}
	if s.RandomStart < 0 || int64(s.RandomStart) > (l.MaxSequence()+1)/2 {
		return nil, fmt.Errorf("snowflake: RandomStart %d out of range 0..%d (half the sequence space)",
			s.RandomStart, (l.MaxSequence()+1)/2)
	}
	w := lease.WorkerID()
	if w < 0 || w > l.MaxWorker() {
		return nil, fmt.Errorf("snowflake: worker ID %d out of range 0..%d for layout %s", w, l.MaxWorker(), l)
	}
	after := lease.After()
	// The first ID's tick must lie after the tick holding the horizon.
	if first := l.TimeOf(l.Tick(after) + 1); !after.IsZero() && now.Before(first) {
		if behind := first.Sub(now); behind > s.MaxStartWait {
			return nil, fmt.Errorf("snowflake: refusing to start: %w",
				&ClockBehindError{WorkerID: w, Now: now, After: after, Max: s.MaxStartWait})
		}
		if err := s.Clock.Sleep(ctx, first.Sub(now)); err != nil {
			return nil, fmt.Errorf("snowflake: waiting %s for the clock to pass worker %d's horizon: %w", first.Sub(now), w, err)
		}
		now = s.Clock.Now()
	}
	_, isSystem := s.Clock.(SystemClock)
	g := &Generator{
		layout:      l,
		clock:       s.Clock,
		system:      isSystem,
		start:       now,
		startOffset: now.Sub(l.Epoch),
		seqBits:     uint(l.SequenceBits),
		seqMask:     uint64(l.MaxSequence()),
		workerPart:  uint64(w) << l.SequenceBits,
		worker:      w,
		timeShift:   uint(l.WorkerBits + l.SequenceBits),
		maxTick:     l.MaxTick(),
		maxBackward: s.MaxBackward,
		randomStart: uint64(s.RandomStart),
		rand:        s.Rand,
		blockSize:   uint64(s.Block),
		lease:       lease,
		done:        lease.Done(),
	}
	if f, ok := lease.(EndFlagger); ok {
		g.ended = f.EndFlag()
	}
	if l.WorkerLow {
		g.workerPart, g.seqShift = uint64(w), uint(l.WorkerBits)
	}
	if !after.IsZero() {
		// Start strictly after the horizon's tick: its sequences may be used.
		g.state = uint64(l.Tick(after))<<g.seqBits | g.seqMask
	}
	g.mu.Lock()
	err := g.renewLocked()
	g.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return g, nil
}

// renewLocked reads the lease's deadline and horizon into the generator's
// limit words.
func (g *Generator) renewLocked() error {
	deadline, horizon, err := g.lease.Validity()
	if err != nil {
		return fmt.Errorf("%w: worker %d: %w", ErrStopped, g.WorkerID(), err)
	}
	d := int64(math.MaxInt64)
	if !deadline.IsZero() {
		d = int64(g.startOffset + deadline.Sub(g.start))
	}
	t := int64(math.MaxInt64)
	if !horizon.IsZero() {
		// A tick is allowed when it ends by the horizon.
		t = g.layout.Tick(horizon) - 1
	}
	g.deadline = d
	g.lastTick = t
	g.fastLimit = min(t, g.maxTick)
	return nil
}

// Stop stops the generator: no ID is issued once it returns. It returns the
// start of the last tick issued or reserved (the cached ring's unissued IDs
// included), the horizon to persist on Lease.Release.
func (g *Generator) Stop() time.Time {
	g.mu.Lock()
	g.dropBlockLocked()
	old := g.state
	g.state |= stopBit
	g.mu.Unlock()
	return g.layout.TimeOf(int64(old &^ stopBit >> g.seqBits))
}

// Layout returns the generator's layout.
func (g *Generator) Layout() Layout { return g.layout }

// WorkerID returns the worker ID the generator issues under.
func (g *Generator) WorkerID() int64 { return g.worker }

// HighWater returns the start of the latest tick issued or reserved.
func (g *Generator) HighWater() time.Time {
	g.mu.Lock()
	s := g.state
	g.mu.Unlock()
	return g.layout.TimeOf(int64(s &^ stopBit >> g.seqBits))
}

// NextID returns a new ID. It waits for the next tick when this one's
// sequence is used up, and for a clock that stepped back by at most
// MaxBackward.
//
// With Settings.Block, a call that finds IDs of the tick already drawn
// draws a block: as many IDs of the tick as were drawn in it so far, up to
// Block, reserved at once under the same checks as one ID (the reading
// that stamps them is before the lease's deadline, their tick within its
// horizon). Later calls take them in order, one atomic add each and no
// lock, while their own clock reading is still in the block's tick and
// before the deadline of the draw; a reading outside that window, another
// draw (NextIDs of several IDs, or one that found the block used up) or
// Stop drops what is left of it, and the lease's end stops its use at
// once. So a block changes no guarantee of the IDs: each carries the tick
// of the reading of the call that returns it, none is returned at a
// reading past the deadline, and IDs stay unique and strictly increasing.
func (g *Generator) NextID(ctx context.Context) (int64, error) {
	// The fast path: an ID in the tick of a clock reading taken before the
	// lock, when that tick is the state's (with a sequence number left) or
	// a later one, within the lease's limits. Everything else (the lease
	// ended, a wait, a reading behind the state, a limit to renew) goes to
	// nextSlow, which handles it under the lock with a reading taken there.
	//
	// Reading the clock outside the lock keeps the lock held for a few
	// instructions, so callers on other cores read their clocks meanwhile.
	// It is as safe as a reading under the lock: the ID is stamped with this
	// reading's tick, which is checked against the lease's deadline and
	// horizon under the lock, and the state only moves forward. A reading
	// that another caller's later one overtook (its tick behind the state's)
	// is not taken for a clock that stepped back: reserve reads the clock
	// again.
	if g.ended != nil {
		if g.ended.Load() {
			return g.nextSlow(ctx)
		}
	} else {
		select {
		case <-g.done:
			return g.nextSlow(ctx)
		default:
		}
	}
	var e int64
	if g.system { // elapsed, inlined
		e = int64(g.startOffset + time.Since(g.start))
	} else {
		e = int64(g.injectedElapsed())
	}
	if b := g.blk.Load(); b != nil && e >= b.from && e < b.until {
		if i := b.taken.Add(1); i <= b.count {
			return g.id(b.first + i - 1), nil
		}
	}
	now := g.tickOf(time.Duration(e))
	g.mu.Lock()
	if b := g.blk.Load(); b != nil {
		// Another caller drew a block since: take from it rather than
		// drop it, when this reading is in its window.
		if e >= b.from && e < b.until {
			if i := b.taken.Add(1); i <= b.count {
				g.mu.Unlock()
				return g.id(b.first + i - 1), nil
			}
		}
		g.dropBlockLocked()
	}
	old := g.state
	last := int64(old >> g.seqBits) // a stopped state's is beyond every tick
	var first uint64
	switch {
	case e >= g.deadline || now > g.fastLimit:
		g.mu.Unlock()
		return g.nextSlow(ctx)
	case now == last && old&g.seqMask < g.seqMask:
		first = old + 1
		if n := min(g.tickDrawn, g.blockSize, g.seqMask-old&g.seqMask); n > 1 {
			// IDs of this tick are asked for quickly: draw a block.
			unit := int64(g.layout.Unit)
			g.blk.Store(&idBlock{first: first + 1, count: n - 1, from: now * unit, until: min((now+1)*unit, g.deadline)})
			g.state = first + n - 1
			g.tickDrawn += n
			g.mu.Unlock()
			return g.id(first), nil
		}
		g.tickDrawn++
	case now > last && old&stopBit == 0:
		first = uint64(now)<<g.seqBits | g.startSeq()
		g.tickDrawn = 1
	default:
		g.mu.Unlock()
		return g.nextSlow(ctx)
	}
	g.state = first
	g.mu.Unlock()
	return g.id(first), nil
}

// nextSlow is NextID when its fast path cannot issue.
func (g *Generator) nextSlow(ctx context.Context) (int64, error) {
	first, _, err := g.reserve(ctx, 1, 0, true)
	if err != nil {
		return 0, err
	}
	return g.id(first), nil
}

// NextIDs returns n new IDs in increasing order.
func (g *Generator) NextIDs(ctx context.Context, n int) ([]int64, error) {
	return g.AppendIDs(ctx, make([]int64, 0, n), n)
}

// AppendIDs appends n new IDs to dst in increasing order. On error dst is
// returned with the IDs appended so far (they are valid and unused).
func (g *Generator) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	if n == 1 { // one row's key, the commonest call: NextID's fast path
		id, err := g.NextID(ctx)
		if err != nil {
			return dst, err
		}
		return append(dst, id), nil
	}
	for n > 0 {
		first, count, err := g.reserve(ctx, uint64(n), 0, true)
		if err != nil {
			return dst, err
		}
		for i := uint64(0); i < count; i++ {
			dst = append(dst, g.id(first+i))
		}
		n -= int(count)
	}
	return dst, nil
}

func (g *Generator) id(state uint64) int64 {
	return int64((state>>g.seqBits)<<g.timeShift | g.workerPart | (state&g.seqMask)<<g.seqShift)
}

// elapsed returns the time since the epoch by the generator's clock.
func (g *Generator) elapsed() time.Duration {
	if g.system {
		return g.startOffset + time.Since(g.start) // monotonic
	}
	return g.injectedElapsed()
}

// injectedElapsed is elapsed on an injected clock.
func (g *Generator) injectedElapsed() time.Duration {
	return g.startOffset + g.clock.Now().Sub(g.start)
}

// tickOf returns the tick holding the elapsed() reading e.
func (g *Generator) tickOf(e time.Duration) int64 {
	if g.layout.Unit == time.Millisecond {
		return int64(e / time.Millisecond) // a constant divisor is a multiply
	}
	return int64(e / g.layout.Unit)
}

// errWouldWait is returned by reserve when it may not wait.
var errWouldWait = errors.New("snowflake: would wait")

// reserve claims up to want consecutive sequence numbers of one tick and
// returns the first as a state word (tick<<seqBits | seq) and the count. It
// may claim ticks up to ahead ticks in the future (the cached generator
// borrows them). When the clock must advance first it waits, or returns
// errWouldWait when wait is false. Waits sleep on the Clock outside the
// generator's lock.
func (g *Generator) reserve(ctx context.Context, want uint64, ahead int64, wait bool) (uint64, uint64, error) {
	var horizonWait time.Duration
	for {
		select {
		case <-g.done:
			return 0, 0, fmt.Errorf("%w: worker %d: %w", ErrStopped, g.WorkerID(), g.lease.Err())
		default:
		}
		var h hold
		g.mu.Lock()
		g.dropBlockLocked()
		first, count, err := g.reserveLocked(want, ahead, wait, horizonWait, &h)
		if count > 0 {
			g.mu.Unlock()
			return first, count, nil
		}
		var lead, follow chan struct{}
		if err == nil && h.tick && !h.again && wait {
			if follow = g.tickWake; follow == nil {
				lead = make(chan struct{})
				g.tickWake = lead
			}
		}
		g.mu.Unlock()
		switch {
		case err != nil:
			return 0, 0, err
		case h.again:
			continue
		case !wait:
			return 0, 0, errWouldWait
		case follow != nil: // another caller sleeps for the next tick
			select {
			case <-follow:
				continue
			case <-ctx.Done():
				return 0, 0, ctx.Err()
			}
		case lead != nil:
			err := g.clock.Sleep(ctx, h.d)
			g.mu.Lock()
			g.tickWake = nil
			g.mu.Unlock()
			close(lead)
			if err != nil {
				return 0, 0, err
			}
			continue
		}
		if h.horizon {
			horizonWait += h.d
		}
		if err := g.clock.Sleep(ctx, h.d); err != nil {
			return 0, 0, err
		}
	}
}

// A hold says why reserveLocked reserved nothing without failing: try again
// at once, or after sleeping d (for the next tick, a clock that stepped
// back, or a late renewal of the horizon).
type hold struct {
	again   bool
	tick    bool // waiting for the next tick
	horizon bool
	d       time.Duration
}

// reserveLocked is one attempt of reserve, with g.mu held. It returns a
// count of at least 1 when it reserved, else an error or, in *h, why not.
// horizonWait is how long the call has already waited for the horizon.
func (g *Generator) reserveLocked(want uint64, ahead int64, wait bool, horizonWait time.Duration, h *hold) (uint64, uint64, error) {
	// The state is read before the clock: the tick in the state was read
	// from the clock before it was stored, so a clock read after it is
	// never behind it unless the clock really stepped back.
	old := g.state
	if old&stopBit != 0 {
		return 0, 0, fmt.Errorf("%w: worker %d: stopped", ErrStopped, g.WorkerID())
	}
	e := g.elapsed()
	// The reading that stamps the ID is the one checked against the lease's
	// deadline, so a process paused anywhere before this line issues
	// nothing once it resumes past the deadline.
	if int64(e) >= g.deadline {
		if err := g.renewLocked(); err != nil {
			return 0, 0, err
		}
		if int64(e) >= g.deadline {
			return 0, 0, fmt.Errorf("%w: worker %d: the lease's deadline passed without renewal", ErrStopped, g.WorkerID())
		}
	}
	now := g.tickOf(e)
	last := int64(old >> g.seqBits)
	var first uint64
	switch {
	case now > last:
		first = uint64(now)<<g.seqBits | g.startSeq()
	case now < last-ahead:
		behind := g.layout.TimeOf(last - ahead).Sub(g.layout.TimeOf(now))
		if behind > g.maxBackward {
			return 0, 0, &ClockBackwardError{Behind: behind, Max: g.maxBackward}
		}
		*h = hold{d: behind}
		return 0, 0, nil
	case old&g.seqMask < g.seqMask:
		first = old + 1
	case last < now+ahead:
		first = uint64(last+1)<<g.seqBits | g.startSeq()
	default: // this tick is used up: wait for the next one
		d := time.Duration(last+1-ahead)*g.layout.Unit - e
		*h = hold{again: d <= 0, tick: true, d: d}
		return 0, 0, nil
	}
	if int64(first>>g.seqBits) > g.maxTick {
		return 0, 0, fmt.Errorf("%w: layout %s ended at %s", ErrExhausted, g.layout, g.layout.Horizon().UTC().Format(time.RFC3339))
	}
	if t := int64(first >> g.seqBits); t > g.lastTick {
		var err error
		*h, err = g.beyondHorizonLocked(t, now, wait, horizonWait)
		return 0, 0, err
	}
	count := min(want, g.seqMask-first&g.seqMask+1)
	if first>>g.seqBits == old>>g.seqBits {
		g.tickDrawn += count
	} else {
		g.tickDrawn = count
	}
	g.state = first + count - 1
	return first, count, nil
}

// MaxHorizonWait is how long a call waits for a late renewal to move the
// lease's horizon before it fails: a heartbeat delayed by a busy database
// should slow the generator down, not stop it.
const MaxHorizonWait = 2 * time.Second

// beyondHorizonLocked handles a tick past the lease's horizon: it reads
// the lease's limits again and says to try again when the tick is allowed
// now, or after a short wait. A borrowed tick (ahead of the clock) waits
// for the horizon without blocking the caller; a current one waits up to
// MaxHorizonWait in all for the holder to persist a new horizon.
func (g *Generator) beyondHorizonLocked(tick, now int64, wait bool, waited time.Duration) (hold, error) {
	if err := g.renewLocked(); err != nil {
		return hold{}, err
	}
	if tick <= g.lastTick {
		return hold{again: true}, nil
	}
	if tick > now && !wait {
		return hold{}, errWouldWait
	}
	if wait && waited < MaxHorizonWait {
		return hold{horizon: true, d: max(g.layout.Unit, time.Millisecond)}, nil
	}
	return hold{}, fmt.Errorf("%w: worker %d: tick %s is past the lease's persisted horizon %s (no renewal moved it within %s)",
		ErrStopped, g.WorkerID(), g.layout.TimeOf(tick).UTC().Format(time.RFC3339Nano),
		g.layout.TimeOf(g.lastTick+1).UTC().Format(time.RFC3339Nano), MaxHorizonWait)
}

func (g *Generator) startSeq() uint64 {
	if g.randomStart == 0 {
		return 0
	}
	return g.rand(g.randomStart)
}
