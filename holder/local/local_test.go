package local_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holdertest"
	"github.com/idsql/idsql/holder/local"
)

func workers() map[string]int64 {
	m := map[string]int64{}
	for i := 0; i < 16; i++ {
		m[holdertest.Identity(i).Key()] = int64(i)
	}
	return m
}

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	holdertest.Run(t, func(t *testing.T, now func() time.Time) holder.Holder {
		h, err := local.New(local.Settings{Workers: workers(), Dir: dir, Now: now, Refresh: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}, holdertest.Options{})
}

func TestSettingsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		s    local.Settings
	}{
		{"no workers", local.Settings{Dir: t.TempDir()}},
		{"no dir", local.Settings{Workers: map[string]int64{"a": 1}}},
		{"duplicate", local.Settings{Workers: map[string]int64{"a": 1, "b": 1}, Dir: t.TempDir()}},
		{"negative", local.Settings{Workers: map[string]int64{"a": -1}, Dir: t.TempDir()}},
	} {
		if _, err := local.New(c.s); err == nil {
			t.Errorf("%s: New accepted %+v", c.name, c.s)
		}
	}
}

func TestPerTableKeyAndDoubleLease(t *testing.T) {
	ctx := context.Background()
	h, err := local.New(local.Settings{Dir: t.TempDir(), Workers: map[string]int64{"orders@a:1": 1, "a:1": 2}})
	if err != nil {
		t.Fatal(err)
	}
	inst := holder.Instance{Host: "a", Port: 1}
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: inst, WorkerBits: 4}
	l1, err := h.Acquire(ctx, req)
	if err != nil || l1.WorkerID() != 1 {
		t.Fatalf("orders: worker %v, err %v; want 1", l1, err)
	}
	req.Table = "users"
	l2, err := h.Acquire(ctx, req)
	if err != nil || l2.WorkerID() != 2 {
		t.Fatalf("users: err %v; want worker 2", err)
	}
	req.Table = "items" // falls back to "a:1" = 2, which is leased
	if _, err := h.Acquire(ctx, req); err == nil {
		t.Fatal("worker 2 leased twice")
	}
	l1.Release(ctx, time.Time{})
	l2.Release(ctx, time.Time{})
	if _, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{Host: "b"}, WorkerBits: 4}); err == nil || errors.Is(err, holder.ErrLeaseLost) {
		t.Fatalf("unknown identity: err = %v", err)
	}
}

// Two processes on one host mapped to the same worker ID: the second is
// refused while the first lives, and gets it once the first let go.
func TestSecondProcessRefused(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	newHolder := func() *local.Holder { // one Holder per process
		h, err := local.New(local.Settings{Dir: dir, Workers: map[string]int64{"host:0": 5}})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{Host: "host", PID: 4242}, WorkerBits: 10}
	first, err := newHolder().Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = newHolder().Acquire(ctx, req)
	if !errors.Is(err, holder.ErrIdentityInUse) || !strings.Contains(err.Error(), "pid 4242") || !strings.Contains(err.Error(), "since ") {
		t.Fatalf("second process: Acquire = %v, want ErrIdentityInUse naming the process that holds the worker ID and since when", err)
	}
	if err := first.Release(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	second, err := newHolder().Acquire(ctx, req)
	if err != nil {
		t.Fatalf("after the first released: %v", err)
	}
	second.Release(ctx, time.Time{})
}

// The horizon a lease vouches for is on disk before the lease has it, so a
// lease that is never released (its process killed) leaves it behind for the
// next one to start after. The holder's clock is the test's: each time it
// moves, the horizon must follow it (two refresh periods ahead of it), and
// at every look the horizon on disk is at least the lease's.
func TestHorizonOnDiskFirst(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var clock atomic.Int64 // the holder's wall clock, in Unix nanoseconds
	clock.Store(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	const refresh = 5 * time.Millisecond
	h, err := local.New(local.Settings{Dir: dir, Workers: map[string]int64{"a:1": 3}, Refresh: refresh, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{Host: "a", Port: 1}, WorkerBits: 10}
	l, err := h.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx, time.Time{})
	path := filepath.Join(dir, "ns.worker-3.json")
	for step := range 5 {
		if step > 0 {
			clock.Add(int64(time.Hour))
		}
		want := now().Add(2 * refresh)
		// The refresh runs on a real ticker: wait for it to catch up with
		// the clock, however long the machine makes it take.
		for looks := 0; ; looks++ {
			_, hz, err := l.Validity()
			if err != nil || hz.IsZero() {
				t.Fatalf("step %d: Validity = %s, %v; want a horizon", step, hz, err)
			}
			onDisk, err := local.ReadCache(path)
			if err != nil {
				t.Fatal(err)
			}
			if onDisk.Before(hz) {
				t.Fatalf("step %d: lease horizon %s is past the one on disk %s", step, hz, onDisk)
			}
			if hz.Equal(want) {
				break
			}
			if hz.After(want) || looks == 10000 {
				t.Fatalf("step %d: horizon %s after %d looks, want %s (the clock plus two refresh periods)", step, hz, looks, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// A clock that steps back while a lease runs never lowers the horizon in
// its cache file: IDs up to it may have been issued, and a process that
// takes the worker ID after a crash starts after it.
func TestHorizonNeverMovesBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	// After Acquire, the holder reads its clock once per refresh, and a
	// refresh writes the cache file before the next one reads the clock.
	// So once the clock has been read n+1 times since reads was reset, n
	// refreshes that read it after the reset have written the file.
	var mu sync.Mutex
	off := time.Duration(0)
	reads := 0
	now := func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		reads++
		return time.Now().Add(off)
	}
	// refreshed waits for n refreshes after the clock was last marked
	// (reads reset to 0), however long the machine makes them take. The
	// 10 s is no speed bound: three refreshes take 30 ms on a quiet
	// machine; only a refresh loop that stopped runs into it.
	refreshed := func(n int, what string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			mu.Lock()
			r := reads
			mu.Unlock()
			if r > n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the holder read its clock %d times in 10 s, want %d (%d refreshes, one every 10 ms)", what, r, n+1, n)
			}
		}
	}
	h, err := local.New(local.Settings{Dir: dir, Workers: map[string]int64{"x": 3}, Refresh: 10 * time.Millisecond, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "x"}, WorkerBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx, time.Time{})
	path := filepath.Join(dir, "ns.worker-3.json")
	mu.Lock()
	reads = 0
	mu.Unlock()
	refreshed(3, "before the step")
	before, err := local.ReadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	off, reads = -5*time.Second, 0 // the fault: the clock steps back 5 s
	mu.Unlock()
	refreshed(3, "on the stepped clock") // several refreshes on the stepped clock
	after, err := local.ReadCache(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Before(before) {
		t.Fatalf("the cache file's horizon moved back from %s to %s when the clock stepped back", before, after)
	}
}
