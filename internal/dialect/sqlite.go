package dialect

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strings"
)

// sqliteDescriptor answers every question idsql asks of SQLite.
var sqliteDescriptor = descriptor{
	spec: spec{
		name:    "sqlite",
		title:   "SQLite",
		aliases: []string{"sqlite3"},
		keyBack: LastInsertID,
		quote:   '"',
		// An INTEGER PRIMARY KEY is the rowid: it has a value without a
		// default clause.
		columns: `SELECT name, dflt_value IS NOT NULL OR (pk = 1 AND upper(type) = 'INTEGER'), type
FROM pragma_table_info(?) ORDER BY cid`,
		// Every SQLite integer is 64-bit, whatever the declared type; a
		// type of text or real affinity stores a key as text or as a
		// float, losing it above 2^53.
		keyBits:         sqliteKeyBits,
		uuidTypes:       map[string]UUIDStorage{"blob": UUIDBytes, "text": UUIDText},
		uuidFix:         "declare it BLOB (the 16 bytes) or TEXT (the canonical text)",
		updateReturning: true, // since SQLite 3.35
		onConflict:      true,
		unique: func(err error) bool {
			c, ok := sqliteCode(err)
			return ok && (c == 2067 || c == 1555) // SQLITE_CONSTRAINT_UNIQUE, _PRIMARYKEY
		},
		serialization: func(err error) bool {
			c, ok := sqliteCode(err)
			return ok && c&0xff == 5 // SQLITE_BUSY and its extended codes (BUSY_SNAPSHOT, ...)
		},
		lost: func(err error) bool { return errors.Is(err, driver.ErrBadConn) },
		columnArgs: func(d Dialect, schema, table string) ([]any, error) {
			if schema != "" && !strings.EqualFold(schema, "main") {
				return nil, fmt.Errorf("dialect: sqlite: schema %q: only main is supported", schema)
			}
			return []any{table}, nil
		},
		undefinedTable:  func(err error) bool { return sqliteMessage(err, "no such table") },
		undefinedColumn: func(err error) bool { return sqliteMessage(err, "no such column") },
		duplicateColumn: func(err error) bool { return sqliteMessage(err, "duplicate column name") },
		shapeSchema:     textShapeSchema,
		ignoreVerb:      "INSERT OR IGNORE INTO",
		ignoreTail:      "",
		rangePartitions: false,
		maxIdent:        0,
		// Its column type is not read for width, and no server setting
		// weakens a commit; no advisory locks and no server clock.
		widen:       "",
		durable:     "",
		durableExpr: "",
		lazyCheck:   false,
		standbys:    nil,
		xactLock:    "",
		clock:       "",
	},
	// The rules SQLite and MySQL agree on, with every construct they
	// read differently refused.
	syntax: Syntax{
		Bind:                 Question,
		FoldUnquoted:         false,
		BacktickQuotes:       true,
		BracketQuotes:        true,
		DoubleQuotedStrings:  false,
		BackslashEscapes:     false,
		RefuseBackslash:      true,
		EscapeStrings:        false,
		DollarQuotes:         false,
		DigitWords:           false,
		RefuseNUL:            false,
		RefuseNamedParams:    true,
		RefuseNumberedParams: true,
		HashComments:         HashRefused,
		DashComments:         DashRefusedUnspaced,
		BlockComments:        BlockFlat,
		Replace:              true,
		InsertModifiers:      true,
		InsertOr:             true,
		MySQLInsert:          false,
		TypeCasts:            false,
		SpliceQuote:          '`',
		AlwaysQuote:          false,
	},
	facts: facts{
		segmentStoreApart: true,
		driverName:        "sqlite",
		sqlxName:          "sqlite3",
		dsn:               func(dsn string) bool { return hasPrefixFold(dsn, "sqlite:", "sqlite3:") },
		pgWire:            false,
		// No SQLite has sequences.
		sequenceless: nil,
		// A file: no URL form to turn, no network to fail.
		driverDSN:      nil,
		connectHint:    nil,
		splitStatement: nil,
		splitHint:      "",
		// A file's permissions, not the database's: no grants.
		grants:      nil,
		denied:      nil,
		multiWriter: nil,
		catchUp:     "",
	},
	statements: statementSpec{
		foldColumns:     true,
		sessionMode:     false,
		autoIncrementID: false,
		countsUpdates:   false,
	},
	registry: registrySpec{},
	// No sequences: no database-side defaults.
	defaults: nil,
	drivers: []driverType{
		{"modernc.org/sqlite", "Driver"},
		{"github.com/mattn/go-sqlite3", "SQLiteDriver"},
	},
}

// sqliteKeyBits reads a declared column type by SQLite's affinity rules
// (https://sqlite.org/datatype3.html, 3.1): INT anywhere in it is integer
// affinity; CHAR, CLOB or TEXT text; REAL, FLOA or DOUB real. Integer,
// numeric and blob affinities (and no type at all) keep an integer as a
// 64-bit integer; text and real do not.
func sqliteKeyBits(base string) (int, bool) {
	switch {
	case strings.Contains(base, "int"):
		return 64, true
	case strings.Contains(base, "char"), strings.Contains(base, "clob"), strings.Contains(base, "text"),
		strings.Contains(base, "real"), strings.Contains(base, "floa"), strings.Contains(base, "doub"):
		return 0, false
	}
	return 64, true
}
