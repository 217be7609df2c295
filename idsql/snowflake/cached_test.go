package snowflake

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/clocktest"
)

func newTestCached(t testing.TB, lease holder.Lease, s Settings, cs CachedSettings) *Cached {
	t.Helper()
	c, err := NewCached(context.Background(), lease, s, cs)
	if err != nil {
		t.Fatalf("NewCached: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestCachedUniqueConcurrent(t *testing.T) {
	c := newTestCached(t, holder.NewStaticLease(9, time.Time{}), Settings{}, CachedSettings{Size: 1 << 12})
	const goroutines, each = 8, 200_000
	per := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for w := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				id, err := c.NextID(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				per[w] = append(per[w], id)
			}
		}()
	}
	wg.Wait()
	all := slices.Concat(per...)
	if len(all) != goroutines*each {
		t.Fatalf("got %d IDs", len(all))
	}
	checkUnique(t, all)
	for _, ids := range per {
		if !slices.IsSorted(ids) {
			t.Fatal("one goroutine's IDs are not increasing")
		}
	}
}

// The filler never borrows further ahead than MaxDrift; takers wait for the
// clock once the ring is dry and the drift is used up.
func TestCachedDriftBound(t *testing.T) {
	clock := clocktest.New(testNow)
	c := newTestCached(t, holder.NewStaticLease(1, time.Time{}), Settings{Clock: clock}, CachedSettings{Size: 1 << 16, MaxDrift: 3 * time.Millisecond})
	ctx := context.Background()
	ids, err := c.NextIDs(ctx, 4*4096) // now + 3 ticks ahead = 4 ticks
	if err != nil {
		t.Fatal(err)
	}
	checkUnique(t, ids)
	if hw := c.Generator().HighWater(); hw.After(testNow.Add(3 * time.Millisecond)) {
		t.Fatalf("high water %s is more than 3ms ahead of the clock %s", hw, testNow)
	}
	// The next take must wait: the ring is dry and borrowing is used up.
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.NextID(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("take past the drift bound = %v, want it to wait", err)
	}
	clock.Add(time.Millisecond)
	id, err := c.NextID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := Leaf.Decompose(id).Time; !got.Equal(testNow.Add(4 * time.Millisecond)) {
		t.Errorf("next ID in tick %s, want now+4ms", got)
	}
}

// A lost lease stops takes at once, even with IDs in the ring.
func TestCachedLeaseLost(t *testing.T) {
	lease := holder.NewStaticLease(1, time.Time{})
	c := newTestCached(t, lease, Settings{}, CachedSettings{})
	if _, err := c.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
	lease.End(holder.ErrLeaseLost)
	if _, err := c.NextID(context.Background()); !errors.Is(err, ErrStopped) || !errors.Is(err, holder.ErrLeaseLost) {
		t.Fatalf("take after lease loss = %v", err)
	}
}

func TestCachedClose(t *testing.T) {
	c := newTestCached(t, holder.NewStaticLease(1, time.Time{}), Settings{}, CachedSettings{})
	c.Close()
	c.Close() // idempotent
	// Whatever was buffered may still be taken; once dry, takes fail.
	for {
		if _, err := c.NextID(context.Background()); err != nil {
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("take after Close = %v, want ErrClosed", err)
			}
			return
		}
	}
}

func TestCachedSettingsRejected(t *testing.T) {
	for _, cs := range []CachedSettings{{Size: -1}, {Size: 1024, Threshold: 2048}} {
		if _, err := NewCached(context.Background(), holder.NewStaticLease(1, time.Time{}), Settings{}, cs); err == nil {
			t.Errorf("NewCached(%+v) accepted", cs)
		}
	}
}

// A wide layout's default ring is capped (4 ticks of 22 sequence bits would
// be 16M slots, 128 MiB).
func TestCachedDefaultSizeCapped(t *testing.T) {
	wide := Layout{Name: "wide", TimeBits: 40, WorkerBits: 1, SequenceBits: 22,
		Unit: time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	c := newTestCached(t, holder.NewStaticLease(1, time.Time{}), Settings{Layout: wide}, CachedSettings{})
	if n := len(c.slots); n != 1<<20 {
		t.Fatalf("default ring of %d slots, want 1<<20", n)
	}
	if _, err := c.NextID(context.Background()); err != nil {
		t.Fatal(err)
	}
}
