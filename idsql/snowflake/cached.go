package snowflake

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// publishChunk is how many IDs the filler writes before making them visible.
const publishChunk = 4096

// ErrClosed is returned by a Cached generator after Close.
var ErrClosed = errors.New("snowflake: cached generator closed")

// CachedSettings configure a Cached generator. The zero value means the
// defaults.
type CachedSettings struct {
	// Size is the number of IDs the ring holds, rounded up to a power of
	// two; 0 means 4 ticks' worth of sequences, at least 65,536 and at most
	// 1,048,576 (8 MiB).
	Size int
	// Threshold: the filler runs when fewer IDs than this are buffered;
	// 0 means half the ring.
	Threshold int
	// MaxDrift is how far ahead of the clock the filler may borrow ticks:
	// 0 means one second, negative means never.
	MaxDrift time.Duration
}

// Cached hands out snowflake IDs from a ring buffer that a background
// filler keeps stocked, after Baidu uid-generator's CachedUidGenerator. A
// take is a few atomic operations and never blocks while the ring holds
// IDs; when it runs dry a take waits for the filler. The filler may borrow
// future ticks up to MaxDrift and never past the lease's horizon, and the
// generator's high-water mark includes borrowed ticks. The filler reserves
// IDs only within the lease's deadline; a take does not look at the clock,
// so IDs reserved before a pause may be handed out after it. They stay
// unique: every one lies within the horizon the lease persisted, and the
// next holder of the worker ID starts after it.
type Cached struct {
	gen       *Generator
	slots     []atomic.Uint64
	mask      uint64
	threshold uint64
	ahead     int64 // MaxDrift in ticks

	_      [64]byte
	cursor atomic.Uint64 // next position to take
	_      [56]byte
	tail   atomic.Uint64 // next position to fill; positions below it are published
	_      [56]byte

	wake    chan struct{} // asks the filler to run
	stop    chan struct{}
	stopped sync.WaitGroup
	waiters atomic.Int32
	mu      sync.Mutex
	filled  chan struct{} // closed and replaced after each fill that waiters wait for
	err     atomic.Pointer[error]
}

// NewCached starts a cached generator under lease (waiting, as New does,
// for the clock to pass the lease's horizon). Close stops its filler.
func NewCached(ctx context.Context, lease Lease, s Settings, cs CachedSettings) (*Cached, error) {
	g, err := New(ctx, lease, s)
	if err != nil {
		return nil, err
	}
	perTick := g.seqMask + 1
	size := uint64(cs.Size)
	if cs.Size < 0 {
		return nil, fmt.Errorf("snowflake: cached Size %d is negative", cs.Size)
	}
	if size == 0 {
		size = min(max(1<<16, 4*perTick), 1<<20)
	}
	size = uint64(1) << bits.Len64(size-1) // round up to a power of two
	threshold := uint64(cs.Threshold)
	if cs.Threshold < 0 || threshold > size {
		return nil, fmt.Errorf("snowflake: cached Threshold %d out of range 0..%d", cs.Threshold, size)
	}
	if threshold == 0 {
		threshold = size / 2
	}
	drift := cs.MaxDrift
	if drift == 0 {
		drift = time.Second
	}
	c := &Cached{
		gen:       g,
		slots:     make([]atomic.Uint64, size),
		mask:      size - 1,
		threshold: threshold,
		ahead:     max(0, int64(drift/g.layout.Unit)),
		wake:      make(chan struct{}, 1),
		stop:      make(chan struct{}),
		filled:    make(chan struct{}),
	}
	c.stopped.Add(1)
	go c.fillLoop()
	return c, nil
}

// Generator returns the underlying generator (for its layout and worker).
func (c *Cached) Generator() *Generator { return c.gen }

// Buffered returns how many IDs the ring holds now.
func (c *Cached) Buffered() int { return int(c.tail.Load() - c.cursor.Load()) }

// NextID takes one ID from the ring.
func (c *Cached) NextID(ctx context.Context) (int64, error) {
	for {
		if id, ok := c.take(); ok {
			return id, nil
		}
		if err := c.waitFill(ctx); err != nil {
			return 0, err
		}
	}
}

// NextIDs takes n IDs from the ring.
func (c *Cached) NextIDs(ctx context.Context, n int) ([]int64, error) {
	ids := make([]int64, 0, n)
	for len(ids) < n {
		id, err := c.NextID(ctx)
		if err != nil {
			return ids, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// take removes one ID from the ring if it holds one. The slot is read
// before the cursor moves past it: the filler writes a slot again only after
// the cursor has passed it, so a successful compare-and-swap proves the value
// read was still the one published for that position.
func (c *Cached) take() (int64, bool) {
	select {
	case <-c.gen.done:
		return 0, false
	default:
	}
	for {
		pos := c.cursor.Load()
		tail := c.tail.Load()
		if pos >= tail {
			c.kick()
			return 0, false
		}
		id := c.slots[pos&c.mask].Load()
		if c.cursor.CompareAndSwap(pos, pos+1) {
			if tail-pos <= c.threshold {
				c.kick()
			}
			return int64(id), true
		}
	}
}

// kick asks the filler to run without waiting for it.
func (c *Cached) kick() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// waitFill waits until the filler publishes more IDs, or reports why it
// cannot.
func (c *Cached) waitFill(ctx context.Context) error {
	select {
	case <-c.gen.done:
		return fmt.Errorf("%w: worker %d: %w", ErrStopped, c.gen.WorkerID(), c.gen.lease.Err())
	case <-c.stop:
		return ErrClosed
	default:
	}
	c.waiters.Add(1)
	defer c.waiters.Add(-1)
	c.mu.Lock()
	filled := c.filled
	c.mu.Unlock()
	if c.cursor.Load() < c.tail.Load() {
		return nil // filled meanwhile
	}
	if p := c.err.Load(); p != nil {
		return *p
	}
	c.kick()
	select {
	case <-filled:
		return nil
	case <-c.gen.done:
		return nil // reported by the next round
	case <-c.stop:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close stops the filler. IDs left in the ring are never issued.
func (c *Cached) Close() error {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	c.stopped.Wait()
	return nil
}

func (c *Cached) fillLoop() {
	defer c.stopped.Done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-c.stop
		cancel()
	}()
	var retry *time.Timer
	for {
		err := c.fill(ctx)
		var again <-chan time.Time
		if err != nil && ctx.Err() == nil {
			// Drift limit or a failing generator: try again after a tick.
			if retry == nil {
				retry = time.NewTimer(c.gen.layout.Unit)
			} else {
				retry.Reset(c.gen.layout.Unit)
			}
			again = retry.C
		}
		select {
		case <-c.wake:
		case <-again:
		case <-c.stop:
			return
		}
	}
}

// fill tops the ring up. It returns errWouldWait when the drift limit stops
// it, or the generator's error.
func (c *Cached) fill(ctx context.Context) error {
	size := c.mask + 1
	for {
		tail := c.tail.Load()
		free := size - (tail - c.cursor.Load())
		if free == 0 {
			return nil
		}
		first, count, err := c.gen.reserve(ctx, free, c.ahead, false)
		if err != nil {
			if !errors.Is(err, errWouldWait) {
				c.err.Store(&err)
				c.notify()
			}
			return err
		}
		c.err.Store(nil)
		// Publish in chunks, so takers waiting on an empty ring do not
		// wait for a whole tick of a wide layout to be written.
		for done := uint64(0); done < count; {
			n := min(count-done, publishChunk)
			for i := done; i < done+n; i++ {
				c.slots[(tail+i)&c.mask].Store(uint64(c.gen.id(first + i)))
			}
			done += n
			c.tail.Store(tail + done)
			c.notify()
		}
	}
}

// notify wakes takers waiting for IDs.
func (c *Cached) notify() {
	if c.waiters.Load() == 0 {
		return
	}
	c.mu.Lock()
	close(c.filled)
	c.filled = make(chan struct{})
	c.mu.Unlock()
}
