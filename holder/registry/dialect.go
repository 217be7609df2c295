package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idsql/idsql/internal/dialect"
)

// chooseDialect returns the dialect Settings.Dialect names or, when it is
// empty, the dialect of db (dialect.Of: a known driver, raw or wrapped by
// idsql). It never guesses: another driver is an error that says to set
// Settings.Dialect.
func chooseDialect(db *sql.DB, name string) (dialect.Dialect, error) {
	if name != "" {
		d, err := dialect.ByName(name)
		switch {
		case err != nil:
			return dialect.Unknown, fmt.Errorf("registry: Settings.Dialect: %w", err)
		case d != dialect.PostgreSQL && d != dialect.MySQL:
			return dialect.Unknown, fmt.Errorf("registry: Settings.Dialect %q: the worker table needs %s or %s", name, dialect.PostgreSQL, dialect.MySQL)
		}
		return d, nil
	}
	d, err := dialect.Of(db)
	switch {
	case err != nil:
		return dialect.Unknown, fmt.Errorf("registry: %w; set Settings.Dialect to %q or %q", err, dialect.PostgreSQL, dialect.MySQL)
	case d != dialect.PostgreSQL && d != dialect.MySQL:
		return dialect.Unknown, fmt.Errorf("registry: the worker table needs PostgreSQL or MySQL/MariaDB, not %s (driver %s)", d, dialect.DriverType(db.Driver()))
	}
	return d, nil
}

// ErrNotDurable means the database may lose a committed lease row in a
// crash, and the registry cannot make that commit durable itself. It is
// returned by StartTx on a MySQL server that does not flush every commit,
// unless Settings.AcceptLazyCommits is set.
var ErrNotDurable = errors.New("registry: the database does not make every commit durable")

// maxName is how many characters namespace, table and instance may have on
// MySQL: the VARCHAR(191) columns index in full with utf8mb4 on every row
// format.
const maxName = 191

// mysqlTime is the layout of DATETIME(6) values sent to MySQL.
const mysqlTime = "2006-01-02 15:04:05.000000"

// MySQL schema. Every statement is idempotent and atomic on its own (no
// separate CREATE INDEX, which MySQL cannot make conditional), so several
// processes may migrate at once. Text compares byte for byte (utf8mb4_bin),
// as on PostgreSQL. idsql_worker_locks holds one row per namespace, whose
// row lock serializes claims (see LockNamespace). Heartbeats change no
// indexed column and a release only idsql_workers_live's, so both lock
// little beyond the lease's own row.
var mysqlSchema = []string{`
CREATE TABLE IF NOT EXISTS idsql_workers (
	lease_id       BIGINT       NOT NULL AUTO_INCREMENT PRIMARY KEY,
	namespace      VARCHAR(191) NOT NULL,
	worker_id      BIGINT       NOT NULL,
	table_name     VARCHAR(191) NOT NULL,
	instance       VARCHAR(191) NOT NULL,
	host           VARCHAR(255) NOT NULL DEFAULT '',
	port           INT          NOT NULL DEFAULT 0,
	pid            INT          NOT NULL DEFAULT 0,
	holder_kind    VARCHAR(64)  NOT NULL,
	started        DATETIME(6)  NOT NULL,
	ids_after      DATETIME(6)  NOT NULL,
	last_heartbeat DATETIME(6)  NOT NULL,
	last_timestamp DATETIME(6)  NULL,
	released       DATETIME(6)  NULL,
	expires        DATETIME(6)  NULL,
	KEY idsql_workers_worker (namespace, worker_id, ids_after),
	KEY idsql_workers_live (namespace, released, worker_id),
	KEY idsql_workers_instance (namespace, instance, table_name)
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`, `
CREATE TABLE IF NOT EXISTS idsql_worker_locks (
	namespace VARCHAR(191) NOT NULL PRIMARY KEY
) ENGINE = InnoDB DEFAULT CHARSET = utf8mb4 COLLATE = utf8mb4_bin`,
}

// mysql reports whether the registry speaks MySQL.
func (r *Registry) mysql() bool { return r.d == dialect.MySQL }

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
func (r *Registry) InTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if r.err != nil {
		return r.err
	}
	var opts *sql.TxOptions
	if r.mysql() {
		opts = &sql.TxOptions{Isolation: sql.LevelReadCommitted}
	}
	for i := 1; ; i++ {
		err := r.tx(ctx, opts, fn)
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

func (r *Registry) tx(ctx context.Context, opts *sql.TxOptions, fn func(tx *sql.Tx) error) error {
	tx, err := r.db.BeginTx(ctx, opts)
	if err != nil {
		return err
	}
	defer tx.Rollback()
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
func (r *Registry) LockNamespace(ctx context.Context, tx *sql.Tx, namespace string) error {
	if r.err != nil {
		return r.err
	}
	if r.d == dialect.MySQL {
		if err := checkName("namespace", namespace); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, r.d.NamespaceLock(r.d.Placeholder(1)), namespace)
	return err
}

// checkName refuses a name MySQL would truncate or reject.
func checkName(what, s string) error {
	if n := len([]rune(s)); n > maxName {
		return fmt.Errorf("registry: %s %.20q... has %d characters; MySQL's worker table holds at most %d", what, s, n, maxName)
	}
	return nil
}

// durable makes tx commit durably, or refuses a database that would not:
// a lease row or horizon lost in a crash could hand a worker ID out twice.
// PostgreSQL: the dialect's DurableCommit statement (SET LOCAL
// synchronous_commit = on), whatever the server runs with. MySQL: InnoDB's
// per-commit flush is a global server setting a session cannot raise, so
// the server's settings are checked instead (dialect.LazyCommits); a lazy
// server fails with ErrNotDurable unless Settings.AcceptLazyCommits.
func (r *Registry) durable(ctx context.Context, tx *sql.Tx) error {
	if err := r.d.CommitDurably(ctx, tx); err != nil || r.s.AcceptLazyCommits {
		return err
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

// arg returns t as a statement argument: as is on PostgreSQL, as UTC text
// with microseconds on MySQL (DATETIME has no zone, and the driver would
// otherwise convert to its DSN's loc). The zero time is NULL.
func (r *Registry) arg(t time.Time) any {
	switch {
	case t.IsZero():
		return nil
	case r.mysql():
		return t.UTC().Format(mysqlTime)
	}
	return t
}

// col scans a timestamp column into *dst; NULL is the zero time. MySQL's
// DATETIME holds UTC (see arg): a time.Time (parseTime=true, in any loc)
// keeps its wall clock read as UTC, text is parsed as UTC.
func (r *Registry) col(dst *time.Time) sql.Scanner {
	return &timeCol{dst: dst, mysql: r.mysql()}
}

type timeCol struct {
	dst   *time.Time
	mysql bool
}

func (c *timeCol) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.dst = time.Time{}
	case time.Time:
		if c.mysql {
			v = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
		}
		*c.dst = v
	case []byte:
		return c.parse(string(v))
	case string:
		return c.parse(v)
	default:
		return fmt.Errorf("registry: cannot scan %T into a timestamp", v)
	}
	return nil
}

func (c *timeCol) parse(s string) error {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, time.UTC)
	if err != nil {
		return fmt.Errorf("registry: timestamp %q: %w", s, err)
	}
	*c.dst = t
	return nil
}

// ceilMicro rounds t up to the microsecond the tables store.
func ceilMicro(t time.Time) time.Time {
	if tr := t.Truncate(time.Microsecond); !tr.Equal(t) {
		return tr.Add(time.Microsecond)
	}
	return t.Round(0)
}
