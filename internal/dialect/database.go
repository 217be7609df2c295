package dialect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// ErrUnknownDriver is wrapped by Of's error for a driver whose dialect it
// cannot tell.
var ErrUnknownDriver = errors.New("dialect: cannot tell the SQL dialect of the database driver")

// Teller is implemented by a database/sql driver that wraps another and
// knows the dialect of the database behind it, as idsql's wrapped driver
// does. ForDriver asks it before looking at the driver's type.
type Teller interface {
	Dialect() Dialect
}

// Of returns the dialect of db, found from its driver (see ForDriver): a
// raw *sql.DB of a driver ForDriver knows, or one that idsql.Open wrapped.
// Another driver is an error wrapping ErrUnknownDriver that names its type;
// the caller says which setting names the dialect.
func Of(db *sql.DB) (Dialect, error) {
	if db == nil {
		return Unknown, errors.New("dialect: no database")
	}
	drv := db.Driver()
	if d := ForDriver(drv); d != Unknown {
		return d, nil
	}
	return Unknown, fmt.Errorf("%w %s", ErrUnknownDriver, DriverType(drv))
}

// DurableCommit returns the statement that, run first in a transaction,
// makes its commit reach durable storage before the commit returns,
// whatever the server's and the session's settings (PostgreSQL: SET LOCAL
// synchronous_commit = on). It is "" when no statement can: MySQL's flush
// is a global server setting (see LazyCommits); SQLite's is the
// connection's synchronous pragma, set where the database is opened.
func (d Dialect) DurableCommit() string { return d.spec().durable }

// DurableCommitExpr returns an SQL expression that, evaluated in a
// statement, does what DurableCommit does for the rest of the statement's
// transaction, saving its round trip (PostgreSQL:
// set_config('synchronous_commit', 'on', true)). It is "" where
// DurableCommit is.
func (d Dialect) DurableCommitExpr() string { return d.spec().durableExpr }

// RowQueryer runs a query expected to return at most one row: *sql.DB,
// *sql.Conn and *sql.Tx.
type RowQueryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// LazyCommits reads the server settings that make a commit durable when
// no session can (MySQL): every commit must reach disk
// (innodb_flush_log_at_trx_commit 1, or MariaDB's 3) and, with binary
// logging, the binary log too (sync_binlog = 1), since crash recovery
// rolls back a transaction missing from the binary log. It returns each
// setting that falls short, as "innodb_flush_log_at_trx_commit = 2", and
// none for a durable server or another dialect. Settings it cannot see
// (fsync disabled underneath, innodb_doublewrite off, a replica promoted
// before it applied the commit) remain the operator's.
func (d Dialect) LazyCommits(ctx context.Context, q RowQueryer) ([]string, error) {
	if !d.spec().lazyCheck {
		return nil, nil
	}
	var flush, syncBinlog int64
	var logBin string
	if err := q.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).
		Scan(&flush, &logBin, &syncBinlog); err != nil {
		return nil, fmt.Errorf("read the server's durability settings: %w", err)
	}
	var lazy []string
	if flush != 1 && flush != 3 {
		lazy = append(lazy, fmt.Sprintf("innodb_flush_log_at_trx_commit = %d", flush))
	}
	if on := logBin == "1" || strings.EqualFold(logBin, "ON"); on && syncBinlog != 1 {
		lazy = append(lazy, fmt.Sprintf("sync_binlog = %d with binary logging on", syncBinlog))
	}
	return lazy, nil
}

// UnsafeStandbys returns the standbys streaming from the server that a
// failover could promote without a commit the server has acknowledged:
// PostgreSQL's asynchronous ones (pg_stat_replication's sync_state async
// or potential), as "replica (async)", and those whose state the role
// cannot read (without pg_read_all_stats), as "replica (sync_state not
// readable)". A standby that holds every acknowledged commit
// (synchronous_standby_names names it, sync or quorum) is not listed. A
// logical replication consumer streams too and is listed: it is never
// promoted, which only the operator knows. None for other dialects.
func (d Dialect) UnsafeStandbys(ctx context.Context, q RowQueryer) ([]string, error) {
	f := d.spec().standbys
	if f == nil {
		return nil, nil
	}
	return f(ctx, q)
}

// pgUnsafeStandbys reads pg_stat_replication for UnsafeStandbys.
func pgUnsafeStandbys(ctx context.Context, q RowQueryer) ([]string, error) {
	var list string
	err := q.QueryRowContext(ctx, `SELECT coalesce(string_agg(coalesce(application_name, '?') || ' (' ||
	coalesce(sync_state, 'sync_state not readable') || ')', ', ' ORDER BY application_name), '')
FROM pg_stat_replication WHERE sync_state IS NULL OR sync_state NOT IN ('sync', 'quorum')`).Scan(&list)
	if err != nil {
		return nil, fmt.Errorf("read the server's standbys (pg_stat_replication): %w", err)
	}
	if list == "" {
		return nil, nil
	}
	return strings.Split(list, ", "), nil
}

// XactLock returns the statement that takes an advisory lock on key (a
// bigint SQL expression, which may use bind parameters) until the running
// transaction ends, so that transactions taking it run one at a time
// (PostgreSQL: pg_advisory_xact_lock). It is "" where the database has no
// such lock: MySQL's GET_LOCK belongs to the session, not the transaction,
// and SQLite's writers take the database's lock anyway.
func (d Dialect) XactLock(key string) string {
	f := d.spec().xactLock
	if f == "" {
		return ""
	}
	return fmt.Sprintf(f, key)
}

// Clock returns an SQL expression of the database clock read when it is
// evaluated, not when the statement began (a lock wait may separate them):
// PostgreSQL's clock_timestamp(), and for MySQL UTC_TIMESTAMP plus the
// time elapsed since the statement began (SYSDATE is read at evaluation
// but in the session's time zone). "" for SQLite.
func (d Dialect) Clock() string { return d.spec().clock }

// UpdateReturning reports whether UPDATE ... RETURNING works (PostgreSQL,
// SQLite; not MySQL or MariaDB, whose UPDATE returns no rows).
func (d Dialect) UpdateReturning() bool { return d.spec().updateReturning }

// OnConflictDoNothing returns the clause that, appended to an INSERT, makes
// a row whose target (a column list) exists already insert nothing and
// raise no error: " ON CONFLICT (target) DO NOTHING". It is "" for MySQL,
// whose INSERT IGNORE also hides other errors: there the INSERT fails and
// UniqueViolation recognises its error.
func (d Dialect) OnConflictDoNothing(target string) string {
	if !d.spec().onConflict {
		return ""
	}
	return " ON CONFLICT (" + target + ") DO NOTHING"
}

// Rebind writes each ? of query as the dialect's n-th bind parameter ($1,
// $2, ... on PostgreSQL; unchanged elsewhere). It is for idsql's own
// statements, which have no ? in literals, identifiers or comments.
func (d Dialect) Rebind(query string) string {
	if d.Bind() != Dollar || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString(d.Placeholder(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Execer runs a statement: *sql.DB, *sql.Conn and *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CommitDurably runs the dialect's DurableCommit statement in tx, when it
// has one, so that tx's commit is durable before it returns.
func (d Dialect) CommitDurably(ctx context.Context, tx Execer) error {
	stmt := d.DurableCommit()
	if stmt == "" {
		return nil
	}
	_, err := tx.ExecContext(ctx, stmt)
	return err
}
