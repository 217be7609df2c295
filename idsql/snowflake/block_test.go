package snowflake

import (
	"context"
	"errors"
	"fmt"
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
	// 14 drew the block {15, 16, 17}: taken later, in later ticks, they
	// carry the tick that drew them.
	clock.Add(time.Millisecond)
	for want := int64(15); want <= 17; want++ {
		id, err := g.NextID(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if p := Leaf.Decompose(id); p.Sequence != want || !p.Time.Equal(Leaf.TimeOf(Leaf.Tick(testNow))) {
			t.Fatalf("ID %d: %+v, want sequence %d in the first tick", id, p, want)
		}
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

// A block is drawn through the checks of one ID: never with a reading at
// or past the lease's deadline. Its IDs are stamped with the reading that
// drew it, so the few left when a paused process resumes past the deadline
// (before its holder has ended the lease) carry ticks before the deadline,
// as an ID NextID returned just before the pause would; once they are
// used up the generator refuses.
func TestBlockDeadline(t *testing.T) {
	clock := clocktest.New(testNow)
	lease := holder.NewStaticLease(5, time.Time{})
	lease.SetClock(clock.Now)
	deadline := testNow.Add(100 * time.Millisecond)
	lease.Renew(deadline, time.Time{})
	g, err := New(context.Background(), lease, Settings{Clock: clock, Block: 8})
	if err != nil {
		t.Fatal(err)
	}
	clock.Add(99 * time.Millisecond)
	seqs(t, g, 5)        // 0, 1, 2 with block {3}, 4 with block {5, 6, 7}
	clock.Add(time.Hour) // a pause past the deadline
	issued := 0
	for {
		id, err := g.NextID(context.Background())
		if err != nil {
			if !errors.Is(err, ErrStopped) {
				t.Fatalf("NextID past the deadline = %v, want ErrStopped", err)
			}
			break
		}
		if at := Leaf.Decompose(id).Time; !at.Before(deadline) {
			t.Fatalf("ID %d stamped %s, at or past the deadline %s", id, at, deadline)
		}
		if issued++; issued > 3 {
			t.Fatalf("%d IDs past the deadline, more than the block held", issued)
		}
	}
	if issued != 3 {
		t.Errorf("%d IDs of the block taken past the deadline, want its 3", issued)
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
// dropped a tick after it was drawn: the next ID after a pause is stamped
// with a reading taken after the pause, not with the block's.
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
	// Wait, without drawing, for the block's timer to drop it.
	deadline := time.Now().Add(10 * time.Second)
	for g.blk.Load() == b {
		if time.Now().After(deadline) {
			t.Fatal("the block with IDs left was not dropped within 10s")
		}
		time.Sleep(time.Millisecond)
	}
	if b.taken.Load() < dropped {
		t.Fatalf("the block was replaced without being dropped (taken %d)", b.taken.Load())
	}
	after := time.Now()
	id, err := g.NextID(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := Leaf.Tick(Leaf.Decompose(id).Time), Leaf.Tick(after); got < want {
		t.Fatalf("the ID after the block expired is of tick %d, before the tick %d of the reading after it", got, want)
	}
}
