package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
)

// Recorded wraps h so that every lease it grants is recorded in reg before
// Acquire returns, with its first horizon, kept fresh with heartbeats that
// raise the horizon, and marked released on Release. kind names the holder
// in the table ("zookeeper/recycle", "local", ...).
//
// A worker ID that h grants may still have a live lease in the table:
// one of a process that is gone, or one of a live twin that h cannot see
// (the local holder's map copied to two hosts). Recorded tells them apart
// as Registry.Contend does, and never ends the lease of a live process:
// the newcomer is refused within about a heartbeat, with an error naming
// the process that holds the worker ID, and its inner lease released.
//
// The returned leases report the row's IDsAfter as After, so a generator
// never issues an ID that Find could attribute to an earlier lease. Their
// deadline and horizon are the earlier of the inner lease's and the row's:
// a lease whose heartbeats keep failing stops vouching for IDs before Find
// would stop explaining them.
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
	l, err := r.reg.Contend(ctx, req.Instance.Key(), func(stale *Holding) (holder.Lease, *Holding, error) {
		return r.record(ctx, req, inner, stale)
	})
	if err != nil {
		// No ID was issued under inner: give its horizon back, so that the
		// next attempt starts right after the previous leases' IDs rather
		// than after the horizon this one reserved (the local holder's
		// reaches two refresh periods ahead: an attempt every 100 ms
		// while the database refused them kept the lease that finally
		// succeeded waiting about two seconds). Zero keeps the horizon.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		inner.Release(rctx, inner.After())
		return nil, err
	}
	return l, nil
}

// record records inner's lease, under the namespace lock, unless another
// live lease of its worker ID is in the way (and is not stale, the lease
// Contend found gone): then it returns that one.
func (r *recorded) record(ctx context.Context, req holder.Request, inner holder.Lease, stale *Holding) (holder.Lease, *Holding, error) {
	var st Started
	var held *Holding
	var opts LeaseOptions
	var own error // the transaction's own error, which says where
	err := r.reg.InTx(ctx, func(tx *sql.Tx) error {
		held = nil
		if own = r.reg.LockNamespace(ctx, tx, req.Namespace); own != nil {
			own = fmt.Errorf("registry: record worker %d: lock namespace %q: %w", inner.WorkerID(), req.Namespace, own)
			return own
		}
		if held, own = r.reg.LiveTx(ctx, tx, req.Namespace, inner.WorkerID()); own != nil {
			return own
		}
		if held != nil && !held.ownedBy(req) && (stale == nil || held.renewedSince(stale)) {
			return nil
		}
		held = nil
		// StartTx ends the stale row: a late heartbeat of it finds it
		// ended, and its horizon is read after.
		sent := r.reg.Now()
		opts = LeaseOptions{Sent: sent}
		st, own = r.reg.StartTx(ctx, tx, Start{
			Namespace: req.Namespace, WorkerID: inner.WorkerID(), Table: req.Table,
			Instance: req.Instance, Kind: r.kind, LastTime: inner.After(),
			Horizon: r.reg.Horizon(sent, opts),
		})
		return own
	})
	switch {
	case own != nil:
		return nil, nil, own
	case err != nil:
		return nil, nil, fmt.Errorf("registry: record worker %d: %w", inner.WorkerID(), err)
	case held != nil:
		return nil, held, nil
	}
	return StartLease(r.reg, st.Record, inner, opts), nil, nil
}

// LeaseOptions tune the heartbeats of a Lease.
type LeaseOptions struct {
	// Expires, when positive, renews the row's database-clock expiry to
	// the database's now + Expires at every heartbeat (holder/postgres).
	Expires time.Duration
	// FenceAfter, when positive and shorter than the registry's Slack minus
	// one Heartbeat, is how long after the start of its last successful
	// heartbeat the lease's deadline falls. It must leave a margin below
	// Expires.
	FenceAfter time.Duration
	// Sent is the registry clock's reading taken before the statement that
	// recorded the lease was sent; zero means now.
	Sent time.Time
}

// fence is how long after a successful heartbeat was sent the lease stays
// valid: Find must keep explaining its IDs, and the row must not expire.
func (r *Registry) fence(o LeaseOptions) time.Duration {
	f := r.s.Slack - r.s.Heartbeat
	if o.FenceAfter > 0 && o.FenceAfter < f {
		f = o.FenceAfter
	}
	return f
}

// Horizon returns the horizon a lease with options o persists when a
// heartbeat sent at sent succeeds: three heartbeats ahead (or the deadline
// plus one heartbeat, when that is sooner), so a healthy lease's generator
// never reaches it, and the next lease of a crashed one waits at most that
// long. A lease whose heartbeats fail for longer stops at its horizon even
// if its deadline is later.
//
// It is truncated to the microsecond the table stores, so the horizon a
// lease vouches for is never later than the stored one.
func (r *Registry) Horizon(sent time.Time, o LeaseOptions) time.Time {
	return sent.Add(min(r.fence(o), 2*r.s.Heartbeat) + r.s.Heartbeat).Truncate(time.Microsecond)
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
	// stopped is cancelled with stop: it ends a heartbeat in flight, so
	// Release never waits for one the server holds up.
	stopped context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	once    sync.Once
}

// StartLease returns a Lease for the recorded row rec wrapping inner, and
// starts its heartbeats. Its first deadline counts from opts.Sent and its
// first horizon is the one rec stores. It ends when inner ends; inner may be
// nil.
func StartLease(reg *Registry, rec Record, inner holder.Lease, opts LeaseOptions) *Lease {
	if inner == nil {
		inner = holder.NewStaticLease(rec.WorkerID, time.Time{})
	}
	if opts.Sent.IsZero() {
		opts.Sent = reg.Now()
	}
	l := &Lease{
		StaticLease: holder.NewStaticLease(rec.WorkerID, rec.IDsAfter),
		reg:         reg, rec: rec, inner: inner, opts: opts, stop: make(chan struct{}),
	}
	l.stopped, l.cancel = context.WithCancel(context.Background())
	l.SetClock(reg.s.Now)
	l.Renew(opts.Sent.Add(reg.fence(opts)), rec.LastTimestamp)
	l.wg.Add(1)
	go l.run()
	return l
}

// Record returns the row as it was recorded.
func (l *Lease) Record() Record { return l.rec }

// Validity implements holder.Lease: the earlier of the row's limits and the
// inner lease's.
func (l *Lease) Validity() (deadline, horizon time.Time, err error) {
	deadline, horizon, err = l.StaticLease.Validity()
	if err != nil {
		return deadline, horizon, err
	}
	d, h, err := l.inner.Validity()
	if err != nil {
		l.End(fmt.Errorf("%w: %w", holder.ErrLeaseLost, err))
		return deadline, horizon, l.Err()
	}
	return earlier(deadline, d), earlier(horizon, h), nil
}

// earlier returns the earlier of two limits, where zero means none.
func earlier(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func (l *Lease) run() {
	defer l.wg.Done()
	s := l.reg.s
	fence := l.reg.fence(l.opts)
	// Each heartbeat is sent a heartbeat after the last one was, counted
	// from when it was sent, the first from when the lease's claim was
	// (opts.Sent): a claim that took long (it queued for the namespace
	// lock, or for the server) gets its first heartbeat at once, not a
	// whole heartbeat after it returned, when its deadline may have gone.
	next := l.opts.Sent.Add(s.Heartbeat)
	t := time.NewTimer(next.Sub(s.Now()))
	defer t.Stop()
	// The deadline also ends the lease on a timer of its own, so Done
	// closes promptly; the generator does not depend on it (a paused
	// process runs no timer), it compares the deadline itself.
	var errMu sync.Mutex
	var lastErr error
	timer := time.AfterFunc(l.Deadline().Sub(s.Now()), func() {
		errMu.Lock()
		cause := lastErr
		errMu.Unlock()
		l.End(fmt.Errorf("%w: worker %d: no heartbeat to idsql_workers succeeded for %s: %v",
			holder.ErrLeaseLost, l.rec.WorkerID, fence, cause))
	})
	defer timer.Stop()
	// The heartbeats keep a connection of their own: a heartbeat never
	// waits for one to be opened (on a server that many processes start
	// against at once, or restart against, a new connection can take
	// seconds) nor for one the pool lends to others.
	conn := &keptConn{db: l.reg.db}
	defer conn.close()
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
		sent := s.Now()
		next = sent.Add(s.Heartbeat)
		// Give up on the call by the deadline at the latest.
		// The deadline is a reading of the registry's clock, which may be
		// set off from the real one: time the call by what is left of it.
		ctx, cancel := context.WithTimeout(l.stopped, l.Deadline().Sub(s.Now()))
		horizon := l.reg.Horizon(sent, l.opts)
		slow := time.AfterFunc(s.Heartbeat, func() { l.slowHeartbeat(sent) })
		live, err := l.reg.heartbeat(ctx, conn, l.rec.LeaseID, horizon, l.opts.Expires)
		slow.Stop()
		cancel()
		t.Reset(next.Sub(s.Now()))
		switch {
		case err == nil && live:
			// The deadline counts from before the statement was sent: the
			// row's expiry was computed later, in database time.
			l.Renew(sent.Add(fence), horizon)
			if l.Err() != nil {
				return
			}
			timer.Reset(l.Deadline().Sub(s.Now()))
		case err == nil:
			l.End(fmt.Errorf("%w: worker %d: its row in idsql_workers expired or was ended by another lease", holder.ErrLeaseLost, l.rec.WorkerID))
			return
		default:
			errMu.Lock()
			lastErr = err
			errMu.Unlock()
		}
	}
}

// slowHeartbeat warns, while it runs, of a heartbeat sent at sent that
// has not completed within a heartbeat: the lease ends at its deadline
// unless one completes, and the warning, given while the heartbeat waits,
// lets an operator (or a test) see what it waits on.
func (l *Lease) slowHeartbeat(sent time.Time) {
	s := l.reg.s
	s.Logger.Warn("idsql: a heartbeat to idsql_workers is still running; the worker lease ends at its deadline unless one completes",
		"worker", l.rec.WorkerID, "lease", l.rec.LeaseID, "table", l.rec.Table,
		"running", s.Now().Sub(sent).Round(time.Millisecond), "deadline_in", l.Deadline().Sub(s.Now()).Round(time.Millisecond))
}

// keptConn is a connection kept across calls: taken from db at the first
// call, and given back (closed) after a call that failed, so the next one
// takes a working one. A pool with a limit on open connections (one the
// application gave, SetMaxOpenConns) is not kept from: a kept connection
// would be one fewer for everything else, and several leases could take
// them all; there each call takes one from the pool and gives it back.
type keptConn struct {
	db *sql.DB
	c  *sql.Conn
}

// ExecContext runs a statement on the kept connection.
func (k *keptConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if k.c == nil && k.db.Stats().MaxOpenConnections > 0 {
		return k.db.ExecContext(ctx, query, args...)
	}
	if k.c == nil {
		c, err := k.db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		k.c = c
	}
	res, err := k.c.ExecContext(ctx, query, args...)
	if err != nil {
		k.close()
	}
	return res, err
}

// close gives the connection back, if any.
func (k *keptConn) close() {
	if k.c != nil {
		k.c.Close()
		k.c = nil
	}
}

// Release implements holder.Lease: it stops issuing, records the release
// and the final horizon last (see holder.Lease), then releases the inner
// lease.
func (l *Lease) Release(ctx context.Context, last time.Time) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.cancel()
		l.wg.Wait()
		err = l.reg.Release(ctx, l.rec.LeaseID, last)
		err = errors.Join(err, l.inner.Release(ctx, last))
	})
	return err
}

// ownedBy reports whether the live row h was recorded by the process that
// asks again, req, for the same table and identity: its own earlier lease,
// which ended (a process asks for a table's worker ID again only after its
// lease of it ended) but whose release did not reach the table, as when
// the link to the database was cut. That row is not a twin's: the process
// takes it over at once instead of watching it for three heartbeats. The
// new row starts after the old one's horizon, as for any stale row, so the
// keys of the two never meet. A row without a process ID is never taken
// for one's own.
func (h *Holding) ownedBy(req holder.Request) bool {
	return h.PID != 0 && h.PID == req.Instance.PID && h.Host == req.Instance.Host &&
		h.Instance == req.Instance.Key() && h.Table == req.Table
}
