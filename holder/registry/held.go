package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/holder"
)

// Holding is the live lease of a worker ID that an acquirer finds in its
// way: its row of idsql_workers, and whether and when that row expires on
// the database clock.
type Holding struct {
	Record
	// Expiring says that the row has a database-clock expiry
	// (holder/postgres's rows); Remaining is what is left of it. Rows that
	// Recorded writes have none.
	Expiring  bool
	Remaining time.Duration
}

// Who names the process that holds the lease and since when, for errors.
func (h *Holding) Who() string {
	return fmt.Sprintf("host %s pid %d, instance %q, table %s, lease %d since %s",
		h.Host, h.PID, h.Instance, h.Table, h.LeaseID, h.Started.UTC().Format(time.RFC3339Nano))
}

// renewedSince reports whether h, read after earlier, shows that a process
// holding the worker ID lives: another lease holds it now, or the same
// lease wrote another heartbeat.
func (h *Holding) renewedSince(earlier *Holding) bool {
	return h.LeaseID != earlier.LeaseID || !h.LastHeartbeat.Equal(earlier.LastHeartbeat)
}

// LiveTx returns, read in tx, the latest live lease of worker in
// namespace: not released and, for a row with a database-clock expiry,
// not expired. It returns nil when there is none.
func (r *Registry) LiveTx(ctx context.Context, tx *sql.Tx, namespace string, worker int64) (*Holding, error) {
	if r.err != nil {
		return nil, r.err
	}
	var remaining sql.NullInt64
	rec, err := r.scan(withExtra{tx.QueryRowContext(ctx, r.q.live, namespace, worker), &remaining})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("registry: read the live lease of worker %d: %w", worker, err)
	}
	return &Holding{Record: rec, Expiring: remaining.Valid, Remaining: time.Duration(remaining.Int64) * time.Microsecond}, nil
}

// withExtra scans one more column after the ones scan reads.
type withExtra struct {
	row   *sql.Row
	extra any
}

func (w withExtra) Scan(dest ...any) error { return w.row.Scan(append(dest, w.extra)...) }

// Contend acquires a worker ID that a live lease of another process may
// hold. try attempts the acquisition, under the namespace lock: it
// returns the lease, or the live lease in its way. Contend then waits and
// tries again; it never ends the other lease while its owner lives:
//
//   - once it sees that lease renewed (a heartbeat, or another lease), the
//     worker ID belongs to a live process, a twin configured like this
//     one: it refuses with a *holder.IdentityInUseError naming identity
//     and that process, within about one heartbeat;
//   - a row that reserves the worker ID for a database-side default
//     (instance "database") it refuses at once with ErrReserved: that
//     row is never renewed, and never ends;
//   - a row with a database-clock expiry it waits out: try stops finding
//     it once it expired;
//   - a row without one, not renewed for three heartbeats, is taken over
//     (try is called with it as stale, and may end it): the horizon its
//     last heartbeat persisted has passed, so its process, gone or cut
//     off, issues nothing more under it, and a successor after a crash
//     would wait that long for the horizon anyway. A live owner whose
//     heartbeats are slow (a stalled database) loses no more than that.
func (r *Registry) Contend(ctx context.Context, identity string, try func(stale *Holding) (holder.Lease, *Holding, error)) (holder.Lease, error) {
	hb := r.s.Heartbeat
	var seen, stale *Holding
	var seenAt time.Time
	for {
		l, held, err := try(stale)
		if err != nil || held == nil {
			return l, err
		}
		if held.Reserved() {
			return nil, reservedError(held.Namespace, held.WorkerID, held.Table)
		}
		if seen != nil && held.renewedSince(seen) {
			return nil, &holder.IdentityInUseError{Identity: identity, Holder: held.Who(),
				Reason: fmt.Sprintf("needs worker %d, which a live lease (%d) keeps renewing in idsql_workers", held.WorkerID, held.LeaseID)}
		}
		if seen == nil {
			seen, seenAt = held, time.Now()
		}
		wait := hb/2 + 10*time.Millisecond
		if held.Expiring {
			wait = min(held.Remaining, hb) + 10*time.Millisecond
		} else if time.Since(seenAt) >= 3*hb {
			stale = seen
			continue
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("registry: waiting for worker %d, held by %s: %w", held.WorkerID, held.Who(), ctx.Err())
		}
	}
}
