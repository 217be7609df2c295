package holder

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Fixed returns a Holder that always grants the same worker ID and never
// loses it, to one lease at a time: a second Acquire while a lease is live is
// refused, since two generators on one worker ID (two tables, say) would
// issue equal IDs. It suits a single process with one snowflake table, tests
// and examples; see Static for several tables. It cannot detect two
// processes configured with the same worker ID, and it persists nothing, so
// a restarted process relies on its clock being past its previous run.
func Fixed(workerID int64) Holder { return Static(map[string]int64{"": workerID}) }

// Static returns a Holder that grants each table the worker ID the map gives
// it; the entry "" serves tables the map does not name. Like Fixed, each
// worker ID has at most one live lease, and nothing is persisted.
func Static(workers map[string]int64) Holder {
	return &staticHolder{workers: workers, live: map[int64]string{}}
}

type staticHolder struct {
	workers map[string]int64
	mu      sync.Mutex
	live    map[int64]string // worker ID -> table holding it
}

func (h *staticHolder) Acquire(ctx context.Context, req Request) (Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	w, ok := h.workers[req.Table]
	if !ok {
		if w, ok = h.workers[""]; !ok {
			return nil, fmt.Errorf("holder: static: no worker ID for table %q", req.Table)
		}
	}
	if w < 0 || w >= req.MaxWorkers() {
		return nil, fmt.Errorf("holder: static worker ID %d out of range 0..%d", w, req.MaxWorkers()-1)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if t, busy := h.live[w]; busy {
		return nil, fmt.Errorf("holder: static worker ID %d is leased to table %q already; give table %q a worker ID of its own (holder.Static)", w, t, req.Table)
	}
	h.live[w] = req.Table
	return &staticLease{StaticLease: NewStaticLease(w, time.Time{}), h: h}, nil
}

type staticLease struct {
	*StaticLease
	h    *staticHolder
	once sync.Once
}

func (l *staticLease) Release(ctx context.Context, last time.Time) error {
	l.once.Do(func() {
		l.End(ErrReleased)
		l.h.mu.Lock()
		delete(l.h.live, l.WorkerID())
		l.h.mu.Unlock()
	})
	return nil
}

// KeepAlive calls renew every period until stop is closed or the lease
// ends (its Done closes): the loop a holder's lease runs in a goroutine of
// its own to renew itself with the server. A renewal that fails reports
// nothing here: it leaves the lease's deadline and horizon where they are,
// and the lease ends at its deadline.
func KeepAlive(l Lease, period time.Duration, stop <-chan struct{}, renew func()) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-l.Done():
			return
		case <-t.C:
			renew()
		}
	}
}

// StaticLease is a Lease that holds until released or until its deadline
// passes. Holders that need no renewal return it as it is; others embed it
// for the bookkeeping, call Renew after each successful renewal and End when
// they lose the worker ID.
type StaticLease struct {
	workerID int64
	after    time.Time

	mu       sync.Mutex
	now      func() time.Time
	deadline time.Time
	horizon  time.Time
	done     chan struct{}
	err      error
	ended    atomic.Bool // set by End before it closes done
}

// NewStaticLease returns a live lease on workerID, without deadline or
// horizon, whose IDs must be stamped after after.
func NewStaticLease(workerID int64, after time.Time) *StaticLease {
	return &StaticLease{workerID: workerID, after: after, now: time.Now, done: make(chan struct{})}
}

// SetClock makes the lease read now to decide whether its deadline passed;
// it must be the clock the deadlines are readings of. The default is
// time.Now.
func (l *StaticLease) SetClock(now func() time.Time) {
	l.mu.Lock()
	l.now = now
	l.mu.Unlock()
}

// WorkerID implements Lease.
func (l *StaticLease) WorkerID() int64 { return l.workerID }

// After implements Lease.
func (l *StaticLease) After() time.Time { return l.after }

// Renew moves the lease's deadline and horizon forward; a zero argument or
// one earlier than the current value leaves that limit as it is. A holder
// calls it only after the renewal that justifies it succeeded (and the
// horizon was persisted).
func (l *StaticLease) Renew(deadline, horizon time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if deadline.After(l.deadline) {
		l.deadline = deadline
	}
	if horizon.After(l.horizon) {
		l.horizon = horizon
	}
}

// Validity implements Lease. Past its deadline the lease ends with an error
// wrapping ErrLeaseLost.
func (l *StaticLease) Validity() (deadline, horizon time.Time, err error) {
	l.mu.Lock()
	deadline, horizon, err, now := l.deadline, l.horizon, l.err, l.now
	l.mu.Unlock()
	if err == nil && !deadline.IsZero() && !now().Before(deadline) {
		l.End(fmt.Errorf("%w: worker %d: its deadline %s passed with no renewal", ErrLeaseLost, l.workerID,
			deadline.Format(time.RFC3339Nano)))
		err = l.Err()
	}
	return deadline, horizon, err
}

// Deadline returns the current deadline; zero when there is none.
func (l *StaticLease) Deadline() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deadline
}

// Horizon returns the current horizon; zero when there is none.
func (l *StaticLease) Horizon() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.horizon
}

// Done implements Lease.
func (l *StaticLease) Done() <-chan struct{} { return l.done }

// EndFlag implements snowflake.EndFlagger: the flag is set, for good, just
// before Done is closed, so a generator reads it with one atomic load.
func (l *StaticLease) EndFlag() *atomic.Bool { return &l.ended }

// Err implements Lease.
func (l *StaticLease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// End closes Done with err as the cause. Only the first call has an effect;
// it reports whether it was that call.
func (l *StaticLease) End(err error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err != nil {
		return false
	}
	l.err = err
	l.ended.Store(true)
	close(l.done)
	return true
}

// Release implements Lease.
func (l *StaticLease) Release(context.Context, time.Time) error {
	l.End(ErrReleased)
	return nil
}
