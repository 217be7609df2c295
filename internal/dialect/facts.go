package dialect

import (
	"context"
	"fmt"
	"strings"
)

// facts are what idsql's programs and its root package ask of a dialect
// beyond how its SQL is written (spec): where idsql keeps its records on
// such a database, how a DSN of it looks, which driver opens it, and what
// a server of it can do. Each question is answered here, once per
// dialect, so no caller compares dialects to answer it.
type facts struct {
	// segmentStoreApart: the segment store must be a database of its own,
	// never the application's: SQLite lets one connection write to a file
	// at a time, so an allocation would wait for the application's
	// transaction that waits for the key.
	segmentStoreApart bool
	// driverName is the database/sql name of the driver idsql's programs
	// (cmd/idsql, the integration processes) link for the dialect.
	driverName string
	// sqlxName is a driver name sqlx knows for the dialect's bind style.
	sqlxName string
	// dsn reports whether a DSN is of the dialect's form (nil: none is
	// recognised).
	dsn func(dsn string) bool
	// sequenceless returns, from the server's VERSION(), the name of a
	// server of the dialect that has no sequences ("MySQL 8.0.36"), or ""
	// (nil: the dialect decides without asking the server).
	sequenceless func(version string) string
	// pgWire: servers of the dialect speak PostgreSQL's wire protocol,
	// the one pgx speaks.
	pgWire bool
	// driverDSN turns a DSN in a form idsql's programs take but the
	// dialect's driver does not (a mysql:// URL) into the driver's form;
	// nil: every DSN goes to the driver as it is.
	driverDSN func(dsn string) (string, error)
	// connectHint says how to mend a connection failure the dialect's
	// drivers report without saying how (a server without TLS asked for
	// it), or ""; nil: none is known.
	connectHint func(msg string) string
	// splitStatement reports whether an error's words say that the parts
	// of one statement reached different server connections, as a pooler
	// in transaction mode does to prepared statements; splitHint says how
	// to mend it (nil: no such pooler is known for the dialect).
	splitStatement func(msg string) bool
	splitHint      string
	// grants are the statements (formats of the role) that give an
	// application's role what idsql does at run time on idsql's tables;
	// denied reports whether an error's words say a privilege is missing.
	// Both nil where the database has no privileges (SQLite).
	grants []string
	denied func(msg string) bool
	// multiWriter names a server that takes writes on several nodes whose
	// locks are each node's own (a Galera cluster), or ""; nil: the
	// dialect has none.
	multiWriter func(ctx context.Context, q RowQueryer) (string, error)
	// catchUp is the statement that waits until a multi-writer node has
	// applied every write the cluster committed before it ("": none).
	catchUp string
}

func (d Dialect) facts() *facts { return &d.descriptor().facts }

// SegmentStoreApart reports whether the segment store must be a database
// of its own rather than the application's (SQLite: one connection writes
// to a file at a time, so a range allocated inside the application's file
// would wait for the transaction that waits for the key).
func (d Dialect) SegmentStoreApart() bool { return d.facts().segmentStoreApart }

// DriverName returns the database/sql driver name that idsql's programs
// link for the dialect: "postgres" (lib/pq), "mysql"
// (go-sql-driver/mysql) or "sqlite" (modernc.org/sqlite); "" for Unknown.
func (d Dialect) DriverName() string { return d.facts().driverName }

// SQLXName returns a driver name from which sqlx derives the dialect's
// bind style: "postgres" ($1), "mysql" or "sqlite3" (?).
func (d Dialect) SQLXName() string { return d.facts().sqlxName }

// DriverDSN returns dsn in the form the dialect's driver reads: a MySQL
// or MariaDB URL (mysql://user:pass@host:port/db?params, mariadb://...)
// becomes go-sql-driver's user:pass@tcp(host:port)/db?params (port 3306
// when none is given); any other DSN is returned as it is.
func (d Dialect) DriverDSN(dsn string) (string, error) {
	if f := d.facts().driverDSN; f != nil {
		return f(dsn)
	}
	return dsn, nil
}

// ConnectError returns err, a failure to connect to a database of the
// dialect, saying that it happened while connecting (to where, a DSN with
// its password hidden; "" names the dialect's database) and, where the
// driver's words do not say how to mend it, how.
func (d Dialect) ConnectError(err error, where string) error {
	if where == "" {
		where = "the database"
		if t := d.descriptor().spec.title; t != "" {
			where = "the " + t + " database"
		}
	}
	hint := ""
	if f := d.facts().connectHint; f != nil {
		if h := f(err.Error()); h != "" {
			hint = "; " + h
		}
	}
	return fmt.Errorf("connect to %s: %w%s", where, err, hint)
}

// SplitStatement returns err, saying how to mend it when its words show
// that the parts of one statement reached different server connections:
// what PgBouncer in transaction (or statement) mode does to a prepared
// statement, which lib/pq and pgx make unless told otherwise. Any other
// error, and nil, is returned as it is.
func (d Dialect) SplitStatement(err error) error {
	f := d.facts().splitStatement
	if err == nil || f == nil || !f(err.Error()) {
		return err
	}
	return fmt.Errorf("%w; %s", err, d.facts().splitHint)
}

// MultiWriter returns what the server behind q is when it is one node of
// a cluster that takes writes on every node and whose locks are each
// node's own ("a Galera cluster (wsrep_on = ON)"), or "": MariaDB with
// wsrep on. A server without the setting (MySQL) is not one.
func (d Dialect) MultiWriter(ctx context.Context, q RowQueryer) (string, error) {
	f := d.facts().multiWriter
	if f == nil {
		return "", nil
	}
	return f(ctx, q)
}

// CatchUp waits, on a node of a multi-writer cluster (MultiWriter), until
// the node has applied every write the cluster committed before the call
// (Galera's causality check, wsrep_sync_wait): what idsql reads on the
// node next is at least that recent, also on a node that has just taken
// over the writes of one that failed. Elsewhere it does nothing.
func (d Dialect) CatchUp(ctx context.Context, ex Execer) error {
	q := d.facts().catchUp
	if q == "" {
		return nil
	}
	_, err := ex.ExecContext(ctx, q)
	return err
}

// RuntimeGrants returns the statements that give role (as the database
// writes it: app, or 'app'@'%' on MySQL) every privilege idsql uses at run
// time on its own tables: leases in the worker table, segment ranges and
// their log, the shape records. Migrate and the database-side defaults
// run as the tables' owner; the application's own tables need INSERT
// (and what its statements need) on top. None for SQLite.
func (d Dialect) RuntimeGrants(role string) []string {
	out := make([]string, len(d.facts().grants))
	for i, g := range d.facts().grants {
		out[i] = fmt.Sprintf(g, role)
	}
	return out
}

// Denied returns err, saying how to mend it when its words show that the
// role lacks a privilege: idsql's runtime grants (RuntimeGrants), which
// `idsql migrate --print-grants ROLE` prints. Any other error, and nil,
// is returned as it is.
func (d Dialect) Denied(err error) error {
	f := d.facts().denied
	if err == nil || f == nil || !f(err.Error()) {
		return err
	}
	return fmt.Errorf("%w; the role lacks a privilege idsql uses: `idsql migrate --print-grants ROLE` prints the grants it needs on its tables", err)
}

// ForDSN returns the dialect of a DSN as idsql's programs take it
// (--dsn): mysql:// and mariadb:// URLs and go-sql-driver's
// user:pass@tcp(host:port)/db form are MySQL; sqlite: and sqlite3: (a
// file path follows) are SQLite; anything else is PostgreSQL, as lib/pq
// reads it (postgres:// URLs, key=value), which says what is wrong with a
// DSN that is none.
func ForDSN(dsn string) Dialect {
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		if f := d.facts().dsn; f != nil && f(dsn) {
			return d
		}
	}
	return PostgreSQL
}

// Sequenceless returns the name and version of the server behind q when
// it is of a flavour of the dialect that has no sequences, so that
// database-side defaults, which need them, cannot be installed there:
// "MySQL 8.0.36" (MariaDB has them). It is "" for a server that has them,
// and, without asking the server, for a dialect whose answer does not
// depend on it (PostgreSQL has sequences; SQLite's DBDefault refuses by
// itself).
func (d Dialect) Sequenceless(ctx context.Context, q RowQueryer) (string, error) {
	f := d.facts().sequenceless
	if f == nil {
		return "", nil
	}
	var version string
	if err := q.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		return "", fmt.Errorf("dialect: %s: read the server version: %w", d, err)
	}
	return f(version), nil
}

// QuoteStyles returns one dialect per way of quoting identifiers ("name",
// `name`), for probing a table on a database whose dialect is unknown.
func QuoteStyles() []Dialect {
	var out []Dialect
	seen := map[byte]bool{}
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		if q := d.spec().quote; !seen[q] {
			seen[q] = true
			out = append(out, d)
		}
	}
	return out
}

// hasPrefixFold reports whether s begins with one of the prefixes, in any
// case.
func hasPrefixFold(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// SpeaksPgWire reports whether servers of the dialect speak PostgreSQL's
// wire protocol, which pgx (and so idsql/pgxid) speaks.
func (d Dialect) SpeaksPgWire() bool { return d.facts().pgWire }
