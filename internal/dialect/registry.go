package dialect

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// registrySpec is what the worker table (idsql_workers, written by
// holder/registry and holder/postgres) needs to know of one dialect. A
// dialect whose entry has no schema has no worker table.
type registrySpec struct {
	// schema creates the worker tables; each statement is idempotent.
	schema []string
	// ddlInTx: DDL is transactional, so a migration runs in one
	// transaction (under XactLock); otherwise each statement commits on
	// its own, and must be atomic by itself.
	ddlInTx bool
	// timeType is the type of the table's times, as a CAST names it.
	timeType string
	// zoneless: the times hold no zone; they hold UTC, travel as UTC text
	// and are read back as UTC whatever the driver's settings.
	zoneless bool
	// plusMicros is a format (a time expression, a bigint expression) of
	// the time that many microseconds later; NULL when either is.
	plusMicros string
	// microsUntil is a format (the clock, a time expression) of the
	// microseconds from the clock to the time, a bigint.
	microsUntil string
	// readCommitted: idsql's read-then-write transactions ask for READ
	// COMMITTED, which is not the server's default.
	readCommitted bool
	// lockingRead is appended to a SELECT (with aggregates) in such a
	// transaction so that it reads the latest committed rows.
	lockingRead string
	// maxName is how many characters the table's names (namespace, table,
	// instance) hold; 0 means no limit.
	maxName int
	// changedRows: an UPDATE's RowsAffected may count only the rows it
	// changed, not every row it matched.
	changedRows bool
	// idleTimeout is a format (a text expression of milliseconds) of an
	// expression that ends the running transaction when it idles that
	// long; "" for none.
	idleTimeout string
	// sessionIdle, given the server's VERSION(), returns the statement
	// (taking whole seconds as its one parameter) that makes the server
	// end a session whose transaction idles that long, and the statement
	// that restores the server's default; "" where the server has none.
	sessionIdle func(version string) (set, reset string)
	// namespaceLock is a format (the namespace, an SQL expression) of the
	// statement taking the namespace's lock to the end of the transaction.
	namespaceLock string
}

// zonelessTime is the layout of the times sent to a database whose times
// hold no zone (DATETIME(6)).
const zonelessTime = "2006-01-02 15:04:05.000000"

func (d Dialect) registry() *registrySpec { return &d.descriptor().registry }

// HasWorkerTable reports whether the dialect keeps the worker table
// idsql_workers (PostgreSQL and MySQL; not SQLite).
func (d Dialect) HasWorkerTable() bool { return len(d.registry().schema) > 0 }

// WorkerTableDialects lists the dialects that keep the worker table, for
// messages.
func WorkerTableDialects() []Dialect {
	var out []Dialect
	for d := Unknown; int(d) < len(descriptors); d++ {
		if d.HasWorkerTable() {
			out = append(out, d)
		}
	}
	return out
}

// WorkerSchema returns the statements that create the worker table
// idsql_workers, its indexes and (MySQL) the namespace lock table
// idsql_worker_locks when they are missing; nil for a dialect without a
// worker table. Each statement is idempotent, but for an upgrade step
// that adds a column, which fails with DuplicateColumn once it has run:
// take that error as done. Where TransactionalDDL
// holds, run them in one transaction that first takes an XactLock, so
// that concurrent migrations do not collide in the catalog; elsewhere run
// each on its own (each is atomic).
func (d Dialect) WorkerSchema() []string { return append([]string(nil), d.registry().schema...) }

// TransactionalDDL reports whether DDL runs inside a transaction
// (PostgreSQL), rather than committing on its own (MySQL).
func (d Dialect) TransactionalDDL() bool { return d.registry().ddlInTx }

// TimeParam returns the bind parameter p (? or $n) read as a time of the
// worker table: CAST(p AS timestamptz) on PostgreSQL, CAST(p AS
// DATETIME(6)) on MySQL. Its argument is TimeArg's.
func (d Dialect) TimeParam(p string) string {
	return "CAST(" + p + " AS " + d.registry().timeType + ")"
}

// TimeArg returns t as the argument of a TimeParam: the zero time is NULL;
// PostgreSQL takes t as it is; MySQL's DATETIME has no zone, so it gets
// UTC text with microseconds (truncated), which no driver setting (loc,
// interpolateParams) converts.
func (d Dialect) TimeArg(t time.Time) any {
	switch {
	case t.IsZero():
		return nil
	case d.registry().zoneless:
		return t.UTC().Format(zonelessTime)
	}
	return t
}

// ScanTime returns the destination that scans a time of the worker table
// into *dst; NULL is the zero time. On MySQL the column holds UTC (see
// TimeArg): a time.Time (parseTime=true, in any loc) keeps its wall clock,
// read as UTC, and text is parsed as UTC.
func (d Dialect) ScanTime(dst *time.Time) sql.Scanner {
	return &timeScanner{dst: dst, zoneless: d.registry().zoneless}
}

type timeScanner struct {
	dst      *time.Time
	zoneless bool
}

func (c *timeScanner) Scan(v any) error {
	switch v := v.(type) {
	case nil:
		*c.dst = time.Time{}
	case time.Time:
		if c.zoneless {
			v = time.Date(v.Year(), v.Month(), v.Day(), v.Hour(), v.Minute(), v.Second(), v.Nanosecond(), time.UTC)
		}
		*c.dst = v
	case []byte:
		return c.parse(string(v))
	case string:
		return c.parse(v)
	default:
		return fmt.Errorf("dialect: cannot scan %T into a timestamp", v)
	}
	return nil
}

func (c *timeScanner) parse(s string) error {
	t, err := time.ParseInLocation("2006-01-02 15:04:05.999999999", s, time.UTC)
	if err != nil {
		return fmt.Errorf("dialect: timestamp %q: %w", s, err)
	}
	*c.dst = t
	return nil
}

// PlusMicroseconds returns the SQL expression of the time n microseconds
// after ts (both SQL expressions; n may be a bind parameter of an integer
// or NULL). It is NULL when n is.
func (d Dialect) PlusMicroseconds(ts, n string) string {
	return fmt.Sprintf(d.registry().plusMicros, ts, n)
}

// MicrosecondsUntil returns the SQL expression of the microseconds (a
// bigint, negative once passed) from the database clock (Clock) to the
// time expression ts; NULL when ts is.
func (d Dialect) MicrosecondsUntil(ts string) string {
	return fmt.Sprintf(d.registry().microsUntil, d.Clock(), ts)
}

// SessionIdleTimeout returns, for the server behind q, the statement that
// makes it end the session once a transaction idles for the statement's
// one parameter, in whole seconds, and the statement that gives the
// session the server's default back: MariaDB's idle_transaction_timeout.
// A transaction that starts after the first and is followed by the second
// holds its locks for no longer than that while its client is paused.
// Both are "", without asking the server, where the dialect has no such
// setting (PostgreSQL uses IdleTxTimeout), and "" for a server of the
// dialect that has none (MySQL).
func (d Dialect) SessionIdleTimeout(ctx context.Context, q RowQueryer) (set, reset string, err error) {
	f := d.registry().sessionIdle
	if f == nil {
		return "", "", nil
	}
	var version string
	if err := q.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", "", fmt.Errorf("dialect: %s: read the server version: %w", d, err)
	}
	set, reset = f(version)
	return set, reset, nil
}

// ReadCommittedTx returns the options of a transaction that reads and
// then writes the worker table: every statement reads what was committed
// before it. It is nil where that is the server's default (PostgreSQL),
// READ COMMITTED on MySQL, where InnoDB then also locks no gaps when it
// searches. With binary logging in STATEMENT format, MySQL's READ
// COMMITTED transactions cannot write; ROW and MIXED (the defaults) can.
func (d Dialect) ReadCommittedTx() *sql.TxOptions {
	if !d.registry().readCommitted {
		return nil
	}
	return &sql.TxOptions{Isolation: sql.LevelReadCommitted}
}

// LockingRead returns the clause that, appended to a SELECT, makes it read
// the latest committed rows, even with aggregates and in a REPEATABLE READ
// transaction: " FOR UPDATE" on MySQL (a current read, which locks the
// rows it reads), "" on PostgreSQL, where every statement of a READ
// COMMITTED transaction reads them and FOR UPDATE refuses aggregates.
func (d Dialect) LockingRead() string { return d.registry().lockingRead }

// MaxNameLength returns how many characters the worker table's names
// (namespace, table, instance) hold: 191 on MySQL, where the indexes must
// fit every InnoDB row format; 0 means no limit (PostgreSQL's text).
func (d Dialect) MaxNameLength() int { return d.registry().maxName }

// CheckWorkerName returns an error for a worker table name (what names it:
// "namespace", "table", "instance") longer than MaxNameLength, which the
// database would truncate or refuse.
func (d Dialect) CheckWorkerName(what, s string) error {
	limit := d.MaxNameLength()
	if limit == 0 {
		return nil
	}
	if n := len([]rune(s)); n > limit {
		return fmt.Errorf("%s %.20q... has %d characters; the worker table on %s holds at most %d", what, s, n, d, limit)
	}
	return nil
}

// ChangedRows reports whether an UPDATE's RowsAffected may count only the
// rows it changed rather than every row it matched (MySQL, unless the DSN
// sets clientFoundRows): a statement that must tell a matched row by its
// count has to change it.
func (d Dialect) ChangedRows() bool { return d.registry().changedRows }

// IdleTxTimeout returns an SQL expression that, evaluated in a
// transaction, makes the server end it when it idles for ms milliseconds
// (a text SQL expression, such as a bind parameter): PostgreSQL's
// set_config('idle_in_transaction_session_timeout', ms, true). It is ""
// where no setting lasts only to the end of the transaction (MySQL).
func (d Dialect) IdleTxTimeout(ms string) string {
	f := d.registry().idleTimeout
	if f == "" {
		return ""
	}
	return fmt.Sprintf(f, ms)
}
