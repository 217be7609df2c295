package segment_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

func newGen(t testing.TB, store segment.Store, s segment.Settings) *segment.Generator {
	t.Helper()
	if s.RefreshInterval == 0 {
		s.RefreshInterval = -1
	}
	g, err := segment.New(context.Background(), store, s)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func mustKey(t testing.TB, g *segment.Generator, name string) *segment.Key {
	t.Helper()
	k, err := g.Key(context.Background(), name)
	if err != nil {
		t.Fatalf("Key(%q): %v", name, err)
	}
	return k
}

func TestSettingsValidation(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	tests := []struct {
		name  string
		s     segment.Settings
		field string
	}{
		{"threshold high", segment.Settings{Threshold: 1}, "Threshold"},
		{"threshold negative", segment.Settings{Threshold: -0.5}, "Threshold"},
		{"target negative", segment.Settings{TargetDuration: -time.Second}, "TargetDuration"},
		{"max step negative", segment.Settings{MaxStep: -1}, "MaxStep"},
		{"wait negative", segment.Settings{WaitTimeout: -1}, "WaitTimeout"},
		{"retry inverted", segment.Settings{RetryMin: time.Second, RetryMax: time.Millisecond}, "RetryMax"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := segment.New(context.Background(), store, tt.s)
			var se *segment.SettingsError
			if !errors.As(err, &se) || se.Field != tt.field || !errors.Is(err, segment.ErrInvalidSettings) {
				t.Fatalf("got %v, want a SettingsError on %s", err, tt.field)
			}
		})
	}
	g := newGen(t, store, segment.Settings{})
	s := g.Settings()
	if s.Threshold != 0.1 || s.TargetDuration != 15*time.Minute || s.MaxStep != 1_000_000 || s.WaitTimeout == 0 || s.Instance == "" {
		t.Fatalf("defaults not applied: %+v", s)
	}
}

func TestNextSequentialAndPreload(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 100})
	g := newGen(t, store, segment.Settings{MaxStep: 100})
	k := mustKey(t, g, "a")
	ctx := context.Background()
	for want := int64(1); want <= 1000; want++ {
		got, err := k.Next(ctx)
		if err != nil || got != want {
			t.Fatalf("Next = %d, %v; want %d", got, err, want)
		}
	}
	// 10 ranges consumed, the 11th is preloaded (or loading): never more.
	waitIdle(t, k)
	if n, unused := store.calls.Load(), unusedRanges(k); n != 10+unused || unused != 1 {
		t.Fatalf("%d allocations for 10 ranges consumed and %d unused, want 11", n, unused)
	}
}

// unusedRanges counts the ranges k holds without having handed out any ID
// of them: the preloaded next, or a current one installed while no caller
// needed it yet.
func unusedRanges(k *segment.Key) int64 {
	st := k.Stats()
	n := int64(0)
	if st.Next.Ready {
		n++
	}
	if st.Current.Ready && st.Current.Value < st.Current.First {
		n++
	}
	return n
}

// waitIdle waits until no background load of k is in flight. It polls a
// goroutine's progress; it does not wait for time to pass.
func waitIdle(t testing.TB, k *segment.Key) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for k.Stats().Loading {
		if time.Now().After(deadline) {
			t.Fatalf("key %s still loading", k.Name())
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func TestUnknownKey(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	g := newGen(t, store, segment.Settings{})
	_, err := g.NextID(context.Background(), "nope")
	var ke *segment.KeyError
	if !errors.Is(err, segment.ErrUnknownKey) || !errors.As(err, &ke) || ke.Key != "nope" {
		t.Fatalf("got %v, want ErrUnknownKey naming the key", err)
	}
}

// TestOneAllocationPerRange counts store round trips: exactly one per range
// consumed (plus the one preloaded range), under concurrency.
func TestOneAllocationPerRange(t *testing.T) {
	const step, ranges, workers = 100, 200, 8
	store := newMemStore(map[string]int64{"a": step})
	g := newGen(t, store, segment.Settings{MaxStep: step})
	k := mustKey(t, g, "a")
	ids := takeConcurrently(t, k, workers, step*ranges/workers)
	slices.Sort(ids)
	for i, id := range ids {
		if id != int64(i+1) {
			t.Fatalf("ids[%d] = %d: IDs are not exactly 1..%d", i, id, len(ids))
		}
	}
	waitIdle(t, k)
	unused := unusedRanges(k)
	if n := store.calls.Load(); n != ranges+unused || unused > 1 {
		t.Fatalf("%d allocations for %d ranges consumed and %d unused", n, ranges, unused)
	}
}

func takeConcurrently(t testing.TB, k *segment.Key, workers, each int) []int64 {
	t.Helper()
	out := make([][]int64, workers)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]int64, 0, each)
			for range each {
				id, err := k.Next(context.Background())
				if err != nil {
					errs <- err
					return
				}
				buf = append(buf, id)
			}
			out[w] = buf
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return slices.Concat(out...)
}

func TestNextIDs(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 100})
	g := newGen(t, store, segment.Settings{MaxStep: 100})
	ctx := context.Background()
	seen := map[int64]bool{}
	for _, n := range []int{1, 5, 99, 100, 250, 1000, 0, 7} {
		ids, err := g.NextIDs(ctx, "a", n)
		if err != nil || len(ids) != n {
			t.Fatalf("NextIDs(%d) = %d IDs, %v", n, len(ids), err)
		}
		for _, id := range ids {
			if seen[id] || id <= 0 {
				t.Fatalf("duplicate or non-positive %d", id)
			}
			seen[id] = true
		}
	}
	// Mixed with Next from other goroutines.
	k := mustKey(t, g, "a")
	var wg sync.WaitGroup
	var mu sync.Mutex
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				var got []int64
				if w%2 == 0 {
					id, err := k.Next(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					got = []int64{id}
				} else {
					ids, err := k.NextIDs(ctx, i%37+1)
					if err != nil {
						t.Error(err)
						return
					}
					got = ids
				}
				mu.Lock()
				for _, id := range got {
					if seen[id] {
						t.Errorf("duplicate %d", id)
					}
					seen[id] = true
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// TestStepAdaptation drives the step with an injected clock: fast
// consumption doubles it up to MaxStep, 1x-2x the target keeps it, slower
// halves it down to the stored step.
func TestStepAdaptation(t *testing.T) {
	clock := newFakeClock()
	store := newMemStore(map[string]int64{"a": 100})
	g := newGen(t, store, segment.Settings{MaxStep: 400, Now: clock.Now, TargetDuration: 10 * time.Minute})
	k := mustKey(t, g, "a")
	ctx := context.Background()
	// Before each load, advance the clock by the given duration. A load is
	// started by the ID at 10% of the current segment, so we consume one ID
	// at a time and advance the clock right before the one that triggers.
	advances := []time.Duration{
		1 * time.Minute,  // 100 -> 200
		1 * time.Minute,  // 200 -> 400
		1 * time.Minute,  // 400 stays (MaxStep)
		15 * time.Minute, // 1x-2x: stays 400
		25 * time.Minute, // slower: 200
		25 * time.Minute, // 100
		25 * time.Minute, // 50 -> floor 100
	}
	want := []int64{0, 200, 400, 400, 400, 200, 100, 100}
	if _, err := k.Next(ctx); err != nil { // first load: stored step
		t.Fatal(err)
	}
	for _, d := range advances {
		before := len(store.steps())
		clock.Advance(d)
		for len(store.steps()) == before {
			if _, err := k.Next(ctx); err != nil {
				t.Fatal(err)
			}
			if k.Stats().Loading {
				waitIdle(t, k)
			}
		}
	}
	if got := store.steps(); !slices.Equal(got, want) {
		t.Fatalf("requested steps %v, want %v", got, want)
	}
}

func TestRefreshAddsAndDropsKeys(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	g := newGen(t, store, segment.Settings{})
	ctx := context.Background()
	// NextID keeps the key it found last: a removed one must not stay
	// there.
	if _, err := g.NextID(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	store.addKey("b", 10)
	store.removeKey("a")
	if err := g.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.KeyNames(); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("keys after refresh %v", got)
	}
	if _, err := g.NextID(ctx, "a"); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("removed key, the last one NextID found: %v", err)
	}
	if _, err := g.NextID(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if _, err := g.NextID(ctx, "a"); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("removed key: %v", err)
	}
}

func TestRefreshPeriodic(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	g := newGen(t, store, segment.Settings{RefreshInterval: 5 * time.Millisecond})
	store.addKey("c", 10)
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(g.KeyNames(), "c") {
		if time.Now().After(deadline) {
			t.Fatal("periodic refresh never picked up key c")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestOutageBufferedIDsFlow: with the store down, buffered IDs keep
// flowing, a caller who outruns them gets a clear error naming the key and
// the cause, and the generator recovers when the store returns.
func TestOutageBufferedIDsFlow(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 100})
	g := newGen(t, store, segment.Settings{MaxStep: 100, WaitTimeout: 200 * time.Millisecond, RetryMin: time.Millisecond, RetryMax: 5 * time.Millisecond})
	k := mustKey(t, g, "a")
	ctx := context.Background()
	for range 11 { // the 11th ID starts the preload
		if _, err := k.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, k) // 1..100 current, 101..200 next
	store.setFail(errDown)
	for want := int64(12); want <= 200; want++ {
		got, err := k.Next(ctx)
		if err != nil || got != want {
			t.Fatalf("buffered ID: got %d, %v; want %d", got, err, want)
		}
	}
	_, err := k.Next(ctx)
	var ke *segment.KeyError
	if !errors.Is(err, errDown) || !errors.As(err, &ke) || ke.Key != "a" {
		t.Fatalf("outrunning the buffer: %v", err)
	}
	if st := k.Stats(); st.LoadErrors == 0 || st.LastError == "" {
		t.Fatalf("stats do not show the errors: %+v", st)
	}
	store.setFail(nil)
	id, err := k.Next(ctx)
	if err != nil || id <= 200 {
		t.Fatalf("after recovery: %d, %v", id, err)
	}
}

func TestWaitTimeout(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	store.gate = make(chan struct{})
	g := newGen(t, store, segment.Settings{WaitTimeout: 20 * time.Millisecond})
	_, err := g.NextID(context.Background(), "a")
	if !errors.Is(err, segment.ErrTimeout) {
		t.Fatalf("got %v, want ErrTimeout", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.NextID(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
	close(store.gate) // release the load in flight
}

func TestClose(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 10})
	g := newGen(t, store, segment.Settings{})
	k := mustKey(t, g, "a")
	if _, err := k.Next(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if _, err := k.Next(context.Background()); !errors.Is(err, segment.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestNextAllocatesNothing(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 1 << 20})
	g := newGen(t, store, segment.Settings{})
	k := mustKey(t, g, "a")
	ctx := context.Background()
	k.Next(ctx)
	waitIdle(t, k)
	if n := testing.AllocsPerRun(10000, func() { k.Next(ctx) }); n != 0 {
		t.Fatalf("Next allocates %v times per ID", n)
	}
}

// NextID by name allocates nothing, for one caller's name and for callers
// taking turns with names of their own (strings with their own bytes).
func TestNextIDByNameAllocatesNothing(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 1 << 20, "b": 1 << 20})
	g := newGen(t, store, segment.Settings{})
	ctx := context.Background()
	a1, a2, b := "a", strings.Clone("a"), strings.Clone("b")
	for _, k := range []string{"a", "b"} {
		g.NextID(ctx, k)
		waitIdle(t, mustKey(t, g, k))
	}
	if n := testing.AllocsPerRun(10000, func() { g.NextID(ctx, a1) }); n != 0 {
		t.Fatalf("NextID by one name allocates %v times per ID", n)
	}
	if n := testing.AllocsPerRun(10000, func() {
		g.NextID(ctx, a1)
		g.NextID(ctx, b)
		g.NextID(ctx, a2)
	}); n != 0 {
		t.Fatalf("NextID by names taking turns allocates %v times per 3 IDs", n)
	}
}

// TestNextIDsOneRoundTrip: a batch larger than everything buffered costs
// exactly one direct allocation, whatever its size.
func TestNextIDsOneRoundTrip(t *testing.T) {
	store := newMemStore(map[string]int64{"a": 100})
	g := newGen(t, store, segment.Settings{MaxStep: 100})
	k := mustKey(t, g, "a")
	ctx := context.Background()
	for range 11 { // load range 1 and start the preload of range 2
		if _, err := k.Next(ctx); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, k)
	before := store.calls.Load()
	ids, err := k.NextIDs(ctx, 5000) // 89 + 100 buffered, the rest direct
	if err != nil || len(ids) != 5000 {
		t.Fatalf("NextIDs: %d IDs, %v", len(ids), err)
	}
	checkUnique(t, ids)
	waitIdle(t, k)
	st := k.Stats()
	if st.Direct != 1 {
		t.Fatalf("%d direct allocations, want 1", st.Direct)
	}
	// Background loads run concurrently with the batch and may install a
	// few more step-100 segments before it is served, so their number
	// depends on scheduling. What does not: exactly one request of another
	// size, the direct range, sized to what the buffers could not cover.
	steps := store.steps()[before:]
	var direct []int64
	buffered := int64(89)
	for _, step := range steps {
		if step == 100 {
			buffered += 100
		} else {
			direct = append(direct, step)
		}
	}
	if len(direct) != 1 || direct[0] < 5000-buffered || direct[0] > 5000-89-100 {
		t.Fatalf("requested steps %v: want one direct range of the missing IDs (at most %d)", steps, 5000-89-100)
	}
}

// TestWarm: Warm loads the first range and hands out no ID, so Next then
// returns the range's first ID; a second Warm allocates nothing; a failing
// store is reported.
func TestWarm(t *testing.T) {
	ctx := context.Background()
	store := newMemStore(map[string]int64{"a": 10})
	g := newGen(t, store, segment.Settings{})
	k := mustKey(t, g, "a")
	if err := k.Warm(ctx); err != nil {
		t.Fatal(err)
	}
	if err := k.Warm(ctx); err != nil || store.calls.Load() != 1 {
		t.Fatalf("second Warm: %v, %d allocations; want nil and 1", err, store.calls.Load())
	}
	if id, err := k.Next(ctx); err != nil || id != 1 {
		t.Fatalf("Next after Warm = %d, %v; want 1, the first ID of the range", id, err)
	}

	failing := newMemStore(map[string]int64{"b": 10})
	gf := newGen(t, failing, segment.Settings{WaitTimeout: time.Minute})
	kb := mustKey(t, gf, "b")
	boom := errors.New("store down")
	failing.setFail(boom)
	if err := kb.Warm(ctx); !errors.Is(err, boom) {
		t.Fatalf("Warm on a failing store: %v, want %v", err, boom)
	}
}
