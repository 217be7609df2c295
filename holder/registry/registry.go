package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/holder"
)

// Defaults of Settings.
const (
	DefaultHeartbeat = 3 * time.Second
	DefaultSlack     = 30 * time.Second
)

// ErrNoLease means no recorded lease explains an ID: its worker ID never
// served the namespace at that time. It is wrapped by *NoLeaseError.
var ErrNoLease = errors.New("registry: no lease explains this ID")

// NoLeaseError says which ID found no lease.
type NoLeaseError struct {
	Namespace string
	WorkerID  int64
	At        time.Time
	// Reason says why the closest candidate, if any, did not match.
	Reason string
}

func (e *NoLeaseError) Error() string {
	return fmt.Sprintf("registry: no lease explains worker %d of namespace %q at %s: %s",
		e.WorkerID, e.Namespace, e.At.UTC().Format(time.RFC3339Nano), e.Reason)
}

// Unwrap returns ErrNoLease.
func (e *NoLeaseError) Unwrap() error { return ErrNoLease }

// Settings configure a Registry. The zero value means the defaults.
type Settings struct {
	// Heartbeat is how often a recorded lease writes its heartbeat and
	// high-water timestamp; 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Slack is how long after its last heartbeat a live (unreleased) lease
	// still explains IDs; 0 means DefaultSlack. A recorded lease whose
	// heartbeats have failed for Slack minus one Heartbeat stops its
	// generator, so Find never misses an ID of a live lease. It must be at
	// least twice Heartbeat.
	Slack time.Duration
	// Now is the clock for start, heartbeat and release times and for the
	// leases' deadlines; nil means time.Now. Its readings must carry Go's
	// monotonic reading (time.Now, or time.Now().Add(d) for a clock set
	// off by d), and it must be the clock of the generators that use the
	// leases.
	Now func() time.Time
}

func (s Settings) withDefaults() Settings {
	if s.Heartbeat <= 0 {
		s.Heartbeat = DefaultHeartbeat
	}
	if s.Slack <= 0 {
		s.Slack = DefaultSlack
	}
	if s.Slack < 2*s.Heartbeat {
		s.Slack = 2 * s.Heartbeat
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	return s
}

// Registry reads and writes idsql_workers. It is safe for concurrent use.
type Registry struct {
	db *sql.DB
	s  Settings
}

// New returns a registry on db (a PostgreSQL database through lib/pq or a
// compatible driver).
func New(db *sql.DB, s Settings) *Registry {
	return &Registry{db: db, s: s.withDefaults()}
}

// DB returns the registry's database.
func (r *Registry) DB() *sql.DB { return r.db }

// Settings returns the settings in effect, defaults filled in.
func (r *Registry) Settings() Settings { return r.s }

// Now reads the registry's clock.
func (r *Registry) Now() time.Time { return r.s.Now() }

// durable makes tx commit durably even on a server running with
// synchronous_commit off: a lease row or horizon lost in a crash could hand
// a worker ID out twice.
func durable(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = on`)
	return err
}

// schema is idempotent. expires is only used by holder/postgres's lease
// mode (database clock); other holders leave it NULL.
const schema = `
CREATE TABLE IF NOT EXISTS idsql_workers (
	lease_id       BIGSERIAL PRIMARY KEY,
	namespace      TEXT        NOT NULL,
	worker_id      BIGINT      NOT NULL,
	table_name     TEXT        NOT NULL,
	instance       TEXT        NOT NULL,
	host           TEXT        NOT NULL DEFAULT '',
	port           INTEGER     NOT NULL DEFAULT 0,
	pid            INTEGER     NOT NULL DEFAULT 0,
	holder_kind    TEXT        NOT NULL,
	started        TIMESTAMPTZ NOT NULL,
	ids_after      TIMESTAMPTZ NOT NULL,
	last_heartbeat TIMESTAMPTZ NOT NULL,
	last_timestamp TIMESTAMPTZ,
	released       TIMESTAMPTZ,
	expires        TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS idsql_workers_worker ON idsql_workers (namespace, worker_id, ids_after);
CREATE INDEX IF NOT EXISTS idsql_workers_live ON idsql_workers (namespace, worker_id) WHERE released IS NULL;
CREATE INDEX IF NOT EXISTS idsql_workers_instance ON idsql_workers (namespace, instance, table_name);
`

// Migrate creates idsql_workers and its indexes when they are missing. It is
// idempotent and safe to run from several processes at once.
func (r *Registry) Migrate(ctx context.Context) error {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registry: migrate: %w", err)
	}
	defer tx.Rollback()
	// Concurrent CREATE TABLE IF NOT EXISTS can still collide in the
	// catalog; serialize migrations.
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7306153849311529984)`); err != nil {
		return fmt.Errorf("registry: migrate: %w", err)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("registry: migrate: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("registry: migrate: %w", err)
	}
	return nil
}

// Record is one row of idsql_workers.
type Record struct {
	LeaseID   int64
	Namespace string
	WorkerID  int64
	Table     string
	Instance  string
	Host      string
	Port      int
	PID       int
	Kind      string
	// Started is when the lease was recorded (holder clock).
	Started time.Time
	// IDsAfter bounds the lease's IDs from below: each has a later tick.
	// The table stores it truncated to microseconds; that is still at or
	// after every earlier lease's IDs, whose tick starts are whole
	// microseconds (layouts' units and epochs are).
	IDsAfter time.Time
	// LastHeartbeat is the latest heartbeat written.
	LastHeartbeat time.Time
	// LastTimestamp is the latest high-water timestamp written; zero if none.
	LastTimestamp time.Time
	// Released is when the lease ended (released, or superseded by the next
	// lease of its worker ID); zero while it is live.
	Released time.Time
}

// Live reports whether the lease has not ended.
func (r Record) Live() bool { return r.Released.IsZero() }

// Start describes a lease to record.
type Start struct {
	Namespace string
	WorkerID  int64
	Table     string
	Instance  holder.Instance
	// Kind names the holder, e.g. "zookeeper/recycle".
	Kind string
	// LastTime is the inner holder's persisted timestamp for the worker ID;
	// IDsAfter is at least this.
	LastTime time.Time
	// Expires, when set, is stored as the database-clock expiry
	// (clock_timestamp() + Expires at the INSERT) used by holder/postgres.
	Expires time.Duration
	// Horizon is the lease's first horizon (Registry.Horizon), stored as
	// its last_timestamp before any ID is issued under it.
	Horizon time.Time
}

// Started is the outcome of StartTx.
type Started struct {
	Record Record
	// PrevHighWater is the latest timestamp persisted for the worker ID
	// before this lease (registry rows and Start.LastTime); the caller must
	// refuse the lease when the clock is behind it.
	PrevHighWater time.Time
}

// StartTx records a lease inside tx, which the caller commits. It ends any
// earlier live row of the same worker ID (the holder guarantees that lease
// stopped before this one was granted), computes IDsAfter, the horizon the
// new lease's IDs must be later than, and makes tx commit durably.
func (r *Registry) StartTx(ctx context.Context, tx *sql.Tx, s Start) (Started, error) {
	if err := durable(ctx, tx); err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	now := r.s.Now()
	var prev sql.NullTime
	err := tx.QueryRowContext(ctx, `
		SELECT max(greatest(last_timestamp, ids_after)) FROM idsql_workers
		WHERE namespace = $1 AND worker_id = $2`, s.Namespace, s.WorkerID).Scan(&prev)
	if err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	prevHW := s.LastTime
	if prev.Valid && prev.Time.After(prevHW) {
		prevHW = prev.Time
	}
	after := now
	if prevHW.After(after) {
		after = prevHW
	}
	if _, err := tx.ExecContext(ctx, `
		UPDATE idsql_workers SET released = $3
		WHERE namespace = $1 AND worker_id = $2 AND released IS NULL`,
		s.Namespace, s.WorkerID, now); err != nil {
		return Started{}, fmt.Errorf("registry: end earlier leases of worker %d: %w", s.WorkerID, err)
	}
	var expires, horizon any
	if s.Expires > 0 {
		expires = s.Expires.Microseconds()
	}
	if !s.Horizon.IsZero() {
		horizon = s.Horizon
	}
	rec := Record{
		Namespace: s.Namespace, WorkerID: s.WorkerID, Table: s.Table,
		Instance: s.Instance.Key(), Host: s.Instance.Host, Port: s.Instance.Port, PID: s.Instance.PID,
		Kind: s.Kind, Started: now, IDsAfter: after, LastHeartbeat: now, LastTimestamp: s.Horizon,
	}
	err = tx.QueryRowContext(ctx, `
		INSERT INTO idsql_workers (namespace, worker_id, table_name, instance, host, port, pid,
			holder_kind, started, ids_after, last_heartbeat, expires, last_timestamp)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $9,
			CASE WHEN $11::bigint IS NULL THEN NULL ELSE clock_timestamp() + $11::bigint * interval '1 microsecond' END,
			$12)
		RETURNING lease_id`,
		rec.Namespace, rec.WorkerID, rec.Table, rec.Instance, rec.Host, rec.Port, rec.PID,
		rec.Kind, rec.Started, rec.IDsAfter.Truncate(time.Microsecond), expires, horizon).Scan(&rec.LeaseID)
	if err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	return Started{Record: rec, PrevHighWater: prevHW}, nil
}

// Begin records a lease in a transaction of its own.
func (r *Registry) Begin(ctx context.Context, s Start) (Record, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return Record{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	defer tx.Rollback()
	st, err := r.StartTx(ctx, tx, s)
	if err != nil {
		return Record{}, err
	}
	if err := tx.Commit(); err != nil {
		return Record{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	return st.Record, nil
}

// Heartbeat writes a heartbeat and raises the lease's stored horizon to
// horizon (zero: keep it), durably, for a live lease. It reports false when
// the lease is no longer live in the table (released or superseded). When
// expires is positive the database-clock expiry is moved to
// clock_timestamp() + expires.
func (r *Registry) Heartbeat(ctx context.Context, leaseID int64, horizon time.Time, expires time.Duration) (bool, error) {
	var hz, exp any
	if !horizon.IsZero() {
		hz = horizon
	}
	if expires > 0 {
		exp = expires.Microseconds()
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: %w", leaseID, err)
	}
	defer tx.Rollback()
	if err := durable(ctx, tx); err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: %w", leaseID, err)
	}
	res, err := tx.ExecContext(ctx, `
		UPDATE idsql_workers SET last_heartbeat = $2,
			last_timestamp = greatest(last_timestamp, $3::timestamptz),
			expires = CASE WHEN $4::bigint IS NULL THEN expires ELSE clock_timestamp() + $4::bigint * interval '1 microsecond' END
		WHERE lease_id = $1 AND released IS NULL AND (expires IS NULL OR expires > clock_timestamp())`,
		leaseID, r.s.Now(), hz, exp)
	if err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: %w", leaseID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: %w", leaseID, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: commit: %w", leaseID, err)
	}
	return n == 1, nil
}

// Release ends a lease. last, when not zero, is the tick of the last ID
// issued under it, known because its generator has stopped: it becomes the
// stored horizon, so the next lease of the worker ID need not wait for the
// horizon this one had reserved. Releasing an ended lease changes nothing.
func (r *Registry) Release(ctx context.Context, leaseID int64, last time.Time) error {
	var lt any
	if !last.IsZero() {
		// Round up to the stored microsecond: the next lease starts after
		// the tick holding it, which must not be before the last ID's.
		lt = last.Round(0)
		if tr := last.Truncate(time.Microsecond); !tr.Equal(last) {
			lt = tr.Add(time.Microsecond)
		}
	}
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("registry: release lease %d: %w", leaseID, err)
	}
	defer tx.Rollback()
	if err := durable(ctx, tx); err != nil {
		return fmt.Errorf("registry: release lease %d: %w", leaseID, err)
	}
	if _, err := tx.ExecContext(ctx, `
		UPDATE idsql_workers SET released = $2,
			last_timestamp = coalesce($3::timestamptz, last_timestamp)
		WHERE lease_id = $1 AND released IS NULL`, leaseID, r.s.Now(), lt); err != nil {
		return fmt.Errorf("registry: release lease %d: %w", leaseID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("registry: release lease %d: commit: %w", leaseID, err)
	}
	return nil
}

const columns = `lease_id, namespace, worker_id, table_name, instance, host, port, pid, holder_kind,
	started, ids_after, last_heartbeat, last_timestamp, released`

func scan(row interface{ Scan(...any) error }) (Record, error) {
	var rec Record
	var lt, rel sql.NullTime
	err := row.Scan(&rec.LeaseID, &rec.Namespace, &rec.WorkerID, &rec.Table, &rec.Instance,
		&rec.Host, &rec.Port, &rec.PID, &rec.Kind, &rec.Started, &rec.IDsAfter,
		&rec.LastHeartbeat, &lt, &rel)
	rec.LastTimestamp = lt.Time
	rec.Released = rel.Time
	return rec, err
}

// Find returns the lease that issued IDs of worker workerID in namespace
// whose tick starts at at (snowflake.Parts.Time). It answers an error
// wrapping ErrNoLease when no lease explains the ID: the worker ID never
// served the namespace then, or at is past the end of the lease that would.
func (r *Registry) Find(ctx context.Context, namespace string, workerID int64, at time.Time) (Record, error) {
	rec, err := scan(r.db.QueryRowContext(ctx, `SELECT `+columns+` FROM idsql_workers
		WHERE namespace = $1 AND worker_id = $2 AND ids_after < $3
		ORDER BY ids_after DESC, lease_id DESC LIMIT 1`, namespace, workerID, at))
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, &NoLeaseError{Namespace: namespace, WorkerID: workerID, At: at,
			Reason: "no lease of this worker ID started before that time"}
	}
	if err != nil {
		return Record{}, fmt.Errorf("registry: find worker %d of %q: %w", workerID, namespace, err)
	}
	end := rec.LastHeartbeat.Add(r.s.Slack)
	if !rec.Released.IsZero() {
		end = rec.Released
	}
	if rec.LastTimestamp.After(end) {
		end = rec.LastTimestamp
	}
	if at.After(end) {
		return Record{}, &NoLeaseError{Namespace: namespace, WorkerID: workerID, At: at,
			Reason: fmt.Sprintf("the latest earlier lease (%d, table %q) ended at %s",
				rec.LeaseID, rec.Table, end.UTC().Format(time.RFC3339Nano))}
	}
	return rec, nil
}

// Leases lists a namespace's leases, newest first; live only when liveOnly.
func (r *Registry) Leases(ctx context.Context, namespace string, liveOnly bool) ([]Record, error) {
	rows, err := r.db.QueryContext(ctx, `SELECT `+columns+` FROM idsql_workers
		WHERE namespace = $1 AND (NOT $2 OR released IS NULL)
		ORDER BY lease_id DESC`, namespace, liveOnly)
	if err != nil {
		return nil, fmt.Errorf("registry: list leases of %q: %w", namespace, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		rec, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("registry: list leases of %q: %w", namespace, err)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("registry: list leases of %q: %w", namespace, err)
	}
	return out, nil
}
