package workertable

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/dialect"
)

// Mode selects how worker IDs are assigned.
type Mode string

// The modes; see the package documentation.
const (
	Sticky     Mode = "sticky"
	Disposable Mode = "disposable"
	Lease      Mode = "lease"
)

// Modes lists the modes, the default first.
var Modes = []Mode{Sticky, Disposable, Lease}

// Defaults of Settings.
const (
	DefaultTTL = 30 * time.Second
)

// ErrExhausted means every worker ID of the layout is taken or used.
var ErrExhausted = errors.New("worker table: worker IDs exhausted")

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

// Holder hands out worker IDs from idsql_workers. Its clock, heartbeat
// interval and SQL dialect are the registry's.
type Holder struct {
	reg *registry.Registry
	s   Settings
	d   dialect.Dialect
	q   *queries
}

// New validates s and returns a Holder on reg, speaking reg's dialect; it
// fails when reg has none (see registry.Registry.Dialect). Call reg.Migrate
// first.
func New(reg *registry.Registry, s Settings) (*Holder, error) {
	if s.Mode == "" {
		s.Mode = Modes[0]
	}
	if !slices.Contains(Modes, s.Mode) {
		return nil, fmt.Errorf("worker-table holder: Settings.Mode %q: want one of %v", s.Mode, Modes)
	}
	if s.TTL == 0 {
		s.TTL = DefaultTTL
	}
	hb := reg.Settings().Heartbeat
	if s.TTL < 2*hb {
		return nil, fmt.Errorf("worker-table holder: Settings.TTL %s must be at least twice the registry heartbeat %s", s.TTL, hb)
	}
	if s.Margin == 0 {
		s.Margin = s.TTL / 3
	}
	if s.Margin <= 0 || s.TTL-s.Margin <= hb {
		return nil, fmt.Errorf("worker-table holder: Settings.Margin %s must be positive and leave more than one heartbeat (%s) of the TTL %s", s.Margin, hb, s.TTL)
	}
	d, err := reg.Dialect()
	if err != nil {
		return nil, fmt.Errorf("worker-table holder: %w", err)
	}
	return &Holder{reg: reg, s: s, d: d, q: newQueries(d)}, nil
}

// errorf is fmt.Errorf with the holder's dialect ("postgres: ", "mysql: ")
// before the message.
func (h *Holder) errorf(format string, args ...any) error {
	return fmt.Errorf(h.d.String()+": "+format, args...)
}

// Kind is the holder_kind the holder writes: "<dialect>/<mode>", that is
// "postgres/sticky" on PostgreSQL or "mysql/lease" on MySQL.
func (h *Holder) Kind() string { return h.d.String() + "/" + string(h.s.Mode) }

// Acquire implements holder.Holder. In sticky mode it refuses an identity
// that cannot be unique, and while another process's lease on the same
// identity has not expired it waits for it to expire, refusing as soon as
// it sees that lease renewed (its process is alive: registry.Contend).
func (h *Holder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if h.s.Mode == Sticky {
		if err := req.Instance.CheckSticky(); err != nil {
			return nil, h.errorf("%w", err)
		}
	}
	return h.reg.Contend(ctx, req.Instance.Key(), func(*registry.Holding) (holder.Lease, *registry.Holding, error) {
		return h.tryAcquire(ctx, req)
	})
}

// tryAcquire grants a lease, or reports the live lease that holds the sticky
// identity.
func (h *Holder) tryAcquire(ctx context.Context, req holder.Request) (holder.Lease, *registry.Holding, error) {
	var c claimed
	var claimErr error // the last run's own error, which says where
	err := h.reg.InTx(ctx, func(tx *sql.Tx) error {
		c, claimErr = h.claim(ctx, tx, req)
		return claimErr
	})
	switch {
	case claimErr != nil:
		return nil, nil, claimErr
	case err != nil:
		return nil, nil, h.errorf("acquire: %w", err)
	case c.held != nil:
		return nil, c.held, nil
	}
	return registry.StartLease(h.reg, c.started.Record, nil, c.opts), nil, nil
}

// claimed is what claim did: recorded a lease, or found the sticky
// identity held.
type claimed struct {
	started registry.Started
	opts    registry.LeaseOptions
	held    *registry.Holding
}

// claim picks a worker ID for req inside tx, under the namespace lock, and
// records the lease, or reports the live lease that holds the sticky
// identity.
func (h *Holder) claim(ctx context.Context, tx *sql.Tx, req holder.Request) (claimed, error) {
	if err := h.reg.LockNamespace(ctx, tx, req.Namespace); err != nil {
		return claimed{}, h.errorf("acquire: lock namespace %q: %w", req.Namespace, err)
	}
	// The row's expiry is the database clock at the INSERT plus the TTL,
	// so counting the deadline from here is conservative.
	sent := h.reg.Now()
	var w int64
	var err error
	switch h.s.Mode {
	case Sticky:
		var held *registry.Holding
		w, held, err = h.sticky(ctx, tx, req)
		if held != nil {
			return claimed{held: held}, nil
		}
	case Disposable:
		w, err = h.disposable(ctx, tx, req)
	case Lease:
		w, err = h.lease(ctx, tx, req)
	}
	if err != nil {
		return claimed{}, err
	}
	opts := registry.LeaseOptions{Sent: sent, Expires: h.s.TTL, FenceAfter: h.s.TTL - h.s.Margin}
	start := registry.Start{Namespace: req.Namespace, WorkerID: w, Table: req.Table,
		Instance: req.Instance, Kind: h.Kind(), Expires: h.s.TTL, Horizon: h.reg.Horizon(sent, opts)}
	st, err := h.reg.StartTx(ctx, tx, start)
	if err != nil {
		return claimed{}, h.errorf("acquire: %w", err)
	}
	return claimed{started: st, opts: opts}, nil
}

// queries are the holder's statements, written once and rendered in the
// registry's dialect (its bind parameters and its database clock, read
// when evaluated: a lock wait may separate it from the statement's start).
type queries struct {
	// busy: the worker IDs held by live, unexpired rows (namespace).
	busy string
	// stickyLatest: the worker ID of the identity's latest row (namespace,
	// instance, table, kind).
	stickyLatest string
	// stickyTaken: worker IDs assigned to sticky identities or held
	// (namespace, kind).
	stickyTaken string
	// disposableNext: one past the greatest worker ID ever used by a
	// process (namespace); the database's reservations at the top of the
	// range do not count.
	disposableNext string
}

// newQueries renders the holder's statements in d.
func newQueries(d dialect.Dialect) *queries {
	live := `released IS NULL AND (expires IS NULL OR expires > ` + d.Clock() + `)`
	return &queries{
		busy: d.Rebind(`SELECT worker_id FROM idsql_workers
		WHERE namespace = ? AND ` + live),
		stickyLatest: d.Rebind(`SELECT worker_id FROM idsql_workers
		WHERE namespace = ? AND instance = ? AND table_name = ? AND holder_kind = ?
		ORDER BY lease_id DESC LIMIT 1`),
		stickyTaken: d.Rebind(`SELECT worker_id FROM idsql_workers
		WHERE namespace = ? AND (holder_kind = ? OR (` + live + `))`),
		disposableNext: d.Rebind(`SELECT COALESCE(MAX(worker_id) + 1, 0) FROM idsql_workers WHERE namespace = ? AND instance <> '` + dialect.DBInstance + `'`),
	}
}

// busy returns the worker IDs held by live, unexpired rows.
func (h *Holder) busy(ctx context.Context, tx *sql.Tx, ns string) (map[int64]bool, error) {
	return h.ids(ctx, tx, h.q.busy, ns)
}

// ids returns the worker IDs query selects.
func (h *Holder) ids(ctx context.Context, tx *sql.Tx, query string, args ...any) (map[int64]bool, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, h.errorf("acquire: %w", err)
	}
	defer rows.Close()
	set := map[int64]bool{}
	for rows.Next() {
		var w int64
		if err := rows.Scan(&w); err != nil {
			return nil, h.errorf("acquire: %w", err)
		}
		set[w] = true
	}
	if err := rows.Err(); err != nil {
		return nil, h.errorf("acquire: %w", err)
	}
	return set, nil
}

// lowestFree returns the lowest worker ID of req's range not in taken.
func (h *Holder) lowestFree(taken map[int64]bool, req holder.Request, what string) (int64, error) {
	for w := int64(0); w < req.MaxWorkers(); w++ {
		if !taken[w] {
			return w, nil
		}
	}
	return 0, h.errorf("%w: all %d worker IDs (2^%d worker bits) of namespace %q are %s",
		ErrExhausted, req.MaxWorkers(), req.WorkerBits, req.Namespace, what)
}

func (h *Holder) sticky(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, *registry.Holding, error) {
	var w int64
	err := tx.QueryRowContext(ctx, h.q.stickyLatest, req.Namespace, req.Instance.Key(), req.Table, h.Kind()).Scan(&w)
	switch {
	case err == nil:
		if w >= req.MaxWorkers() {
			return 0, nil, h.errorf("sticky worker %d of %s@%s is out of range 0..%d", w, req.Table, req.Instance.Key(), req.MaxWorkers()-1)
		}
		held, err := h.reg.LiveTx(ctx, tx, req.Namespace, w)
		switch {
		case err != nil:
			return 0, nil, h.errorf("acquire: %w", err)
		case held == nil:
			return w, nil, nil
		case held.Instance == req.Instance.Key() && held.Table == req.Table:
			// Our identity live in another process: wait for it to expire.
			return w, held, nil
		}
		// Someone else live on our worker ID means a misconfiguration.
		return 0, nil, h.errorf("sticky worker %d of %s@%s is held by %s@%s (%s)", w, req.Table, req.Instance.Key(), held.Table, held.Instance, held.Who())
	case errors.Is(err, sql.ErrNoRows):
	default:
		return 0, nil, h.errorf("acquire: %w", err)
	}
	taken, err := h.ids(ctx, tx, h.q.stickyTaken, req.Namespace, h.Kind())
	if err != nil {
		return 0, nil, err
	}
	w, err = h.lowestFree(taken, req, "assigned to sticky identities or held")
	return w, nil, err
}

func (h *Holder) disposable(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, error) {
	var next int64
	if err := tx.QueryRowContext(ctx, h.q.disposableNext, req.Namespace).Scan(&next); err != nil {
		return 0, h.errorf("acquire: %w", err)
	}
	if next >= req.MaxWorkers() {
		return 0, h.errorf("%w: all %d disposable worker IDs (2^%d worker bits) of namespace %q were used; widen the layout's worker bits or use lease mode",
			ErrExhausted, req.MaxWorkers(), req.WorkerBits, req.Namespace)
	}
	return next, nil
}

func (h *Holder) lease(ctx context.Context, tx *sql.Tx, req holder.Request) (int64, error) {
	taken, err := h.busy(ctx, tx, req.Namespace)
	if err != nil {
		return 0, err
	}
	// StartTx ends the expired row of the chosen worker ID, if any, in this
	// transaction; a late heartbeat of that row then updates nothing.
	return h.lowestFree(taken, req, "held by live leases")
}
