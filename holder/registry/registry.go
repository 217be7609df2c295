package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/dialect"
)

// Defaults of Settings.
const (
	DefaultHeartbeat = 3 * time.Second
	DefaultSlack     = 30 * time.Second
)

// ErrNoLease means no recorded lease explains an ID: its worker ID never
// served the namespace at that time. It is wrapped by *NoLeaseError.
var ErrNoLease = errors.New("registry: no lease explains this ID")

// ErrReserved means a holder handed out a worker ID that the worker table
// reserves for a database-side default (a row of instance "database"):
// the process's configuration lacks the holder.database_workers that keeps
// the top of the range for the database. It is wrapped by the error that
// names the worker ID and the table whose default holds it.
var ErrReserved = errors.New("registry: worker ID reserved for a database-side default")

// reservedError is the error refusing worker of namespace, reserved for
// the database-side default of table.
func reservedError(namespace string, worker int64, table string) error {
	return fmt.Errorf("%w: worker %d of namespace %q serves the database-side default of table %s (instance %q in idsql_workers); "+
		"give every process of the namespace the holder.database_workers the defaults were installed with, so that no holder hands it out",
		ErrReserved, worker, namespace, table, dialect.DBInstance)
}

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
	// Dialect names the database's SQL dialect: postgres or mysql (which
	// covers MariaDB), or an alias the `dialect:` setting takes
	// (postgresql, pgx, mariadb). Empty means the dialect of the database's
	// driver (a known one, raw or wrapped by idsql.Open). Settings()
	// reports the canonical name.
	Dialect string
	// AcceptLazyCommits lets the registry record leases where a commit it
	// made can be lost (see ErrNotDurable): on a MySQL server that does not
	// flush every commit to disk, where a crash of the database can hand a
	// worker ID out twice, and on a PostgreSQL primary that streams to an
	// asynchronous standby, where a failover to it can. Every lease
	// transaction on PostgreSQL commits synchronously either way.
	AcceptLazyCommits bool
	// OneWriterNode says every process reaches a multi-writer cluster (a
	// MariaDB Galera cluster) through one node at a time, so that claims
	// of worker IDs are that node's own transactions: without it, a claim
	// on a Galera node fails with ErrMultiWriter. With it, each claim
	// first waits until the node has applied what the cluster committed
	// before (a node that just took over from a failed one).
	OneWriterNode bool
	// Logger receives a warning when a lease's heartbeat is still running
	// a heartbeat after it was sent (a lease ends when none completes for
	// its fence); nil means slog.Default().
	Logger *slog.Logger
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
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	return s
}

// Registry reads and writes idsql_workers. It is safe for concurrent use.
type Registry struct {
	db  *sql.DB
	s   Settings
	d   dialect.Dialect
	q   statements // rendered in d
	err error      // why the registry cannot work: no dialect

	writers dialect.OneWriter // the multi-writer check of claims

	idleMu             sync.Mutex
	idleKnown          bool   // idleSet and idleReset were read
	idleSet, idleReset string // Dialect.SessionIdleTimeout's
}

// New returns a registry on db, a PostgreSQL or MySQL/MariaDB database.
// The dialect is Settings.Dialect or, when that is empty, the dialect of
// db's driver; when neither names one, every method of the registry
// returns the error saying so (see Registry.Dialect).
func New(db *sql.DB, s Settings) *Registry {
	r := &Registry{db: db, s: s.withDefaults()}
	r.d, r.err = chooseDialect(db, r.s.Dialect)
	if r.err == nil {
		r.s.Dialect = r.d.String()
		r.q = render(r.d)
	}
	return r
}

// DB returns the registry's database.
func (r *Registry) DB() *sql.DB { return r.db }

// Settings returns the settings in effect, defaults filled in.
func (r *Registry) Settings() Settings { return r.s }

// Dialect returns the database's dialect, or the error that keeps the
// registry from working because it has none.
func (r *Registry) Dialect() (dialect.Dialect, error) { return r.d, r.err }

// Now reads the registry's clock.
func (r *Registry) Now() time.Time { return r.s.Now() }

// Migrate creates idsql_workers and its indexes (and, on MySQL, the
// namespace lock table idsql_worker_locks) when they are missing: the
// dialect's WorkerSchema. It is idempotent and safe to run from several
// processes at once. expires is only used by holder/postgres's modes
// (database clock); other holders leave it NULL.
func (r *Registry) Migrate(ctx context.Context) error {
	if r.err != nil {
		return r.err
	}
	if !r.d.TransactionalDDL() {
		// Each statement is atomic on its own (MySQL's CREATE TABLE IF
		// NOT EXISTS under its metadata lock) and commits on its own.
		for _, stmt := range r.d.WorkerSchema() {
			if _, err := r.db.ExecContext(ctx, stmt); err != nil && !r.d.DuplicateColumn(err) {
				return fmt.Errorf("registry: migrate: %w", err)
			}
		}
		return nil
	}
	// In InTx: a migration paused while it holds the tables' locks holds
	// the heartbeats and claims back for a heartbeat at most.
	err := r.InTx(ctx, func(tx *sql.Tx) error {
		// Concurrent CREATE TABLE IF NOT EXISTS can still collide in the
		// catalog; serialize migrations.
		if _, err := tx.ExecContext(ctx, r.d.XactLock("7306153849311529984")); err != nil {
			return err
		}
		for _, stmt := range r.d.WorkerSchema() {
			if _, err := tx.ExecContext(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
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

// Reserved reports whether the row reserves its worker ID for a
// database-side default (instance "database"): it is never renewed, and
// never ends while the default is installed.
func (r Record) Reserved() bool { return r.Instance == dialect.DBInstance }

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
	// (the database clock at the INSERT plus Expires) used by holder/postgres.
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
// new lease's IDs must be later than, and makes tx commit durably (see
// ErrNotDurable for MySQL). On MySQL, tx should be READ COMMITTED, as
// InTx's are.
//
// The earlier rows are ended before the high-water timestamp is read: a
// heartbeat of an ended row either committed before (its horizon is read)
// or finds the row ended and vouches for nothing.
func (r *Registry) StartTx(ctx context.Context, tx *sql.Tx, s Start) (Started, error) {
	if r.err != nil {
		return Started{}, r.err
	}
	for _, n := range [][2]string{{"namespace", s.Namespace}, {"table", s.Table}, {"instance", s.Instance.Key()}} {
		if err := r.d.CheckWorkerName(n[0], n[1]); err != nil {
			return Started{}, fmt.Errorf("registry: %w", err)
		}
	}
	if err := r.durable(ctx, tx); err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	// A reservation for the database never ends by a process's lease, so
	// every holder (Recorded, holder/postgres's modes) is refused it here.
	var reservedFor string
	err := tx.QueryRowContext(ctx, r.q.reserved, s.Namespace, s.WorkerID, dialect.DBInstance).Scan(&reservedFor)
	switch {
	case err == nil:
		return Started{}, reservedError(s.Namespace, s.WorkerID, reservedFor)
	case !errors.Is(err, sql.ErrNoRows):
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	now := r.s.Now()
	if _, err := tx.ExecContext(ctx, r.q.end, r.d.TimeArg(now), s.Namespace, s.WorkerID); err != nil {
		return Started{}, fmt.Errorf("registry: end earlier leases of worker %d: %w", s.WorkerID, err)
	}
	var prev time.Time
	if err := tx.QueryRowContext(ctx, r.q.highWater, s.Namespace, s.WorkerID).Scan(r.d.ScanTime(&prev)); err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	prevHW := s.LastTime
	if prev.After(prevHW) {
		prevHW = prev
	}
	after := now
	if prevHW.After(after) {
		after = prevHW
	}
	var expires any
	if s.Expires > 0 {
		expires = s.Expires.Microseconds()
	}
	rec := Record{
		Namespace: s.Namespace, WorkerID: s.WorkerID, Table: s.Table,
		Instance: s.Instance.Key(), Host: s.Instance.Host, Port: s.Instance.Port, PID: s.Instance.PID,
		Kind: s.Kind, Started: now, IDsAfter: after, LastHeartbeat: now, LastTimestamp: s.Horizon,
	}
	args := []any{rec.Namespace, rec.WorkerID, rec.Table, rec.Instance, rec.Host, rec.Port, rec.PID,
		rec.Kind, r.d.TimeArg(rec.Started), r.d.TimeArg(rec.IDsAfter.Truncate(time.Microsecond)), r.d.TimeArg(rec.Started),
		expires, r.d.TimeArg(s.Horizon)}
	if r.d.KeyBack() == dialect.Returning {
		err = tx.QueryRowContext(ctx, r.q.insert, args...).Scan(&rec.LeaseID)
	} else {
		var res sql.Result
		res, err = tx.ExecContext(ctx, r.q.insert, args...)
		if err == nil {
			rec.LeaseID, err = res.LastInsertId()
		}
	}
	if err != nil {
		return Started{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	return Started{Record: rec, PrevHighWater: prevHW}, nil
}

// Begin records a lease in a transaction of its own.
func (r *Registry) Begin(ctx context.Context, s Start) (Record, error) {
	var st Started
	var stErr error
	err := r.InTx(ctx, func(tx *sql.Tx) error {
		st, stErr = r.StartTx(ctx, tx, s)
		return stErr
	})
	switch {
	case stErr != nil:
		return Record{}, stErr
	case err != nil:
		return Record{}, fmt.Errorf("registry: record worker %d: %w", s.WorkerID, err)
	}
	return st.Record, nil
}

// Heartbeat writes a heartbeat and raises the lease's stored horizon to
// horizon (zero: keep it), durably, for a live lease. It reports false when
// the lease is no longer live in the table (released, superseded, or past
// its database-clock expiry). When expires is positive the expiry is moved
// to the database clock's now + expires.
func (r *Registry) Heartbeat(ctx context.Context, leaseID int64, horizon time.Time, expires time.Duration) (bool, error) {
	return r.heartbeat(ctx, r.db, leaseID, horizon, expires)
}

// heartbeat is Heartbeat on ex: the registry's database, or the
// connection a Lease keeps for its heartbeats.
func (r *Registry) heartbeat(ctx context.Context, ex execer, leaseID int64, horizon time.Time, expires time.Duration) (bool, error) {
	if r.err != nil {
		return false, r.err
	}
	var exp any
	if expires > 0 {
		exp = expires.Microseconds()
	}
	n, err := write(ctx, ex, r.q.heartbeat, r.d.TimeArg(r.s.Now()), r.d.TimeArg(horizon), r.d.TimeArg(horizon), exp, leaseID)
	if err != nil {
		return false, fmt.Errorf("registry: heartbeat lease %d: %w", leaseID, err)
	}
	return n == 1, nil
}

// execer runs a statement: *sql.DB or *sql.Conn.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// write runs stmt, a single-row UPDATE of a lease's row that commits
// durably on its own (see the heartbeat and release statements), and
// returns the rows affected. One statement: a process paused while it
// runs holds no lock across round trips, and a call cancelled at the
// lease's deadline either committed or did not; a heartbeat that
// committed unseen only keeps the row live and its horizon later, which
// delays the next holder and never lets two issue at once.
func write(ctx context.Context, ex execer, stmt string, args ...any) (int64, error) {
	res, err := ex.ExecContext(ctx, stmt, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Release ends a lease. last, when not zero, is the tick of the last ID
// issued under it, known because its generator has stopped: it becomes the
// stored horizon, so the next lease of the worker ID need not wait for the
// horizon this one had reserved. Releasing an ended lease changes nothing.
func (r *Registry) Release(ctx context.Context, leaseID int64, last time.Time) error {
	if r.err != nil {
		return r.err
	}
	var lt time.Time
	if !last.IsZero() {
		// Round up to the stored microsecond: the next lease starts after
		// the tick holding it, which must not be before the last ID's.
		lt = ceilMicro(last)
	}
	_, err := write(ctx, r.db, r.q.release, r.d.TimeArg(r.s.Now()), r.d.TimeArg(lt), leaseID)
	if err != nil {
		return fmt.Errorf("registry: release lease %d: %w", leaseID, err)
	}
	return nil
}

func (r *Registry) scan(row interface{ Scan(...any) error }) (Record, error) {
	var rec Record
	err := row.Scan(&rec.LeaseID, &rec.Namespace, &rec.WorkerID, &rec.Table, &rec.Instance,
		&rec.Host, &rec.Port, &rec.PID, &rec.Kind, r.d.ScanTime(&rec.Started), r.d.ScanTime(&rec.IDsAfter),
		r.d.ScanTime(&rec.LastHeartbeat), r.d.ScanTime(&rec.LastTimestamp), r.d.ScanTime(&rec.Released))
	return rec, err
}

// Find returns the lease that issued IDs of worker workerID in namespace
// whose tick starts at at (snowflake.Parts.Time). It answers an error
// wrapping ErrNoLease when no lease explains the ID: the worker ID never
// served the namespace then, or at is past the end of the lease that would.
func (r *Registry) Find(ctx context.Context, namespace string, workerID int64, at time.Time) (Record, error) {
	if r.err != nil {
		return Record{}, r.err
	}
	// ids_after < at holds for the stored microseconds exactly when it
	// holds for at rounded up to one.
	rec, err := r.scan(r.db.QueryRowContext(ctx, r.q.find, namespace, workerID, r.d.TimeArg(ceilMicro(at))))
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
	if rec.Reserved() && rec.Live() {
		// The database issues keys under its reservation for as long as
		// the default is installed, on its own clock, with no heartbeat.
		return rec, nil
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
	if r.err != nil {
		return nil, r.err
	}
	rows, err := r.db.QueryContext(ctx, r.q.leases, namespace, liveOnly)
	if err != nil {
		return nil, fmt.Errorf("registry: list leases of %q: %w", namespace, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		rec, err := r.scan(rows)
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
