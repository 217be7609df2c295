package snowflake

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/clocktest"
)

func newTestGen(t testing.TB, s Settings) *Generator {
	t.Helper()
	g, err := New(context.Background(), holder.NewStaticLease(3, time.Time{}), s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return g
}

// checkUnique fails unless the IDs, gathered from several goroutines, are
// all distinct and positive.
func checkUnique(t *testing.T, ids []int64) {
	t.Helper()
	slices.Sort(ids)
	for i, id := range ids {
		if id <= 0 {
			t.Fatalf("ID %d is not positive", id)
		}
		if i > 0 && ids[i-1] == id {
			t.Fatalf("duplicate ID %d", id)
		}
	}
}

// TestUniqueConcurrent takes IDs from 8 goroutines: every goroutine sees
// strictly increasing IDs and no ID repeats. On the injected clock, which
// moves only when a caller sleeps for the next tick, 1 million IDs are 245
// ticks used up to the last sequence number; on the real clock 400,000 IDs
// (about 100 ms at the leaf layout's ceiling) exercise the real waits.
// With Settings.Block the callers also race for a block's IDs and for
// drawing the next block.
func TestUniqueConcurrent(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clock Clock
		total int
		block int
	}{
		{"injected clock", clocktest.New(testNow), 1_000_000, 0},
		{"system clock", nil, 400_000, 0},
		{"injected clock, blocks", clocktest.New(testNow), 400_000, 16},
		{"system clock, blocks", nil, 400_000, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			total := tc.total
			if testing.Short() {
				total /= 10
			}
			testUniqueConcurrent(t, newTestGen(t, Settings{Clock: tc.clock, Block: tc.block}), total)
		})
	}
}

func testUniqueConcurrent(t *testing.T, g *Generator, total int) {
	const workers = 8
	per := make([][]int64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]int64, 0, total/workers)
			for range total / workers {
				id, err := g.NextID(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				if n := len(ids); n > 0 && id <= ids[n-1] {
					t.Errorf("goroutine %d: ID %d after %d", w, id, ids[n-1])
					return
				}
				ids = append(ids, id)
			}
			per[w] = ids
		}()
	}
	wg.Wait()
	all := slices.Concat(per...)
	if len(all) != total {
		t.Fatalf("got %d IDs, want %d", len(all), total)
	}
	checkUnique(t, all)
	if w := Leaf.Decompose(all[0]).Worker; w != 3 {
		t.Errorf("worker = %d, want 3", w)
	}
}

func TestStrictlyIncreasingWithBatches(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock})
	ctx := context.Background()
	var prev int64
	for i := range 2000 {
		var ids []int64
		var err error
		if i%2 == 0 {
			ids, err = g.NextIDs(ctx, 1+i%5000)
		} else {
			var id int64
			id, err = g.NextID(ctx)
			ids = []int64{id}
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if id <= prev {
				t.Fatalf("ID %d after %d", id, prev)
			}
			prev = id
		}
		if i%7 == 0 {
			clock.Add(time.Millisecond)
		}
	}
}

// When a tick's sequence is used up the generator waits for the next tick.
func TestSequenceExhaustedWaitsForNextTick(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock})
	ids, err := g.NextIDs(context.Background(), 4096+10)
	if err != nil {
		t.Fatal(err)
	}
	first, last := Leaf.Decompose(ids[0]), Leaf.Decompose(ids[4096])
	if first.Sequence != 0 || Leaf.Decompose(ids[4095]).Sequence != 4095 {
		t.Errorf("first tick sequences %d..%d, want 0..4095", first.Sequence, Leaf.Decompose(ids[4095]).Sequence)
	}
	if got := last.Time.Sub(first.Time); got != time.Millisecond || last.Sequence != 0 {
		t.Errorf("ID 4097 is %v later with sequence %d, want 1ms later at 0", got, last.Sequence)
	}
	if calls, total := clock.Slept(); calls != 1 || total != time.Millisecond {
		t.Errorf("slept %d times for %v, want once for 1ms", calls, total)
	}
}

func TestClockBackwardSmallWaits(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock})
	ctx := context.Background()
	before, _ := g.NextID(ctx)
	clock.Add(-3 * time.Millisecond)
	after, err := g.NextID(ctx)
	if err != nil {
		t.Fatalf("3ms back (max 5ms): %v", err)
	}
	if after <= before {
		t.Errorf("ID %d after %d", after, before)
	}
	if _, total := clock.Slept(); total != 3*time.Millisecond {
		t.Errorf("waited %v, want 3ms", total)
	}
}

func TestClockBackwardLargeFails(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock, MaxBackward: 10 * time.Millisecond})
	ctx := context.Background()
	if _, err := g.NextID(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Add(-2 * time.Second)
	_, err := g.NextID(ctx)
	var cb *ClockBackwardError
	if !errors.As(err, &cb) || !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("NextID = %v, want *ClockBackwardError", err)
	}
	if cb.Behind != 2*time.Second || cb.Max != 10*time.Millisecond {
		t.Errorf("error %+v, want 2s behind, max 10ms", cb)
	}
	if calls, _ := clock.Slept(); calls != 0 {
		t.Errorf("slept %d times; a large step must fail at once", calls)
	}
	// Once the clock catches up the generator works again, still increasing.
	clock.Add(2 * time.Second)
	if _, err := g.NextID(ctx); err != nil {
		t.Errorf("after the clock caught up: %v", err)
	}
}

func TestMaxBackwardNegativeFailsAtOnce(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock, MaxBackward: -1})
	g.NextID(context.Background())
	clock.Add(-time.Millisecond)
	if _, err := g.NextID(context.Background()); !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("NextID = %v, want ErrClockBackwards", err)
	}
}

// A layout whose time bits run out fails with ErrExhausted, never a negative
// ID.
func TestOverflowFails(t *testing.T) {
	clock := clocktest.New(testNow)
	l := Layout{Name: "short", TimeBits: 30, WorkerBits: 20, SequenceBits: 13, Unit: time.Second,
		Epoch: testNow.Add(-(1<<30 - 2*366*24*3600) * time.Second)} // about two years left
	g, err := New(context.Background(), holder.NewStaticLease(1, time.Time{}), Settings{Layout: l, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	clock.Set(l.Horizon())
	last, err := g.NextID(context.Background())
	if err != nil || last <= 0 {
		t.Fatalf("in the last tick: %d, %v", last, err)
	}
	clock.Set(l.Horizon().Add(time.Second))
	id, err := g.NextID(context.Background())
	if !errors.Is(err, ErrExhausted) || id != 0 {
		t.Fatalf("past the horizon: %d, %v; want ErrExhausted", id, err)
	}
}

func TestStartRefusesClockBehindPersisted(t *testing.T) {
	clock := clocktest.New(testNow)
	lease := holder.NewStaticLease(2, testNow.Add(90*time.Second))
	_, err := New(context.Background(), lease, Settings{Clock: clock})
	var cb *ClockBehindError
	if !errors.As(err, &cb) || !errors.Is(err, ErrClockBackwards) {
		t.Fatalf("New = %v, want *ClockBehindError", err)
	}
	if !cb.Now.Equal(testNow) || !cb.After.Equal(testNow.Add(90*time.Second)) || !strings.Contains(err.Error(), "1m30s behind") {
		t.Errorf("error = %v", err)
	}
	if _, slept := clock.Slept(); slept != 0 {
		t.Errorf("New slept %s before refusing; it should refuse at once", slept)
	}
}

// A successor whose clock is a little behind the horizon its predecessor
// persisted waits for the clock to pass it, then issues only later ticks.
func TestStartWaitsForHorizon(t *testing.T) {
	clock := clocktest.New(testNow)
	after := testNow.Add(1500 * time.Millisecond)
	g, err := New(context.Background(), holder.NewStaticLease(2, after), Settings{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	if _, slept := clock.Slept(); slept < 1500*time.Millisecond {
		t.Errorf("New slept %s, want at least 1.5s", slept)
	}
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := Leaf.Decompose(id).Time; !got.After(after) {
		t.Errorf("first ID at %s, want after the horizon %s", got, after)
	}
}

// newDeadlineGen returns a generator on the injected clock under a lease
// on worker 5 whose deadline is 100 ms after testNow, with no horizon.
func newDeadlineGen(t *testing.T) (*Generator, *clocktest.Fake, *holder.StaticLease) {
	t.Helper()
	clock := clocktest.New(testNow)
	lease := holder.NewStaticLease(5, time.Time{})
	lease.SetClock(clock.Now)
	lease.Renew(testNow.Add(100*time.Millisecond), time.Time{})
	g, err := New(context.Background(), lease, Settings{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return g, clock, lease
}

// A paused process cannot close anything, so the deadline is checked with
// the clock reading that stamps each ID: past it the generator refuses even
// though Done is still open.
func TestDeadlineFencesWithoutDone(t *testing.T) {
	g, clock, lease := newDeadlineGen(t)
	ctx := context.Background()
	if _, err := g.NextID(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Add(99 * time.Millisecond)
	if _, err := g.NextID(ctx); err != nil {
		t.Fatalf("NextID 1ms before the deadline = %v", err)
	}
	clock.Add(time.Millisecond) // the "pause" ends exactly at the deadline
	id, err := g.NextID(ctx)
	if !errors.Is(err, ErrStopped) || !errors.Is(err, holder.ErrLeaseLost) || id != 0 {
		t.Fatalf("NextID at the deadline = %d, %v; want ErrStopped wrapping holder.ErrLeaseLost", id, err)
	}
	// A renewal that came too late does not revive it.
	lease.Renew(testNow.Add(time.Hour), time.Time{})
	if _, err := g.NextID(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("NextID after a late renewal = %v, want ErrStopped", err)
	}
}

// A renewed deadline lets the generator go on.
func TestDeadlineRenewed(t *testing.T) {
	g, clock, lease := newDeadlineGen(t)
	clock.Add(90 * time.Millisecond)
	lease.Renew(testNow.Add(200*time.Millisecond), time.Time{})
	clock.Add(50 * time.Millisecond)
	if _, err := g.NextID(context.Background()); err != nil {
		t.Fatalf("NextID after renewal = %v", err)
	}
}

// The generator never stamps an ID in a tick ending after the persisted
// horizon, whatever the deadline says.
// No ID is stamped in a tick that ends after the lease's horizon, whether
// the generator reaches that tick by waiting for it (a clock that stands
// still until the generator sleeps) or by finding the clock there (a clock
// that moves on its own, read on NextID's fast path).
func TestHorizonBoundsTicks(t *testing.T) {
	for _, step := range []time.Duration{0, 100 * time.Microsecond} {
		t.Run(fmt.Sprintf("step=%s", step), func(t *testing.T) {
			clock := clocktest.New(testNow)
			lease := holder.NewStaticLease(6, time.Time{})
			horizon := testNow.Add(10 * time.Millisecond)
			lease.Renew(time.Time{}, horizon)
			g, err := New(context.Background(), lease, Settings{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			var last int64
			for i := 0; ; i++ {
				if i == 100_000 { // the ten ticks hold 40,960 IDs
					t.Fatalf("still issuing after %d IDs: the last at %s, the horizon %s", i, Leaf.Decompose(last).Time, horizon)
				}
				clock.Add(step)
				id, err := g.NextID(ctx)
				if err != nil {
					if !errors.Is(err, ErrStopped) || !strings.Contains(err.Error(), "horizon") {
						t.Fatalf("NextID = %v, want ErrStopped naming the horizon", err)
					}
					break
				}
				last = id
			}
			if end := Leaf.Decompose(last).Time.Add(Leaf.Unit); end.After(horizon) {
				t.Fatalf("last ID's tick ends at %s, after the horizon %s", end, horizon)
			}
			if got, want := Leaf.Decompose(last).Time, horizon.Add(-Leaf.Unit); !got.Equal(want) {
				t.Errorf("last ID's tick %s, want the last tick before the horizon %s", got, want)
			}
			// A successor starting after this horizon issues only later ticks.
			g2, err := New(ctx, holder.NewStaticLease(6, horizon), Settings{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			id, err := g2.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if id <= last {
				t.Fatalf("successor's first ID %d is not above the predecessor's last %d", id, last)
			}
		})
	}
}

// Stop is final and returns the horizon to persist: the tick of the last ID.
func TestStopReturnsLastTick(t *testing.T) {
	clock := clocktest.New(testNow)
	g, err := New(context.Background(), holder.NewStaticLease(7, time.Time{}), Settings{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	clock.Add(5 * time.Millisecond)
	id, err := g.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	last := g.Stop()
	if want := Leaf.Decompose(id).Time; !last.Equal(want) {
		t.Errorf("Stop = %s, want the last ID's tick %s", last, want)
	}
	if _, err := g.NextID(ctx); !errors.Is(err, ErrStopped) {
		t.Fatalf("NextID after Stop = %v, want ErrStopped", err)
	}
	if again := g.Stop(); !again.Equal(last) {
		t.Errorf("second Stop = %s, want %s", again, last)
	}
}

// After a restart in the same tick as the persisted timestamp, IDs start in a
// later tick, so none repeats an ID issued before.
func TestStartAfterPersistedTick(t *testing.T) {
	clock := clocktest.New(testNow)
	lease := holder.NewStaticLease(2, testNow)
	g, err := New(context.Background(), lease, Settings{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := Leaf.Decompose(id).Time; !got.After(testNow) {
		t.Errorf("first ID at %s, want after the persisted %s", got, testNow)
	}
	if g.HighWater().Before(Leaf.Decompose(id).Time) {
		t.Errorf("high water %s is behind the issued ID", g.HighWater())
	}
}

// channelOnlyLease hides its lease's EndFlag: the generator must watch
// Done instead.
type channelOnlyLease struct{ Lease }

// The generator stops at once when its lease ends, whether it reads the
// lease's end flag or receives from its Done channel.
func TestLeaseLostStops(t *testing.T) {
	for _, flagged := range []bool{true, false} {
		t.Run(fmt.Sprintf("flag=%v", flagged), func(t *testing.T) {
			lease := holder.NewStaticLease(4, time.Time{})
			var l Lease = lease
			if !flagged {
				l = channelOnlyLease{lease}
			}
			if _, ok := l.(EndFlagger); ok != flagged {
				t.Fatalf("lease implements EndFlagger: %v, want %v", ok, flagged)
			}
			g, err := New(context.Background(), l, Settings{Clock: clocktest.New(testNow)})
			if err != nil {
				t.Fatal(err)
			}
			for range 3 { // the first ID opens a tick; the next ones take the fast path
				if _, err := g.NextID(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			lease.End(holder.ErrLeaseLost)
			_, err = g.NextID(context.Background())
			if !errors.Is(err, ErrStopped) || !errors.Is(err, holder.ErrLeaseLost) || !strings.Contains(err.Error(), "worker 4") {
				t.Fatalf("NextID after lease loss = %v", err)
			}
			for _, n := range []int{1, 3} {
				if _, err := g.NextIDs(context.Background(), n); !errors.Is(err, ErrStopped) {
					t.Fatalf("NextIDs(%d) after lease loss = %v", n, err)
				}
			}
		})
	}
}

func TestRandomStart(t *testing.T) {
	clock := clocktest.New(testNow)
	var asked []uint64
	g := newTestGen(t, Settings{Clock: clock, RandomStart: 100, Rand: func(n uint64) uint64 {
		asked = append(asked, n)
		return 57
	}})
	a, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sa, sb := Leaf.Decompose(a).Sequence, Leaf.Decompose(b).Sequence; sa != 57 || sb != 58 {
		t.Errorf("sequences %d, %d; want 57, 58", sa, sb)
	}
	if len(asked) != 1 || asked[0] != 100 {
		t.Errorf("rand asked %v, want once for 100", asked)
	}
}

func TestSettingsRejected(t *testing.T) {
	tests := []struct {
		name  string
		s     Settings
		lease holder.Lease
		want  string
	}{
		{"random start too big", Settings{RandomStart: 3000}, holder.NewStaticLease(1, time.Time{}), "RandomStart 3000 out of range 0..2048"},
		{"worker too big", Settings{}, holder.NewStaticLease(1024, time.Time{}), "worker ID 1024 out of range 0..1023"},
		{"bad layout", Settings{Layout: Layout{TimeBits: 1}}, holder.NewStaticLease(1, time.Time{}), "each must be at least 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(context.Background(), tt.lease, tt.s); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestWaitHonoursContext: with this second's sequences used up, NextID must
// wait for the next second; on a cancelled context it returns at once. The
// clock is fake and stands still, so the second cannot roll over meanwhile.
func TestWaitHonoursContext(t *testing.T) {
	clock := clocktest.New(testNow)
	slow := Layout{Name: "slow", TimeBits: 40, WorkerBits: 22, SequenceBits: 1, Unit: time.Second, Epoch: testNow.AddDate(-1, 0, 0)}
	g := newTestGen(t, Settings{Clock: clock, Layout: slow})
	ctx, cancel := context.WithCancel(context.Background())
	if ids, err := g.NextIDs(ctx, 2); err != nil || len(ids) != 2 { // this second's two sequences
		t.Fatalf("NextIDs(2) = %v, %v", ids, err)
	}
	cancel()
	if _, err := g.NextID(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("NextID with a cancelled context = %v", err)
	}
	// Without the cancel it waits for the next second and goes on.
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if at, next := slow.Decompose(id).Time, testNow.Truncate(time.Second).Add(time.Second); at.Before(next) {
		t.Errorf("NextID after the wait = %d, issued at %s; want %s or later", id, at, next)
	}
	if calls, total := clock.Slept(); calls == 0 || total <= 0 {
		t.Errorf("the generator slept %d times for %s; want a wait for the next second", calls, total)
	}
}
