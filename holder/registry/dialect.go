package registry

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idsql/idsql/internal/dialect"
)

// chooseDialect returns the dialect Settings.Dialect names or, when it is
// empty, the dialect of db (dialect.Of: a known driver, raw or wrapped by
// idsql). It never guesses: another driver is an error that says to set
// Settings.Dialect. A dialect without a worker table is refused.
func chooseDialect(db *sql.DB, name string) (dialect.Dialect, error) {
	if name != "" {
		d, err := dialect.ByName(name)
		switch {
		case err != nil:
			return dialect.Unknown, fmt.Errorf("registry: Settings.Dialect: %w", err)
		case !d.HasWorkerTable():
			return dialect.Unknown, fmt.Errorf("registry: Settings.Dialect %q: the worker table needs %s", name, workerDialects("%s"))
		}
		return d, nil
	}
	d, err := dialect.Of(db)
	switch {
	case err != nil:
		return dialect.Unknown, fmt.Errorf("registry: %w; set Settings.Dialect to %s", err, workerDialects("%q"))
	case !d.HasWorkerTable():
		return dialect.Unknown, fmt.Errorf("registry: the worker table needs PostgreSQL or MySQL/MariaDB, not %s (driver %s)", d, dialect.DriverType(db.Driver()))
	}
	return d, nil
}

// workerDialects names the dialects that keep the worker table, each
// formatted by f, joined by "or".
func workerDialects(f string) string {
	var names []string
	for _, d := range dialect.WorkerTableDialects() {
		names = append(names, fmt.Sprintf(f, d.String()))
	}
	return strings.Join(names, " or ")
}

// ErrNotDurable means the database may lose a committed lease row in a
// crash or a failover, and the registry cannot make that commit durable
// itself. It is returned by StartTx on a MySQL server that does not flush
// every commit, and on a PostgreSQL primary that streams to a standby a
// failover could promote without the commit (an asynchronous one), unless
// Settings.AcceptLazyCommits is set.
var ErrNotDurable = errors.New("registry: the database does not make every commit durable")

// ErrMultiWriter means the database is one node of a cluster that takes
// writes on every node and can lose one of two concurrent updates made on
// different nodes (a MariaDB Galera cluster), where two claims through
// different nodes could take one worker ID. LockNamespace returns it
// unless Settings.OneWriterNode says every process writes through one
// node at a time.
var ErrMultiWriter = errors.New("registry: the database is a node of a multi-writer cluster")

// attempts bounds how often InTx runs a transaction that conflicts.
const attempts = 5

// InTx runs fn in a transaction and commits it. The transaction is READ
// COMMITTED on MySQL, so that every statement reads what was committed
// before it, as on PostgreSQL (whose default it keeps), and InnoDB locks
// no gaps when it searches. A run that a deadlock or serialization failure rolled back is
// run again, up to 5 times; fn must not have effects outside tx that a
// second run would repeat wrongly. An error of fn is returned as it is.
//
// On MySQL with binary logging in STATEMENT format, READ COMMITTED
// transactions cannot write; use ROW or MIXED (the defaults).
//
// The transaction may hold locks other processes wait for (the namespace
// lock of a claim, a lease's row): a process paused inside it (SIGSTOP, a
// VM freeze, a starved scheduler) would hold them back for as long as its
// connection lives. Where the database can (IdleTxTimeout: PostgreSQL),
// the server ends the transaction once it idles for a heartbeat (at least
// a second): the paused run fails, having committed nothing, and the
// others go on. MariaDB has the setting for a session only
// (idle_transaction_timeout, in whole seconds): there the transaction
// runs on a connection of its own that gets it, and the server's default
// back afterwards. (MySQL has no such setting.)
func (r *Registry) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return r.inTx(ctx, "", fn)
}

// inTx is InTx whose transaction first evaluates setup, a list of SQL
// expressions without parameters ("" for none), in the same statement
// that sets its idle timeout.
func (r *Registry) inTx(ctx context.Context, setup string, fn func(tx *sql.Tx) error) error {
	if r.err != nil {
		return r.err
	}
	opts := r.d.ReadCommittedTx()
	var args []any
	if idle := r.d.IdleTxTimeout("?"); idle != "" {
		setup = strings.TrimPrefix(setup+", "+idle, ", ")
		args = append(args, fmt.Sprint(max(r.s.Heartbeat, time.Second).Milliseconds()))
	}
	if setup != "" {
		setup = r.d.Rebind("SELECT " + setup)
	}
	for i := 1; ; i++ {
		err := r.tx(ctx, opts, setup, args, fn)
		if err == nil || i == attempts || !r.d.SerializationFailure(err) {
			return err
		}
		select {
		case <-time.After(time.Duration(i) * 5 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

func (r *Registry) tx(ctx context.Context, opts *sql.TxOptions, setup string, args []any, fn func(tx *sql.Tx) error) error {
	set, reset, err := r.sessionIdle(ctx)
	if err != nil {
		return err
	}
	if set == "" {
		return r.txOn(ctx, r.db, opts, setup, args, fn)
	}
	// The session ends if the transaction idles for a heartbeat (at
	// least a second, in whole seconds), on a connection of its own that
	// gets the server's default back afterwards (or is dropped).
	conn, err := r.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, set, int64((max(r.s.Heartbeat, time.Second)+time.Second-1)/time.Second)); err != nil {
		return err
	}
	err = r.txOn(ctx, conn, opts, setup, args, fn)
	if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), reset); rerr != nil {
		// Keep the setting out of the pool: the connection is dropped.
		conn.Raw(func(any) error { return driver.ErrBadConn })
	}
	return err
}

// sessionIdle returns the statements that bound a transaction's idle time
// for the session, and restore the default (Dialect.SessionIdleTimeout),
// read from the server once.
func (r *Registry) sessionIdle(ctx context.Context) (set, reset string, err error) {
	r.idleMu.Lock()
	defer r.idleMu.Unlock()
	if !r.idleKnown {
		if r.idleSet, r.idleReset, err = r.d.SessionIdleTimeout(ctx, r.db); err != nil {
			return "", "", err
		}
		r.idleKnown = true
	}
	return r.idleSet, r.idleReset, nil
}

// beginner starts transactions: *sql.DB or *sql.Conn.
type beginner interface {
	BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error)
}

func (r *Registry) txOn(ctx context.Context, db beginner, opts *sql.TxOptions, setup string, args []any, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if setup != "" {
		if _, err := tx.ExecContext(ctx, setup, args...); err != nil {
			return err
		}
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// LockNamespace serializes, until tx ends, the claims of worker IDs in
// namespace among all processes: a transaction-scoped advisory lock on
// PostgreSQL; on MySQL, the row lock that an upsert of the namespace's row
// in idsql_worker_locks takes (and keeps until tx ends, whether it inserted
// the row or found it). Both locks end with the transaction, also when its
// connection or the server dies, and take no connection of their own.
// In a transaction of InTx, a claim paused while it holds the lock holds
// the others back for a heartbeat at most (see InTx). On a node of a
// Galera cluster, whose row locks are the node's own and whose
// certification can let two nodes' updates of one row both commit, it
// fails with ErrMultiWriter unless Settings.OneWriterNode is set.
func (r *Registry) LockNamespace(ctx context.Context, tx *sql.Tx, namespace string) error {
	if r.err != nil {
		return r.err
	}
	if err := r.d.CheckWorkerName("namespace", namespace); err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	if err := r.writers.Check(ctx, r.d, tx, r.s.OneWriterNode, ErrMultiWriter, "a claim of a worker ID"); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, r.d.NamespaceLock(r.d.Placeholder(1)), namespace)
	return err
}

// durable makes tx commit durably, or refuses a database that would not:
// a lease row or horizon lost in a crash or a failover could hand a worker
// ID out twice. PostgreSQL: the dialect's DurableCommit statement (SET
// LOCAL synchronous_commit = on), whatever the server runs with, which
// waits for the synchronous standbys too; a standby that would not hold
// the commit (dialect.UnsafeStandbys: an asynchronous one) fails with
// ErrNotDurable. MySQL: InnoDB's per-commit flush is a global server
// setting a session cannot raise, so the server's settings are checked
// instead (dialect.LazyCommits); a lazy server fails with ErrNotDurable.
// Both pass with Settings.AcceptLazyCommits.
func (r *Registry) durable(ctx context.Context, tx *sql.Tx) error {
	if err := r.d.CommitDurably(ctx, tx); err != nil || r.s.AcceptLazyCommits {
		return err
	}
	standbys, err := r.d.UnsafeStandbys(ctx, tx)
	if err != nil {
		return err
	}
	if standbys != nil {
		return fmt.Errorf("%w: the server streams to standbys that may lack its last commits: %s; a failover to one can lose a lease row "+
			"and hand its worker ID out twice. List the standbys a failover may promote in synchronous_standby_names "+
			"(synchronous_commit on, as idsql's commits ask), give the role pg_read_all_stats when it cannot read sync_state, "+
			"or set Settings.AcceptLazyCommits (holder.accept_lazy_commits: true in an idsql config) to take that risk, "+
			"as for a logical replication consumer, which is never promoted", ErrNotDurable, strings.Join(standbys, ", "))
	}
	lazy, err := r.d.LazyCommits(ctx, tx)
	if err != nil {
		return err
	}
	if lazy == nil {
		return nil
	}
	return fmt.Errorf("%w: the server runs with %s, so a crash can lose a lease row and hand its worker ID out twice; "+
		"set innodb_flush_log_at_trx_commit = 1 (and sync_binlog = 1 with binary logging) on the server, "+
		"or set Settings.AcceptLazyCommits (holder.accept_lazy_commits: true in an idsql config) to take that risk", ErrNotDurable, strings.Join(lazy, " and "))
}

// ceilMicro rounds t up to the microsecond the tables store.
func ceilMicro(t time.Time) time.Time {
	if tr := t.Truncate(time.Microsecond); !tr.Equal(t) {
		return tr.Add(time.Microsecond)
	}
	return t.Round(0)
}
