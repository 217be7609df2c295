package dialect

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"strconv"
	"strings"
	"syscall"
)

// Dialect is one database family. The zero value is Unknown; the others
// are PostgreSQL, MySQL and SQLite.
type Dialect uint8

// The dialects.
const (
	Unknown Dialect = iota
	PostgreSQL
	MySQL // MySQL and MariaDB
	SQLite
)

// Default is the dialect of a setting that names none: the rewriter's
// and the engine's zero Config.Dialect.
const Default = PostgreSQL

// Bind is how a dialect writes bind parameters.
type Bind uint8

// Bind styles.
const (
	Dollar   Bind = iota + 1 // $1, $2, ... (PostgreSQL)
	Question                 // ? (MySQL, SQLite)
)

// KeyBack is how an INSERT natively hands back the key the database
// generated.
type KeyBack uint8

// Ways a key comes back.
const (
	Returning    KeyBack = iota + 1 // INSERT ... RETURNING (PostgreSQL has no LastInsertId)
	LastInsertID                    // the result's LastInsertId (MySQL: the AUTO_INCREMENT value; SQLite: the rowid)
)

// spec is the description of one dialect.
type spec struct {
	name    string
	title   string   // the name messages give the database
	aliases []string // other names ByName accepts
	keyBack KeyBack
	quote   byte
	// columns lists a table's columns in order: name, has a default, type.
	// columnArgs gives its arguments for a table in a schema ("": the
	// connection's own).
	columns    string
	columnArgs func(d Dialect, schema, table string) ([]any, error)
	// keyBits reads a catalog column type (lower case, without its
	// arguments): whether its values are integers, and their width in
	// bits.
	keyBits func(base string) (bits int, integer bool)
	// uuidTypes are the catalog types (lower case, arguments kept, no
	// spaces) of the key columns that hold UUID keys, and how; uuidFix
	// names them in errors.
	uuidTypes map[string]UUIDStorage
	uuidFix   string
	// widen is a format (table, column) of the statement that makes a key
	// column 64-bit.
	widen string
	// durable is the statement that makes the running transaction's commit
	// durable whatever the server's and the session's settings; lazyCheck
	// says the server's settings decide instead (see LazyCommits).
	durable     string
	durableExpr string
	lazyCheck   bool
	// standbys lists the servers a failover may promote that can lack a
	// commit the server acknowledged (see UnsafeStandbys); nil: the
	// dialect has no such question.
	standbys func(ctx context.Context, q RowQueryer) ([]string, error)
	// xactLock is a format (a bigint expression) of the statement that
	// takes an advisory lock held until the transaction ends.
	xactLock string
	// clock is the database clock, read when the expression is evaluated.
	clock string
	// updateReturning: UPDATE ... RETURNING works.
	updateReturning bool
	// onConflict: INSERT ... ON CONFLICT (target) DO NOTHING works.
	onConflict    bool
	unique        func(error) bool
	serialization func(error) bool
	lost          func(error) bool
	// undefinedTable and undefinedColumn tell the errors of a statement
	// naming a table or column that does not exist.
	undefinedTable, undefinedColumn func(error) bool
	// duplicateColumn tells the error of adding a column that exists,
	// which an upgrade of idsql's own tables takes as done.
	duplicateColumn func(error) bool
	// shapeSchema creates idsql_shapes.
	shapeSchema []string
	// ignoreVerb starts an INSERT that leaves a row whose key exists
	// alone; ignoreTail, a format of the key's columns, ends it.
	ignoreVerb, ignoreTail string
	// rangePartitions: a table can be partitioned by ranges of its key
	// with one statement per part (PostgreSQL's declarative partitions);
	// maxIdent is how many bytes of an identifier the database keeps
	// (0: no limit idsql needs to know).
	rangePartitions bool
	maxIdent        int
}

// descriptor is everything idsql asks of one database, answered in the
// database's own file (postgres.go, mysql.go, sqlite.go):
// TestDescriptorsAnswerEveryQuestion reads those files and fails on a
// question one leaves out.
type descriptor struct {
	spec       spec          // how its SQL is written and its errors read
	syntax     Syntax        // how it reads a statement's text
	facts      facts         // where idsql keeps records, DSNs, drivers
	statements statementSpec // what the statement engine asks
	registry   registrySpec  // the worker table; empty where there is none
	// defaults writes the database-side defaults; nil where there are
	// none.
	defaults *defaultSQL
	// drivers are the database/sql drivers ForDriver knows as this
	// database's, by package path and type name (matched by reflection,
	// so that no driver is imported or registered because of this list).
	drivers []driverType
}

type driverType struct{ pkg, typ string }

var unknownDescriptor = descriptor{spec: spec{name: "unknown"}}

// descriptors holds each dialect's descriptor, by Dialect. It is filled
// in init: the descriptors' functions call the dialect's methods, which
// read it.
var descriptors [SQLite + 1]*descriptor

func init() {
	descriptors = [...]*descriptor{
		Unknown:    &unknownDescriptor,
		PostgreSQL: &postgresDescriptor,
		MySQL:      &mysqlDescriptor,
		SQLite:     &sqliteDescriptor,
	}
}

func (d Dialect) descriptor() *descriptor {
	if int(d) < len(descriptors) {
		return descriptors[d]
	}
	return &unknownDescriptor
}

// String returns the dialect's name.
func (d Dialect) String() string {
	if int(d) < len(descriptors) {
		return descriptors[d].spec.name
	}
	return "Dialect(" + strconv.Itoa(int(d)) + ")"
}

func (d Dialect) spec() *spec { return &d.descriptor().spec }

// Names lists the names of the dialects, as ByName and the `dialect:`
// setting take them.
func Names() []string { return []string{"postgres", "mysql", "sqlite"} }

// ByName returns the dialect called name: postgres (or postgresql, pgx),
// mysql (or mariadb), sqlite (or sqlite3), in any case.
func ByName(name string) (Dialect, error) {
	n := strings.ToLower(name)
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		if s := d.spec(); n == s.name || contains(s.aliases, n) {
			return d, nil
		}
	}
	return Unknown, fmt.Errorf("dialect: unknown dialect %q (want %s)", name, strings.Join(Names(), ", "))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ForDriver returns the dialect of a known driver, or Unknown: the one a
// driver that wraps another tells (Teller, as idsql's wrapped driver does),
// else the one of a driver this package knows by its type. It never guesses
// from names: a driver wrapped by another package (tracing, pooling) is
// Unknown, and the caller must be told the dialect.
func ForDriver(drv driver.Driver) Dialect {
	if drv == nil {
		return Unknown
	}
	if t, ok := drv.(Teller); ok {
		return t.Dialect()
	}
	t := reflect.TypeOf(drv)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		for _, k := range descriptors[d].drivers {
			if t.PkgPath() == k.pkg && t.Name() == k.typ {
				return d
			}
		}
	}
	return Unknown
}

// Known reports whether d is one of the dialects (not Unknown).
func (d Dialect) Known() bool { return d != Unknown && int(d) < len(descriptors) }

// DriverType names a driver's type for messages ("*pq.Driver").
func DriverType(drv driver.Driver) string { return fmt.Sprintf("%T", drv) }

// Bind returns the dialect's bind parameter style.
func (d Dialect) Bind() Bind { return d.descriptor().syntax.Bind }

// KeyBack returns how the database natively hands back a generated key.
func (d Dialect) KeyBack() KeyBack { return d.spec().keyBack }

// Placeholder returns the n-th (from 1) bind parameter: $n or ?.
func (d Dialect) Placeholder(n int) string {
	if d.Bind() == Dollar {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

// Quote quotes an identifier: "name" (PostgreSQL, SQLite) or `name`
// (MySQL; backticks work whatever the sql_mode), doubling the quote
// character inside.
func (d Dialect) Quote(ident string) string {
	q := string(d.spec().quote)
	if q == "\x00" {
		q = `"`
	}
	return q + strings.ReplaceAll(ident, q, q+q) + q
}

// QuoteQualified quotes each part of a configured name (orders,
// shop.orders, "Mixed Case", shop."Order Items"; see SplitQualified). A
// name that is not of that form is split at its dots.
func (d Dialect) QuoteQualified(name string) string {
	parts := nameParts(name)
	for i, p := range parts {
		parts[i] = d.Quote(p)
	}
	return strings.Join(parts, ".")
}

// nameParts splits a configured name as SplitQualified does, or at its
// dots when it is not of that form.
func nameParts(name string) []string {
	if parts, ok := SplitQualified(name); ok {
		return parts
	}
	return strings.Split(name, ".")
}

// QuoteIdent is Quote for a name read from configuration: an empty name,
// or one holding a NUL byte, is an error.
func (d Dialect) QuoteIdent(ident string) (string, error) {
	if ident == "" || strings.ContainsRune(ident, 0) {
		return "", fmt.Errorf("dialect: invalid identifier %q", ident)
	}
	return d.Quote(ident), nil
}

// QuoteTable is QuoteQualified for a table name read from configuration,
// [schema.]table: a name of more than two parts, or with a part QuoteIdent
// refuses, is an error.
func (d Dialect) QuoteTable(name string) (string, error) {
	parts := nameParts(name)
	if len(parts) > 2 {
		return "", fmt.Errorf("dialect: invalid table name %q", name)
	}
	for i, p := range parts {
		q, err := d.QuoteIdent(p)
		if err != nil {
			return "", fmt.Errorf("dialect: invalid table name %q", name)
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}

// Columns returns the catalog query that lists a table's columns in table
// order, and its arguments. Each row holds the column's name (text),
// whether it has a value without one in the INSERT (a default,
// AUTO_INCREMENT, an identity, a generated column, SQLite's rowid) as the
// driver scans a truth value (bool, or 0 and 1), and its type as the
// database spells it (text: "bigint", "int(11)", "INTEGER").
// No row means no such table.
//
// An empty schema means the connection's own resolution: PostgreSQL's
// search path, MySQL's current database, SQLite's main database (the only
// schema supported for SQLite).
func (d Dialect) Columns(schema, table string) (string, []any, error) {
	s := d.spec()
	if s.columnArgs == nil {
		return "", nil, fmt.Errorf("dialect: no catalog for dialect %s", d)
	}
	args, err := s.columnArgs(d, schema, table)
	if err != nil {
		return "", nil, err
	}
	return s.columns, args, nil
}

// KeyBits reads a column type as the catalog (Columns) spells it
// ("integer", "int(11)", "int(10) unsigned", "bigint", "numeric(5,0)",
// "text"): whether its values are integers, and their width in bits.
// SQLite's integers are all 64-bit; there a declared type whose affinity
// turns integers into text or floating point (TEXT, VARCHAR, REAL, ...) is
// not an integer type.
func (d Dialect) KeyBits(typ string) (bits int, integer bool) {
	t := strings.ToLower(strings.TrimSpace(typ))
	if i := strings.IndexAny(t, "( "); i >= 0 {
		t = t[:i]
	}
	return d.spec().keyBits(t)
}

// namedInts returns a keyBits that knows the integer types named in widths
// and takes every other type for one that is not an integer.
func namedInts(widths map[string]int) func(string) (int, bool) {
	return func(base string) (int, bool) {
		bits, ok := widths[base]
		return bits, ok
	}
}

// WidenKey returns the statement (or, for MySQL, its outline) that makes
// a key column 64-bit, for error messages.
func (d Dialect) WidenKey(table, column string) string {
	w := d.spec().widen
	if w == "" {
		return ""
	}
	return fmt.Sprintf(w, d.QuoteQualified(table), d.Quote(column))
}

// UniqueViolation reports whether err is a unique or primary key
// violation.
func (d Dialect) UniqueViolation(err error) bool {
	f := d.spec().unique
	return err != nil && f != nil && f(err)
}

// SerializationFailure reports whether err is a conflict that rolled the
// transaction back and that a retry of the whole transaction may not meet:
// a serialization failure or a deadlock.
func (d Dialect) SerializationFailure(err error) bool {
	f := d.spec().serialization
	return err != nil && f != nil && f(err)
}

// ConnectionLost reports whether err says the connection to the server is
// gone (reset, closed, killed, server shut down). A statement sent before
// it may or may not have been executed.
func (d Dialect) ConnectionLost(err error) bool {
	f := d.spec().lost
	if err == nil {
		return false
	}
	if f == nil {
		return transportLost(err)
	}
	return f(err)
}

// sqlState returns the SQLSTATE of a PostgreSQL error (lib/pq's *Error and
// pgx's *PgError both have the method), or "".
func sqlState(err error) string {
	var s interface{ SQLState() string }
	if errors.As(err, &s) {
		return s.SQLState()
	}
	return ""
}

// mysqlPkg is go-sql-driver/mysql's package path. Its errors are
// recognised by reflection, as its driver is (see drivers), so that this
// package, which every part of idsql imports, links no MySQL driver.
const mysqlPkg = "github.com/go-sql-driver/mysql"

// mysqlNumber returns the error number of a MySQL server error, or 0:
// the Number of a *mysql.MySQLError in err's chain.
func mysqlNumber(err error) uint16 {
	var n uint16
	inChain(err, func(e error) bool {
		v := reflect.ValueOf(e)
		if v.Kind() != reflect.Pointer || v.IsNil() {
			return false
		}
		t := v.Type().Elem()
		if t.Kind() != reflect.Struct || t.PkgPath() != mysqlPkg || t.Name() != "MySQLError" {
			return false
		}
		f := v.Elem().FieldByName("Number")
		if !f.IsValid() || !f.CanUint() {
			return false
		}
		n = uint16(f.Uint())
		return true
	})
	return n
}

// mysqlInvalidConn reports whether err's chain holds go-sql-driver/mysql's
// ErrInvalidConn, a plain errors.New value: it is recognised by its type
// and its message, "invalid connection".
func mysqlInvalidConn(err error) bool {
	return inChain(err, func(e error) bool {
		return reflect.TypeOf(e).String() == "*errors.errorString" && e.Error() == "invalid connection"
	})
}

// inChain reports whether f holds for err or an error it wraps (Unwrap()
// error, Unwrap() []error), visited depth first as errors.As does.
func inChain(err error, f func(error) bool) bool {
	for err != nil {
		if f(err) {
			return true
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				if inChain(e, f) {
					return true
				}
			}
			return false
		default:
			return false
		}
	}
	return false
}

// sqliteCode returns the extended result code of a modernc.org/sqlite
// error.
func sqliteCode(err error) (int, bool) {
	var c interface{ Code() int }
	if errors.As(err, &c) {
		return c.Code(), true
	}
	return 0, false
}

// transportLost reports errors of the connection itself, whatever the
// driver.
func transportLost(err error) bool {
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.As(err, &ne)
}

// SQLModeQuery reads a MySQL session's sql_mode.
const SQLModeQuery = "SELECT @@SESSION.sql_mode"

// SQLMode holds the MySQL sql_mode flags that change how a statement is
// read.
type SQLMode struct {
	// NoBackslashEscapes: backslash is a plain character in string
	// literals (NO_BACKSLASH_ESCAPES).
	NoBackslashEscapes bool
	// ANSIQuotes: "..." quotes an identifier, not a string (ANSI_QUOTES,
	// also implied by the combination modes ANSI, DB2, MAXDB, MSSQL, ORACLE
	// and POSTGRESQL).
	ANSIQuotes bool
}

// ParseSQLMode reads the value of @@sql_mode (a comma-separated list).
func ParseSQLMode(mode string) SQLMode {
	var m SQLMode
	for _, f := range strings.Split(mode, ",") {
		switch strings.ToUpper(strings.TrimSpace(f)) {
		case "NO_BACKSLASH_ESCAPES":
			m.NoBackslashEscapes = true
		case "ANSI_QUOTES", "ANSI", "DB2", "MAXDB", "MSSQL", "ORACLE", "POSTGRESQL":
			m.ANSIQuotes = true
		}
	}
	return m
}
