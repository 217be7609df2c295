// Package dialect describes, once per database, what idsql's SQL depends
// on: PostgreSQL, MySQL (MariaDB included) and SQLite. Everything that
// differs between them lives in one descriptor per database, in the
// database's own file (postgres.go, mysql.go, sqlite.go), reached through
// a Dialect value; the rest of idsql (the rewriter, the segment stores,
// the worker registry, the catalog checks, Migrate) asks it rather than
// decide by database itself. A descriptor answers every question: a test
// reads the three files and fails on a field one leaves out.
//
//	             PostgreSQL            MySQL / MariaDB              SQLite
//	name         postgres              mysql                        sqlite
//	parameters   $1, $2, ...           ?                            ?
//	identifiers  "name"                `name`                       "name"
//	strings      '...', E'...' escapes '...' with \ escapes unless  '...'
//	                                   NO_BACKSLASH_ESCAPES
//	catalog      pg_attribute          information_schema.columns   pragma_table_info
//	key back     RETURNING             LastInsertId                 LastInsertId (or RETURNING)
//	UPDATE       RETURNING             no RETURNING                 RETURNING
//	skip a       ON CONFLICT           plain INSERT, its unique     ON CONFLICT
//	duplicate    DO NOTHING            violation classified         DO NOTHING
//	unique       SQLSTATE 23505        1062, 1586, 1022, 1169       2067, 1555
//	serialize    40001, 40P01          1213 (deadlock), 1020        SQLITE_BUSY (5, 517, ...)
//	conn lost    class 08, 57P0x       invalid connection, 1053,    -
//	                                   1927, 2006, 2013, 4031
//	durable      SET LOCAL             server settings checked      synchronous pragma,
//	commit       synchronous_commit    (LazyCommits)                set at open
//	xact lock    pg_advisory_xact_lock -                            -
//	clock        clock_timestamp()     UTC_TIMESTAMP(6) + elapsed   -
//
// A Dialect is chosen once: from the *sql.DB in use (Of), from its
// database/sql driver (ForDriver knows lib/pq, pgx's stdlib,
// go-sql-driver/mysql, modernc.org/sqlite and mattn/go-sqlite3 by their
// types, and a wrapping driver that tells its dialect, as idsql's does,
// through Teller), or by name (ByName, for a `dialect:` setting). A driver
// it does not know gets no guess: Of returns an error wrapping
// ErrUnknownDriver and the caller asks for the setting.
//
//	d, err := dialect.Of(db)
//	if err != nil {
//		return fmt.Errorf("%w; set dialect: postgres, mysql or sqlite", err)
//	}
//	q := d.Rebind("SELECT 1 FROM " + d.QuoteQualified("shop.orders") + " WHERE id = ?")
//	...
//	if d.UniqueViolation(err) { ... }
//
// The error classifiers look through wrapped errors (as errors.As does).
// They know lib/pq's and pgx's errors (anything with an SQLState method),
// go-sql-driver/mysql's *MySQLError and ErrInvalidConn (recognised by
// reflection, so that this package, which every part of idsql imports,
// links no MySQL driver) and modernc.org/sqlite's errors (anything with a
// Code method); a connection lost is also recognised from
// database/sql/driver.ErrBadConn, io.EOF and network errors.
//
// Beyond the SQL, facts.go answers what idsql's root package and programs
// would otherwise decide by comparing dialects: whether the worker table can live
// in such a database (HasWorkerTable), whether the segment store must be
// a database apart (SegmentStoreApart, SQLite), the driver idsql's
// programs open it with (DriverName) and sqlx's name for its bind style
// (SQLXName), the dialect of a --dsn (ForDSN), whether the server behind
// a connection lacks sequences (Sequenceless: MySQL 8, not MariaDB), and
// one dialect per quoting style for a database of unknown dialect
// (QuoteStyles).
//
// KeyPartitions (partitions.go) writes the statements that attach
// key-range partitions to a table partitioned by range of its key, as
// PostgreSQL's declarative partitioning spells them (idsql partitions).
//
// Syntax (syntax.go) is how a database reads a statement's text, as
// flags the rewriter reads instead of the database's name: quotes,
// escapes, comments, parameters and the INSERT forms it accepts.
//
// MySQL's lexical rules depend on the session's sql_mode: SQLModeQuery
// reads it and ParseSQLMode picks out the two flags that change how
// statements are read (NO_BACKSLASH_ESCAPES, ANSI_QUOTES).
package dialect
