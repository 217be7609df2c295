package registry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
)

// Recorded wraps h so that every lease it grants is recorded in reg before
// Acquire returns, kept fresh with heartbeats carrying the generator's
// high-water timestamp, and marked released on Release. kind names the holder
// in the table ("zookeeper/recycle", "local", ...).
//
// The returned leases report the row's IDsAfter as LastTime, so a generator
// never issues an ID that Find could attribute to an earlier lease. A lease
// whose heartbeats keep failing ends (ErrLeaseLost) before Find would stop
// explaining its IDs.
func Recorded(h holder.Holder, reg *Registry, kind string) holder.Holder {
	return &recorded{inner: h, reg: reg, kind: kind}
}

type recorded struct {
	inner holder.Holder
	reg   *Registry
	kind  string
}

func (r *recorded) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	inner, err := r.inner.Acquire(ctx, req)
	if err != nil {
		return nil, err
	}
	rec, err := r.reg.Begin(ctx, Start{
		Namespace: req.Namespace, WorkerID: inner.WorkerID(), Table: req.Table,
		Instance: req.Instance, Kind: r.kind, LastTime: inner.LastTime(),
	})
	if err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		inner.Release(rctx)
		return nil, err
	}
	return StartLease(r.reg, rec, inner, LeaseOptions{}), nil
}

// LeaseOptions tune the heartbeats of a Lease.
type LeaseOptions struct {
	// Expires, when positive, renews the row's database-clock expiry to
	// clock_timestamp() + Expires at every heartbeat (holder/postgres's lease mode).
	Expires time.Duration
	// FenceAfter, when positive, ends the lease (ErrLeaseLost) once no
	// heartbeat has succeeded for FenceAfter, counted from the moment the
	// last successful one was sent. It must leave a margin below Expires.
	FenceAfter time.Duration
	// Sent is when the statement that recorded the lease was sent
	// (time.Now, monotonic); zero means now.
	Sent time.Time
}

// Lease is a lease recorded in the registry. Holders that write their own
// rows (holder/postgres) use it through StartLease too.
type Lease struct {
	*holder.StaticLease
	reg   *Registry
	rec   Record
	inner holder.Lease
	opts  LeaseOptions
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// StartLease returns a Lease for the recorded row rec wrapping inner, and
// starts its heartbeats. It ends when inner ends; inner may be nil.
func StartLease(reg *Registry, rec Record, inner holder.Lease, opts LeaseOptions) *Lease {
	if inner == nil {
		inner = holder.NewStaticLease(rec.WorkerID, time.Time{})
	}
	if opts.Sent.IsZero() {
		opts.Sent = time.Now()
	}
	l := &Lease{
		StaticLease: holder.NewStaticLease(rec.WorkerID, rec.IDsAfter),
		reg:         reg, rec: rec, inner: inner, opts: opts, stop: make(chan struct{}),
	}
	l.wg.Add(1)
	go l.run()
	return l
}

// Record returns the row as it was recorded.
func (l *Lease) Record() Record { return l.rec }

// Track implements holder.Lease, passing the tracker to the inner lease too.
func (l *Lease) Track(highWater func() time.Time) {
	l.StaticLease.Track(highWater)
	l.inner.Track(highWater)
}

func (l *Lease) run() {
	defer l.wg.Done()
	s := l.reg.s
	fence := s.Slack - s.Heartbeat // Find must keep explaining our IDs
	if l.opts.FenceAfter > 0 && l.opts.FenceAfter < fence {
		fence = l.opts.FenceAfter
	}
	lastOK := l.opts.Sent // monotonic
	t := time.NewTicker(s.Heartbeat)
	defer t.Stop()
	// The fence fires on its own goroutine: a heartbeat stuck in the
	// database must not delay it.
	var errMu sync.Mutex
	var lastErr error
	deadline := time.AfterFunc(time.Until(lastOK.Add(fence)), func() {
		errMu.Lock()
		cause := lastErr
		errMu.Unlock()
		l.End(fmt.Errorf("%w: worker %d: no heartbeat to idsql_workers succeeded for %s: %v",
			holder.ErrLeaseLost, l.rec.WorkerID, fence, cause))
	})
	defer deadline.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.inner.Done():
			l.End(fmt.Errorf("%w: %w", holder.ErrLeaseLost, l.inner.Err()))
			return
		case <-l.Done():
			return
		case <-t.C:
		}
		sent := time.Now()
		// Give up on the call by the fence deadline at the latest.
		ctx, cancel := context.WithDeadline(context.Background(), lastOK.Add(fence))
		live, err := l.reg.Heartbeat(ctx, l.rec.LeaseID, l.HighWater(), l.opts.Expires)
		cancel()
		switch {
		case err == nil && live:
			lastOK = sent
			if l.Err() != nil {
				return
			}
			deadline.Reset(time.Until(lastOK.Add(fence)))
		case err == nil:
			l.End(fmt.Errorf("%w: worker %d: its row in idsql_workers was ended by another lease", holder.ErrLeaseLost, l.rec.WorkerID))
			return
		default:
			errMu.Lock()
			lastErr = err
			errMu.Unlock()
		}
	}
}

// Release implements holder.Lease: it stops issuing, records the final
// high-water timestamp and the release, then releases the inner lease.
func (l *Lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		err = l.reg.Release(ctx, l.rec.LeaseID, l.HighWater())
		err = errors.Join(err, l.inner.Release(ctx))
	})
	return err
}
