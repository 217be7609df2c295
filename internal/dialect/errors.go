package dialect

import (
	"errors"
	"strings"
)

// The errors of a schema that lacks what a statement names: a table
// idsql's migration creates (idsql_alloc, idsql_workers) before it ran, or
// a key column the configuration names wrongly. Each database reports them
// its own way:
//
//	                 PostgreSQL       MySQL, MariaDB              SQLite
//	no such table    SQLSTATE 42P01   1146 (ER_NO_SUCH_TABLE)     "no such table: t"
//	no such column   SQLSTATE 42703   1054 (ER_BAD_FIELD_ERROR)   "no such column: c"
//
// SQLite gives both the generic code SQLITE_ERROR: only the message tells.

// UndefinedTable reports whether err says a table the statement names
// does not exist.
func (d Dialect) UndefinedTable(err error) bool {
	f := d.spec().undefinedTable
	return err != nil && f != nil && f(err)
}

// UndefinedColumn reports whether err says a column the statement names
// does not exist.
func (d Dialect) UndefinedColumn(err error) bool {
	f := d.spec().undefinedColumn
	return err != nil && f != nil && f(err)
}

// DuplicateColumn reports whether err is the error of adding a column
// that the table has already: an upgrade step of idsql's tables that ran
// before (WorkerSchema).
func (d Dialect) DuplicateColumn(err error) bool {
	f := d.spec().duplicateColumn
	return err != nil && f != nil && f(err)
}

// AnyUndefinedTable reports whether err is UndefinedTable in one of the
// dialects: for an error whose database the caller does not know (a
// segment store passed in on its own).
func AnyUndefinedTable(err error) bool {
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		if d.UndefinedTable(err) {
			return true
		}
	}
	return false
}

// AnyUndefinedColumn is AnyUndefinedTable for UndefinedColumn.
func AnyUndefinedColumn(err error) bool {
	for d := PostgreSQL; int(d) < len(descriptors); d++ {
		if d.UndefinedColumn(err) {
			return true
		}
	}
	return false
}

// sqliteMessage reports whether err is a SQLite driver's error (it has a
// Code) whose message holds text.
func sqliteMessage(err error, text string) bool {
	var c interface{ Code() int }
	return errors.As(err, &c) && strings.Contains(err.Error(), text)
}
