package postgres

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
)

// Mode selects how worker IDs are assigned.
type Mode string

// The modes; see the package documentation.
const (
	Sticky     Mode = "sticky"
	Disposable Mode = "disposable"
	Lease      Mode = "lease"
)

// Defaults of Settings.
const (
	DefaultTTL = 30 * time.Second
)

// ErrExhausted means every worker ID of the layout is taken or used.
var ErrExhausted = errors.New("postgres: worker IDs exhausted")

// Settings configure a Holder. The zero value is sticky mode with the
// defaults.
type Settings struct {
	// Mode is Sticky, Disposable or Lease; empty means Sticky.
	Mode Mode
	// TTL is how long after the start of its last heartbeat a lease's row
	// expires (database clock), in every mode; 0 means DefaultTTL. It must
	// be at least twice the registry's Heartbeat. A sticky identity whose
	// process died is free again once its row expired.
	TTL time.Duration
	// Margin is how much before the row could expire the lease's deadline
	// falls; 0 means TTL/3. It covers clock-rate drift between this host
	// and the database.
	Margin time.Duration
}

// Holder hands out worker IDs from idsql_workers. Its clock and heartbeat
// interval are the registry's.
type Holder struct {
	reg *registry.Registry
	s   Settings
}

// New validates s and returns a Holder on reg. Call reg.Migrate first.
func New(reg *registry.Registry, s Settings) (*Holder, error) {
	switch s.Mode {
	case "":
		s.Mode = Sticky
	case Sticky, Disposable, Lease:
	default:
		return nil, fmt.Errorf("postgres: Settings.Mode %q: want sticky, disposable or lease", s.Mode)
	}
	if s.TTL == 0 {
		s.TTL = DefaultTTL
	}
	hb := reg.Settings().Heartbeat
	if s.TTL < 2*hb {
		return nil, fmt.Errorf("postgres: Settings.TTL %s must be at least twice the registry heartbeat %s", s.TTL, hb)
	}
	if s.Margin == 0 {
		s.Margin = s.TTL / 3
	}
	if s.Margin <= 0 || s.TTL-s.Margin <= hb {
		return nil, fmt.Errorf("postgres: Settings.Margin %s must be positive and leave more than one heartbeat (%s) of the TTL %s", s.Margin, hb, s.TTL)
	}
	return &Holder{reg: reg, s: s}, nil
}

// Kind is the holder_kind the holder writes: "postgres/<mode>".
func (h *Holder) Kind() string { return "postgres/" + string(h.s.Mode) }

// Acquire implements holder.Holder. In sticky mode it refuses an identity
// that cannot be unique, and while another process's lease on the same
// identity has not expired it waits for it to expire, refusing at once if
// that lease is seen renewed (its process is alive).
func (h *Holder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if h.s.Mode == Sticky {
		if err := req.Instance.CheckSticky(); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	var seen *holding
	for {
		l, held, err := h.tryAcquire(ctx, req)
		if err != nil || held == nil {
			return l, err
		}
		if seen != nil && (held.leaseID != seen.leaseID || held.heartbeat.After(seen.heartbeat)) {
			return nil, fmt.Errorf("postgres: %w", &holder.IdentityInUseError{Identity: req.Instance.Key(),
				Holder: held.who, Reason: fmt.Sprintf("is held by a live lease (%d) of worker %d that keeps renewing", held.leaseID, held.worker)})
		}
		if seen == nil {
			seen = held
		}
		// Wait for the row to expire, checking once a heartbeat whether
		// its owner renews it.
		wait := min(held.remaining, h.reg.Settings().Heartbeat) + 10*time.Millisecond
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("postgres: waiting for sticky identity %q (held by %s) to expire: %w", req.Instance.Key(), held.who, ctx.Err())
		}
	}
}

// holding describes a live lease of the sticky identity being acquired.
type holding struct {
	leaseID   int64
	worker    int64
	heartbeat time.Time
	remaining time.Duration
	who       string
}

// tryAcquire grants a lease, or reports the live lease that holds the sticky
// identity.
func (h *Holder) tryAcquire(ctx context.Context, req holder.Request) (holder.Lease, *holding, error) {
	tx, err := h.reg.DB().BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('idsql_workers/' || $1))`, req.Namespace); err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire: lock namespace %q: %w", req.Namespace, err)
	}
	// The row's expiry is clock_timestamp() at the INSERT plus the TTL, so
	// counting the deadline from here is conservative.
	sent := h.reg.Now()
	var w int64
	switch h.s.Mode {
	case Sticky:
		var held *holding
		w, held, err = h.sticky(ctx, tx, req)
		if held != nil {
			return nil, held, nil
		}
	case Disposable:
		w, err = h.disposable(ctx, tx, req)
	case Lease:
		w, err = h.lease(ctx, tx, req)
	}
	if err != nil {
		return nil, nil, err
	}
	opts := registry.LeaseOptions{Sent: sent, Expires: h.s.TTL, FenceAfter: h.s.TTL - h.s.Margin}
	start := registry.Start{Namespace: req.Namespace, WorkerID: w, Table: req.Table,
		Instance: req.Instance, Kind: h.Kind(), Expires: h.s.TTL, Horizon: h.reg.Horizon(sent, opts)}
	st, err := h.reg.StartTx(ctx, tx, start)
	if err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, fmt.Errorf("postgres: acquire: commit: %w", err)
	}
	return registry.StartLease(h.reg, st.Record, nil, opts), nil, nil
}

// busy returns the worker IDs held by live, unexpired rows.
func busy(ctx context.Context, tx *sql.Tx, ns string) (map[int64]bool, error) {
	return ids(ctx, tx, `SELECT worker_id FROM idsql_workers
		WHERE namespace = $1 AND released IS NULL AND (expires IS NULL OR expires > clock_timestamp())`, ns)
}

func ids(ctx context.Context, tx *sql.Tx, query string, args ...any) (map[int64]bool, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	defer rows.Close()
	set := map[int64]bool{}
	for rows.Next() {
		var w int64
		if err := rows.Scan(&w); err != nil {
			return nil, fmt.Errorf("postgres: acquire: %w", err)
		}
		set[w] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	return set, nil
}

func lowestFree(taken map[int64]bool, req holder.Request, what string) (int64, error) {
	for w := int64(0); w < req.MaxWorkers(); w++ {
		if !taken[w] {
			return w, nil
		}
	}
	return 0, fmt.Errorf("%w: all %d worker IDs (2^%d worker bits) of namespace %q are %s",
		ErrExhausted, req.MaxWorkers(), req.WorkerBits, req.Namespace, what)
}

func (h *Holder) sticky(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, *holding, error) {
	var w int64
	err := tx.QueryRowContext(ctx, `SELECT worker_id FROM idsql_workers
		WHERE namespace = $1 AND instance = $2 AND table_name = $3 AND holder_kind = $4
		ORDER BY lease_id DESC LIMIT 1`, req.Namespace, req.Instance.Key(), req.Table, h.Kind()).Scan(&w)
	switch {
	case err == nil:
		if w >= req.MaxWorkers() {
			return 0, nil, fmt.Errorf("postgres: sticky worker %d of %s@%s is out of range 0..%d", w, req.Table, req.Instance.Key(), req.MaxWorkers()-1)
		}
		// Our identity live in another process: wait for it to expire.
		held := &holding{worker: w}
		var host string
		var pid int
		var remaining float64
		err := tx.QueryRowContext(ctx, `SELECT lease_id, last_heartbeat, host, pid,
				extract(epoch FROM expires - clock_timestamp())
			FROM idsql_workers
			WHERE namespace = $1 AND worker_id = $2 AND instance = $3 AND table_name = $4
			AND released IS NULL AND expires > clock_timestamp()
			ORDER BY lease_id DESC LIMIT 1`, req.Namespace, w, req.Instance.Key(), req.Table).
			Scan(&held.leaseID, &held.heartbeat, &host, &pid, &remaining)
		if err == nil {
			held.who = fmt.Sprintf("host %s pid %d", host, pid)
			held.remaining = time.Duration(remaining * float64(time.Second))
			return w, held, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, nil, fmt.Errorf("postgres: acquire: %w", err)
		}
		// Someone else live on our worker ID means a misconfiguration.
		var other string
		err = tx.QueryRowContext(ctx, `SELECT table_name || '@' || instance FROM idsql_workers
			WHERE namespace = $1 AND worker_id = $2 AND released IS NULL AND (expires IS NULL OR expires > clock_timestamp())
			AND NOT (instance = $3 AND table_name = $4) LIMIT 1`, req.Namespace, w, req.Instance.Key(), req.Table).Scan(&other)
		if err == nil {
			return 0, nil, fmt.Errorf("postgres: sticky worker %d of %s@%s is held by %s", w, req.Table, req.Instance.Key(), other)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, nil, fmt.Errorf("postgres: acquire: %w", err)
		}
		return w, nil, nil
	case errors.Is(err, sql.ErrNoRows):
	default:
		return 0, nil, fmt.Errorf("postgres: acquire: %w", err)
	}
	taken, err := ids(ctx, tx, `SELECT worker_id FROM idsql_workers
		WHERE namespace = $1 AND (holder_kind = $2 OR (released IS NULL AND (expires IS NULL OR expires > clock_timestamp())))`,
		req.Namespace, h.Kind())
	if err != nil {
		return 0, nil, err
	}
	w, err = lowestFree(taken, req, "assigned to sticky identities or held")
	return w, nil, err
}

func (h *Holder) disposable(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, error) {
	var next int64
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(worker_id) + 1, 0) FROM idsql_workers WHERE namespace = $1`,
		req.Namespace).Scan(&next); err != nil {
		return 0, fmt.Errorf("postgres: acquire: %w", err)
	}
	if next >= req.MaxWorkers() {
		return 0, fmt.Errorf("%w: all %d disposable worker IDs (2^%d worker bits) of namespace %q were used; widen the layout's worker bits or use lease mode",
			ErrExhausted, req.MaxWorkers(), req.WorkerBits, req.Namespace)
	}
	return next, nil
}

func (h *Holder) lease(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, error) {
	taken, err := busy(ctx, tx, req.Namespace)
	if err != nil {
		return 0, err
	}
	// StartTx ends the expired row of the chosen worker ID, if any, in this
	// transaction; a late heartbeat of that row then updates nothing.
	return lowestFree(taken, req, "held by live leases")
}
