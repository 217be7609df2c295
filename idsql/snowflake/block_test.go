package snowflake

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/clocktest"
)

// seqs returns the sequence numbers of n IDs taken one NextID at a time.
func seqs(t *testing.T, g *Generator, n int) []int64 {
	t.Helper()
	var out []int64
	for range n {
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Leaf.Decompose(id).Sequence)
	}
	return out
}

// A block is drawn only once IDs of the tick were drawn already, holds as
// many IDs as were drawn in the tick (up to Block), and loses what is left
// of it to any other draw: NextID alone uses every sequence number of a
// tick in order; NextIDs of several drops the block's rest.
func TestBlockDraws(t *testing.T) {
	clock := clocktest.New(testNow) // stands still: one tick
	g := newTestGen(t, Settings{Clock: clock, Block: 4})
	// Draws: 0 (opens the tick), 1 (one drawn: no block), 2 with block
	// {3}, 4 with block {5, 6, 7}, 8 with block {9, 10, 11} (Block caps).
	got := seqs(t, g, 10)
	if fmt.Sprint(got) != "[0 1 2 3 4 5 6 7 8 9]" {
		t.Fatalf("sequences %v, want 0..9 in order", got)
	}
	ids, err := g.NextIDs(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	// 10 and 11 were the block's rest: dropped, never issued.
	if a, b := Leaf.Decompose(ids[0]).Sequence, Leaf.Decompose(ids[1]).Sequence; a != 12 || b != 13 {
		t.Fatalf("NextIDs after a block = sequences %d, %d; want 12, 13", a, b)
	}
	if got := seqs(t, g, 1); got[0] != 14 {
		t.Fatalf("NextID after NextIDs = sequence %d, want 14", got[0])
	}
	// 14 drew the block {15, 16, 17}. A call whose reading is in a later
	// tick drops it and takes an ID of its own tick.
	clock.Add(time.Millisecond)
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := Leaf.Decompose(id); p.Sequence != 0 || !p.Time.Equal(Leaf.TimeOf(Leaf.Tick(clock.Now()))) {
		t.Fatalf("ID %d in the next tick: %+v, want sequence 0 of that tick, not the last tick's block", id, p)
	}
	// One ID a tick never draws a block.
	for i := range 5 {
		clock.Add(time.Millisecond)
		if got := seqs(t, g, 1); got[0] != 0 {
			t.Fatalf("tick %d: sequence %d, want 0", i, got[0])
		}
	}
	// A new tick opens with one ID, not a block from the last tick.
	clock.Add(time.Millisecond)
	if got := seqs(t, g, 3); fmt.Sprint(got) != "[0 1 2]" {
		t.Fatalf("sequences %v in a new tick, want [0 1 2]", got)
	}
}

// The lease's end and Stop refuse the IDs left in a block at once, on a
// lease with an end flag and on one with only its Done channel.
func TestBlockRefusedAfterEnd(t *testing.T) {
	for _, flagged := range []bool{true, false} {
		for _, stop := range []bool{false, true} {
			t.Run(fmt.Sprintf("flag=%v/stop=%v", flagged, stop), func(t *testing.T) {
				lease := holder.NewStaticLease(4, time.Time{})
				var l Lease = lease
				if !flagged {
					l = channelOnlyLease{lease}
				}
				g, err := New(context.Background(), l, Settings{Clock: clocktest.New(testNow), Block: 64})
				if err != nil {
					t.Fatal(err)
				}
				seqs(t, g, 20) // the last block (16 IDs) has 11 left
				if b := g.blk.Load(); b == nil || b.taken.Load() >= b.count {
					t.Fatal("no block with IDs left")
				}
				if stop {
					g.Stop()
				} else {
					lease.End(holder.ErrLeaseLost)
				}
				if id, err := g.NextID(context.Background()); !errors.Is(err, ErrStopped) {
					t.Fatalf("NextID = %d, %v; want ErrStopped", id, err)
				}
			})
		}
	}
}

// A block's IDs are taken only by calls whose own clock reading is before
// the lease's deadline: a paused process that resumes past it (before its
// holder has ended the lease) returns none of the IDs left in a block,
// whether the pause crossed into a later tick or ended in the block's own
// tick just past a deadline that falls inside it.
func TestBlockDeadline(t *testing.T) {
	for _, pause := range []time.Duration{time.Hour, 200 * time.Microsecond} {
		t.Run(pause.String(), func(t *testing.T) {
			clock := clocktest.New(testNow.Truncate(time.Millisecond))
			lease := holder.NewStaticLease(5, time.Time{})
			lease.SetClock(clock.Now)
			deadline := clock.Now().Add(99*time.Millisecond + 500*time.Microsecond)
			lease.Renew(deadline, time.Time{})
			g, err := New(context.Background(), lease, Settings{Clock: clock, Block: 8})
			if err != nil {
				t.Fatal(err)
			}
			clock.Add(99*time.Millisecond + 400*time.Microsecond)
			seqs(t, g, 5) // 0, 1, 2 with block {3}, 4 with block {5, 6, 7}
			if b := g.blk.Load(); b == nil || b.taken.Load() >= b.count {
				t.Fatal("no block with IDs left before the pause")
			}
			clock.Add(pause)
			if id, err := g.NextID(context.Background()); !errors.Is(err, ErrStopped) {
				t.Fatalf("NextID %s past the deadline = %d (%+v), %v; want ErrStopped", clock.Now().Sub(deadline), id, Leaf.Decompose(id), err)
			}
		})
	}
}

func TestBlockSetting(t *testing.T) {
	for _, b := range []int{-1, 4097} {
		if _, err := New(context.Background(), holder.NewStaticLease(1, time.Time{}), Settings{Block: b}); err == nil {
			t.Errorf("Block %d accepted", b)
		}
	}
}

// On the system clock the IDs left in a block when calls stop coming are
// not handed out once its tick is over: the next ID after a pause is
// stamped with a reading taken after the pause, not with the block's.
func TestBlockExpires(t *testing.T) {
	g := newTestGen(t, Settings{Block: 16})
	// Draw until a block with IDs left exists.
	for g.blk.Load() == nil {
		if _, err := g.NextID(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	b := g.blk.Load()
	if b.taken.Load() >= b.count {
		t.Fatalf("the block just drawn has no IDs left (taken %d of %d)", b.taken.Load(), b.count)
	}
	time.Sleep(2 * time.Millisecond) // past the block's tick
	after := time.Now()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Leaf.Tick(Leaf.Decompose(id).Time), Leaf.Tick(after); got < want {
		t.Fatalf("the ID after the pause is of tick %d, before the tick %d of the reading after it", got, want)
	}
	if b.taken.Load() < dropped {
		t.Fatalf("the stale block was not dropped (taken %d of %d)", b.taken.Load(), b.count)
	}
}

// A call whose reading is behind the block's tick (a clock stepped back,
// or a reading another caller's overtook) takes none of its IDs: it goes
// the way of any reading behind the state, which waits for the clock.
func TestBlockClockBack(t *testing.T) {
	clock := clocktest.New(testNow.Truncate(time.Millisecond).Add(500 * time.Microsecond))
	g := newTestGen(t, Settings{Clock: clock, Block: 8})
	seqs(t, g, 5) // 0, 1, 2 with block {3}, 4 with block {5, 6, 7}
	tick := Leaf.Tick(clock.Now())
	clock.Add(-time.Millisecond)
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := Leaf.Decompose(id)
	if Leaf.Tick(p.Time) == tick && p.Sequence < 8 {
		t.Fatalf("ID %d (%+v) after the clock stepped back came from the block", id, p)
	}
	if calls, _ := clock.Slept(); calls == 0 {
		t.Fatal("the generator did not wait for the clock that stepped back")
	}
}

// Blocks under a clock that steps forward and back, by less than
// MaxBackward, while 8 goroutines draw: readings before a block's tick
// and after it drop the block, and the IDs stay unique and increasing in
// each goroutine.
func TestBlockUniqueClockSteps(t *testing.T) {
	clock := clocktest.New(testNow)
	g := newTestGen(t, Settings{Clock: clock, Block: 16})
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				clock.Add(700 * time.Microsecond)
			} else {
				clock.Add(-300 * time.Microsecond)
			}
			runtime.Gosched()
		}
	}()
	testUniqueConcurrent(t, g, 200_000)
	close(stop)
	<-stopped
}
