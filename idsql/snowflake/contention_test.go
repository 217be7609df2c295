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

// overtakingClock is an injected clock on which, once armed, a caller's
// reading is overtaken: after taking it, and before the caller can lock the
// generator, the clock moves a tick on and another ID is issued in that
// later tick.
type overtakingClock struct {
	*clocktest.Fake
	g     *Generator
	armed bool
	inner int64 // the ID issued in between
	err   error
}

func (c *overtakingClock) Now() time.Time {
	now := c.Fake.Now()
	if c.armed {
		c.armed = false
		c.Add(Leaf.Unit)
		c.inner, c.err = c.g.NextID(context.Background())
	}
	return now
}

// NextID reads the clock before it locks the generator. A reading that
// another caller's later one overtook meanwhile is not taken for a clock
// that stepped back (with MaxBackward negative that would fail): the ID
// comes after the other caller's, in its tick.
func TestOvertakenReadingIsNotABackwardClock(t *testing.T) {
	clock := &overtakingClock{Fake: clocktest.New(testNow)}
	g := newTestGen(t, Settings{Clock: clock, MaxBackward: -1})
	clock.g = g
	ctx := context.Background()
	if _, err := g.NextID(ctx); err != nil {
		t.Fatal(err)
	}
	clock.armed = true
	outer, err := g.NextID(ctx)
	if err != nil {
		t.Fatalf("NextID with its reading overtaken = %v", err)
	}
	if clock.err != nil || clock.inner == 0 {
		t.Fatalf("the ID issued in between: %d, %v", clock.inner, clock.err)
	}
	if outer <= clock.inner {
		t.Fatalf("ID %d is not above the one issued in between, %d", outer, clock.inner)
	}
	if got, want := Leaf.Decompose(outer).Time, Leaf.Decompose(clock.inner).Time; !got.Equal(want) {
		t.Errorf("ID stamped %s, want the overtaking tick %s", got, want)
	}
	if calls, _ := clock.Slept(); calls != 0 {
		t.Errorf("the generator slept %d times", calls)
	}
}
