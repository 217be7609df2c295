package snowflake

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/clocktest"
)

// reserveWith runs one locked attempt of reserve with a clock reading e
// taken earlier, as a caller that waited for the lock does.
func reserveWith(g *Generator, e time.Duration) (uint64, uint64, hold, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.reserveLocked(e, 1, 0, true, 0)
}

// A reading taken before the lock may be behind a tick another caller
// stamped meanwhile: it is read again rather than taken for a clock that
// stepped back (here further than MaxBackward, which would fail).
func TestStaleReadingIsReadAgain(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock})
	stale := g.elapsed()
	clock.Add(20 * time.Millisecond) // 4x DefaultMaxBackward
	before, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	first, count, h, err := reserveWith(g, stale)
	if err != nil || count != 1 || h != (hold{}) {
		t.Fatalf("reserve with a stale reading = %d, %d, %+v, %v; want one sequence number", first, count, h, err)
	}
	if id := g.id(first); id <= before {
		t.Fatalf("ID %d after %d", id, before)
	}
	if got, want := Leaf.Decompose(g.id(first)).Time, Leaf.Decompose(before).Time; !got.Equal(want) {
		t.Fatalf("stamped %s, want the tick of the fresh reading %s", got, want)
	}
}

// The reading read again is the one checked against the deadline: a caller
// whose first reading was before the deadline but who got the lock after it
// (a pause) issues nothing.
func TestStaleReadingPastDeadlineRefused(t *testing.T) {
	g, clock, _ := newDeadlineGen(t)
	stale := g.elapsed()
	clock.Add(50 * time.Millisecond)
	if _, err := g.NextID(context.Background()); err != nil { // another caller stamps a later tick
		t.Fatal(err)
	}
	clock.Add(60 * time.Millisecond) // past the deadline
	if first, count, _, err := reserveWith(g, stale); !errors.Is(err, ErrStopped) {
		t.Fatalf("reserve with a stale reading after the deadline = %d, %d, %v; want ErrStopped", first, count, err)
	}
}

// SystemClock.Sleep never returns early, on either of its paths, and a
// cancelled context ends it at once.
func TestSystemClockSleep(t *testing.T) {
	for _, d := range []time.Duration{300 * time.Microsecond, 1500 * time.Microsecond, 3 * time.Millisecond} {
		start := time.Now()
		if err := (SystemClock{}).Sleep(context.Background(), d); err != nil {
			t.Fatalf("Sleep(%v) = %v", d, err)
		}
		if got := time.Since(start); got < d {
			t.Errorf("Sleep(%v) returned after %v", d, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{time.Millisecond, time.Hour} {
		if err := (SystemClock{}).Sleep(ctx, d); !errors.Is(err, context.Canceled) {
			t.Errorf("Sleep(%v) with a cancelled context = %v", d, err)
		}
	}
}

// sleepCounter is an injected clock that records how many callers are in
// Sleep at once. A sleeper yields a while before the fake time moves, so
// that other callers needing the next tick arrive meanwhile.
type sleepCounter struct {
	*clocktest.Fake
	mu             sync.Mutex
	sleeping, most int
}

func (c *sleepCounter) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	c.sleeping++
	c.most = max(c.most, c.sleeping)
	c.mu.Unlock()
	for range 200 {
		runtime.Gosched()
	}
	err := c.Fake.Sleep(ctx, d)
	c.mu.Lock()
	c.sleeping--
	c.mu.Unlock()
	return err
}

// Callers waiting for the next tick share one sleeper: the others wait for
// it to wake (on Linux every sleeper holds a thread in nanosleep).
func TestOneSleeperPerTick(t *testing.T) {
	clock := &sleepCounter{Fake: clocktest.New(testNow)}
	tiny := Layout{Name: "tiny", TimeBits: 41, WorkerBits: 20, SequenceBits: 2, Unit: time.Millisecond, Epoch: testNow.AddDate(-1, 0, 0)}
	g := newTestGen(t, Settings{Layout: tiny, Clock: clock})
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	per := make([][]int64, goroutines)
	for w := range goroutines {
		wg.Go(func() {
			for range each {
				id, err := g.NextID(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				per[w] = append(per[w], id)
			}
		})
	}
	wg.Wait()
	checkUnique(t, slices.Concat(per...))
	if calls, _ := clock.Slept(); calls == 0 {
		t.Fatal("no caller waited for a tick: the test proves nothing")
	}
	if clock.most != 1 {
		t.Fatalf("%d callers slept for the next tick at once, want 1", clock.most)
	}
}
