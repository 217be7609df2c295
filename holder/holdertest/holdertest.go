package holdertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/clocktest"
)

// Factory returns a new Holder, standing for one process, whose wall clock
// is now. Holders made for one test share their backing store (database,
// ZooKeeper chroot, directory) and nothing else.
type Factory func(t *testing.T, now func() time.Time) holder.Holder

// Options tune the suite to an implementation. The zero value suits holders
// that recycle worker IDs.
type Options struct {
	// Holders is how many holders compete in the uniqueness test; 0 means 6.
	Holders int
	// Rounds is how many times each competitor acquires and releases; 0
	// means 5.
	Rounds int
	// WorkerBits of the requests in the uniqueness test; 0 means 4. The
	// clock test always uses 2 (4 worker IDs).
	WorkerBits int
	// Fresh says every Acquire hands out a worker ID never used before
	// (disposable mode): the clock-refusal test is skipped, since no
	// timestamp can be persisted for a fresh worker ID.
	Fresh bool
}

// Namespace is the namespace of the suite's requests.
const Namespace = "conformance"

// Identity returns the i-th instance the suite uses. Holders keyed on a
// static map must map Identity(i).Key() for i < 16 to distinct worker IDs.
func Identity(i int) holder.Instance {
	return holder.Instance{ID: fmt.Sprintf("inst-%d", i), Host: "127.0.0.1", Port: 20000 + i, PID: 1000 + i}
}

// Run runs the suite.
func Run(t *testing.T, newHolder Factory, opts Options) {
	if opts.Holders <= 0 {
		opts.Holders = 6
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 5
	}
	if opts.WorkerBits <= 0 {
		opts.WorkerBits = 4
	}
	t.Run("UniqueConcurrent", func(t *testing.T) { testUnique(t, newHolder, opts) })
	t.Run("StopOnRelease", func(t *testing.T) { testStop(t, newHolder) })
	t.Run("ReleaseReacquire", func(t *testing.T) { testReacquire(t, newHolder, opts) })
	t.Run("ReservedNeverLeased", func(t *testing.T) { testReserved(t, newHolder, opts) })
	t.Run("ClockRefusal", func(t *testing.T) {
		if opts.Fresh {
			t.Skip("fresh worker IDs carry no persisted timestamp")
		}
		testClock(t, newHolder)
	})
}

func request(table string, id, bits int) holder.Request {
	return holder.Request{Namespace: Namespace, Table: table, Instance: Identity(id), WorkerBits: bits}
}

// Tracker checks that no two live leases share a worker ID. A lease counts
// as live from Acquire until its Done is closed.
type Tracker struct {
	mu   sync.Mutex
	live map[int64][]holder.Lease
}

// NewTracker returns an empty Tracker.
func NewTracker() *Tracker { return &Tracker{live: map[int64][]holder.Lease{}} }

// Add records a new lease and returns an error if another lease still live
// holds its worker ID.
func (tr *Tracker) Add(l holder.Lease) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	w := l.WorkerID()
	keep := tr.live[w][:0]
	var err error
	for _, o := range tr.live[w] {
		select {
		case <-o.Done():
			continue
		default:
		}
		keep = append(keep, o)
		err = fmt.Errorf("worker %d granted while another lease on it is live (Done open)", w)
	}
	tr.live[w] = append(keep, l)
	return err
}

func testUnique(t *testing.T, newHolder Factory, opts Options) {
	ctx := context.Background()
	tr := NewTracker()
	n := min(opts.Holders, 1<<opts.WorkerBits)
	var wg sync.WaitGroup
	errs := make(chan error, n*opts.Rounds)
	for i := 0; i < n; i++ {
		h := newHolder(t, time.Now)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < opts.Rounds; r++ {
				req := request(fmt.Sprintf("t%d", (i+r)%4), i, opts.WorkerBits)
				l, err := h.Acquire(ctx, req)
				if err != nil {
					errs <- fmt.Errorf("holder %d round %d: Acquire: %w", i, r, err)
					return
				}
				if w := l.WorkerID(); w < 0 || w >= req.MaxWorkers() {
					errs <- fmt.Errorf("holder %d: worker %d out of range", i, w)
				}
				if err := tr.Add(l); err != nil {
					errs <- err
				}
				select {
				case <-l.Done():
					errs <- fmt.Errorf("holder %d: lease on worker %d done right after Acquire: %v", i, l.WorkerID(), l.Err())
				case <-time.After(time.Duration(i%3) * time.Millisecond):
				}
				if err := l.Release(ctx, time.Time{}); err != nil {
					errs <- fmt.Errorf("holder %d: Release: %w", i, err)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func testStop(t *testing.T, newHolder Factory) {
	ctx := context.Background()
	clock := clocktest.New(time.Now())
	h := newHolder(t, clock.Now)
	l, err := h.Acquire(ctx, request("orders", 0, 4))
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	if l.Err() != nil {
		t.Fatalf("Err of a live lease = %v", l.Err())
	}
	gen, err := snowflake.New(ctx, l, snowflake.Settings{Clock: clock})
	if err != nil {
		t.Fatalf("snowflake.New: %v", err)
	}
	if _, err := gen.NextID(ctx); err != nil {
		t.Fatalf("NextID on a live lease: %v", err)
	}
	if err := l.Release(ctx, time.Time{}); err != nil {
		t.Fatalf("Release: %v", err)
	}
	select {
	case <-l.Done():
	default:
		t.Fatal("Done still open after Release returned")
	}
	if f, ok := l.(snowflake.EndFlagger); ok && !f.EndFlag().Load() {
		t.Error("Done is closed but the lease's end flag is not set: a generator would go on issuing")
	}
	if !errors.Is(l.Err(), holder.ErrReleased) {
		t.Errorf("Err after Release = %v, want ErrReleased", l.Err())
	}
	if _, err := gen.NextID(ctx); !errors.Is(err, snowflake.ErrStopped) {
		t.Errorf("NextID after Release: err = %v, want ErrStopped", err)
	}
}

func testReacquire(t *testing.T, newHolder Factory, opts Options) {
	ctx := context.Background()
	h := newHolder(t, time.Now)
	tr := NewTracker()
	for r := 0; r < 3; r++ {
		l, err := h.Acquire(ctx, request("orders", 1, opts.WorkerBits))
		if err != nil {
			t.Fatalf("round %d: Acquire: %v", r, err)
		}
		if err := tr.Add(l); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx, time.Time{}); err != nil {
			t.Fatalf("round %d: Release: %v", r, err)
		}
	}
	// Another process gets a worker ID after the first released.
	l, err := newHolder(t, time.Now).Acquire(ctx, request("orders", 2, opts.WorkerBits))
	if err != nil {
		t.Fatalf("second holder: Acquire: %v", err)
	}
	if err := tr.Add(l); err != nil {
		t.Fatal(err)
	}
	l.Release(ctx, time.Time{})
}

// testReserved: with all but two worker IDs reserved (kept for
// database-side defaults), two identities get the two below, and a third
// is refused rather than given a reserved one.
func testReserved(t *testing.T, newHolder Factory, opts Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h := newHolder(t, time.Now)
	reserved := int64(1)<<opts.WorkerBits - 2
	for id := range 3 {
		req := request("reserved", id, opts.WorkerBits)
		req.Reserved = reserved
		l, err := h.Acquire(ctx, req)
		switch {
		case id < 2 && err != nil:
			t.Fatalf("identity %d: Acquire with %d of %d worker IDs reserved: %v", id, reserved, 1<<opts.WorkerBits, err)
		case id < 2 && l.WorkerID() >= 2:
			t.Fatalf("identity %d was leased worker %d, one of the reserved %d..%d", id, l.WorkerID(), 2, 1<<opts.WorkerBits-1)
		case id == 2 && err == nil:
			t.Fatalf("a third identity was leased worker %d with only 2 worker IDs unreserved", l.WorkerID())
		}
		if err == nil {
			defer l.Release(context.Background(), time.Time{})
		}
	}
}

func testClock(t *testing.T, newHolder Factory) {
	ctx := context.Background()
	clock := clocktest.New(time.Now())
	h := newHolder(t, clock.Now)
	const bits = 2
	ahead := clock.Now().Add(time.Hour)
	// Persist a horizon an hour ahead on every worker ID of the space: hold
	// them all at once, then release them saying their last IDs were then.
	var leases []holder.Lease
	for i := 0; i < 1<<bits; i++ {
		l, err := h.Acquire(ctx, request("clock", i, bits))
		if err != nil {
			t.Fatalf("Acquire #%d: %v", i, err)
		}
		defer l.Release(ctx, time.Time{}) // in case of failure below
		leases = append(leases, l)
	}
	for i, l := range leases {
		if err := l.Release(ctx, ahead); err != nil {
			t.Fatalf("Release #%d: %v", i, err)
		}
	}
	// Hold them all again (so each worker ID is tried): each lease starts
	// after the released horizon, and a generator on it refuses to start.
	for i := 0; i < 1<<bits; i++ {
		l, err := newHolder(t, clock.Now).Acquire(ctx, request("clock", i, bits))
		if err != nil {
			t.Fatalf("Acquire #%d: %v", i, err)
		}
		defer l.Release(ctx, time.Time{})
		if l.After().Before(ahead) {
			t.Errorf("Acquire #%d: After = %s, want at least the released horizon %s", i, l.After(), ahead)
		}
		_, err = snowflake.New(ctx, l, snowflake.Settings{Clock: clock})
		var cb *snowflake.ClockBehindError
		if !errors.As(err, &cb) {
			t.Errorf("snowflake.New with the clock an hour behind the horizon: err = %v, want *snowflake.ClockBehindError", err)
		}
		leases[i] = l
	}
	for i, l := range leases {
		if err := l.Release(ctx, time.Time{}); err != nil {
			t.Fatalf("Release #%d: %v", i, err)
		}
	}
	clock.Set(ahead.Add(time.Second))
	l, err := newHolder(t, clock.Now).Acquire(ctx, request("clock", 0, bits))
	if err != nil {
		t.Fatalf("Acquire after the clock caught up: %v", err)
	}
	defer l.Release(ctx, time.Time{})
	if _, err := snowflake.New(ctx, l, snowflake.Settings{Clock: clock}); err != nil {
		t.Errorf("snowflake.New after the clock caught up: %v", err)
	}
}

// StickyRefusesUnidentified checks that h, a holder in a sticky mode,
// refuses an identity that cannot tell two processes of a host apart (a
// host name with no instance ID and port 0) with ErrIdentityInUse naming
// it.
func StickyRefusesUnidentified(t *testing.T, h holder.Holder) {
	t.Helper()
	_, err := h.Acquire(context.Background(), holder.Request{Namespace: Namespace, Table: "t",
		Instance: holder.Instance{Host: "web-1"}, WorkerBits: 4})
	if !errors.Is(err, holder.ErrIdentityInUse) || !strings.Contains(err.Error(), "web-1:0") {
		t.Fatalf("Acquire with identity web-1:0 = %v, want it refused as not unique", err)
	}
}

// RunModes runs Run on a holder of a coordination service in its two
// modes, as subtests named sticky and recycle; newHolder makes one in the
// mode asked (sticky or not). Sticky mode gets 6 worker bits: it hands
// each identity an ID of its own for good, so the identities need room.
func RunModes(t *testing.T, newHolder func(t *testing.T, now func() time.Time, sticky bool) holder.Holder) {
	for _, sticky := range []bool{true, false} {
		name, opts := "recycle", Options{}
		if sticky {
			name, opts = "sticky", Options{WorkerBits: 6}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			Run(t, func(t *testing.T, now func() time.Time) holder.Holder { return newHolder(t, now, sticky) }, opts)
		})
	}
}
