package dialect

import "strings"

// What the statement engine (idsql/internal/engine) and the front doors
// need to know of a database beyond how it is written: how its catalog
// names compare, whether a session's settings change how a statement is
// read, and what its results say about keys.

// statementSpec is the per-dialect part of this file.
type statementSpec struct {
	// foldColumns: column names compare without case (MySQL, SQLite);
	// PostgreSQL's catalog holds the exact, already folded, name.
	foldColumns bool
	// sessionMode: the session's sql_mode changes how statements are read
	// (MySQL: NO_BACKSLASH_ESCAPES, ANSI_QUOTES).
	sessionMode bool
	// autoIncrementID: LastInsertId is the server's AUTO_INCREMENT value,
	// which a statement whose generated keys are not known to be written
	// answers as it would without idsql (MySQL).
	autoIncrementID bool
	// countsUpdates: an upsert's affected-rows count tells an insert (1)
	// from an update (2) and an unchanged row (0), unless the client asked
	// for found rows (MySQL's CLIENT_FOUND_ROWS).
	countsUpdates bool
}

func (d Dialect) statement() *statementSpec { return &d.descriptor().statements }

// SameColumn reports whether a column name read from the catalog names the
// configured column: exactly on PostgreSQL, whose catalog holds the folded
// name, and without regard to case on MySQL and SQLite.
func (d Dialect) SameColumn(catalogName, configured string) bool {
	if d.statement().foldColumns {
		return strings.EqualFold(catalogName, configured)
	}
	return catalogName == configured
}

// SessionMode reports whether a session's sql_mode changes how statements
// are read (MySQL): a connection then reads it with SQLModeQuery when it
// opens and after a statement that SetsSQLMode.
func (d Dialect) SessionMode() bool { return d.statement().sessionMode }

// SetsSQLMode reports whether a statement may change a session's sql_mode
// (SET [SESSION] sql_mode = ..., SET @@sql_mode = ...), on a dialect
// whose SessionMode matters. It costs a prefix check for every other
// statement.
func (d Dialect) SetsSQLMode(query string) bool {
	if !d.statement().sessionMode {
		return false
	}
	q := strings.TrimLeft(query, " \t\r\n")
	if len(q) < 4 || !strings.EqualFold(q[:3], "set") {
		return false
	}
	return strings.Contains(strings.ToLower(q), "sql_mode")
}

// AutoIncrementID reports whether a result's LastInsertId is the server's
// AUTO_INCREMENT value (MySQL), which an INSERT whose generated keys are
// not known to be written answers unchanged.
func (d Dialect) AutoIncrementID() bool { return d.statement().autoIncrementID }

// CountsUpdates reports whether an upsert's affected-rows count tells an
// inserted row (1) from an updated one (2) and an unchanged one (0), as
// MySQL and MariaDB count unless the client asks for found rows
// (CLIENT_FOUND_ROWS; go-sql-driver/mysql's clientFoundRows=true).
func (d Dialect) CountsUpdates(foundRows bool) bool {
	return d.statement().countsUpdates && !foundRows
}

// FoundRowsDSN reports whether a DSN asks the server for found rows
// (go-sql-driver/mysql's clientFoundRows=true), which changes what an
// upsert's affected-rows count says (CountsUpdates). Only MySQL has the
// setting; other dialects answer false.
func (d Dialect) FoundRowsDSN(dsn string) bool {
	if !d.statement().countsUpdates {
		return false
	}
	_, params, ok := strings.Cut(dsn, "?")
	if !ok {
		return false
	}
	for _, kv := range strings.Split(params, "&") {
		k, v, _ := strings.Cut(kv, "=")
		if k == "clientFoundRows" {
			switch v {
			case "1", "true", "TRUE", "True":
				return true
			}
			return false
		}
	}
	return false
}
