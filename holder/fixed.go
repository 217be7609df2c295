package holder

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Fixed returns a Holder that always grants the same worker ID and never
// loses it. It suits a single process, tests and examples; it cannot detect
// two processes configured with the same worker ID.
func Fixed(workerID int64) Holder { return fixedHolder(workerID) }

type fixedHolder int64

func (h fixedHolder) Acquire(ctx context.Context, req Request) (Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if int64(h) < 0 || int64(h) >= req.MaxWorkers() {
		return nil, fmt.Errorf("holder: fixed worker ID %d out of range 0..%d", int64(h), req.MaxWorkers()-1)
	}
	return NewStaticLease(int64(h), time.Time{}), nil
}

// StaticLease is a Lease that holds until released. Holders that need no
// heartbeat return it; others embed it for the Done/Err bookkeeping and call
// End when they lose the worker ID.
type StaticLease struct {
	workerID int64
	last     time.Time

	mu        sync.Mutex
	done      chan struct{}
	err       error
	highWater func() time.Time
}

// NewStaticLease returns a live lease on workerID whose persisted timestamp
// was last.
func NewStaticLease(workerID int64, last time.Time) *StaticLease {
	return &StaticLease{workerID: workerID, last: last, done: make(chan struct{})}
}

// WorkerID implements Lease.
func (l *StaticLease) WorkerID() int64 { return l.workerID }

// LastTime implements Lease.
func (l *StaticLease) LastTime() time.Time { return l.last }

// Track implements Lease.
func (l *StaticLease) Track(highWater func() time.Time) {
	l.mu.Lock()
	l.highWater = highWater
	l.mu.Unlock()
}

// HighWater returns the tracked generator's high-water time, or the zero
// time when nothing is tracked.
func (l *StaticLease) HighWater() time.Time {
	l.mu.Lock()
	f := l.highWater
	l.mu.Unlock()
	if f == nil {
		return time.Time{}
	}
	return f()
}

// Done implements Lease.
func (l *StaticLease) Done() <-chan struct{} { return l.done }

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
	close(l.done)
	return true
}

// Release implements Lease.
func (l *StaticLease) Release(context.Context) error {
	l.End(ErrReleased)
	return nil
}
