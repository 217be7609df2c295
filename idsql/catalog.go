package idsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// catalog answers the rewriter's questions about a table over the caller's
// own connection, so it sees the same search path and transaction.
type catalog struct{ c *conn }

const (
	// pgColumns resolves the name as PostgreSQL would (search path) and
	// lists its columns in order, with whether each has a default.
	pgColumns = `SELECT a.attname, a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> ''
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`
	// sqliteColumns lists a SQLite table's columns; an INTEGER PRIMARY KEY
	// is the rowid and so has a value without a default clause.
	sqliteColumns = `SELECT name, dflt_value IS NOT NULL OR (pk = 1 AND upper(type) = 'INTEGER')
FROM pragma_table_info(?) ORDER BY cid`
	// mysqlColumns lists a MySQL or MariaDB table's columns in the current
	// database; AUTO_INCREMENT counts as a default.
	mysqlColumns = `SELECT column_name, column_default IS NOT NULL OR extra LIKE '%auto_increment%'
FROM information_schema.columns
WHERE table_schema = coalesce(?, database()) AND table_name = ? ORDER BY ordinal_position`
)

func (cat catalog) Columns(ctx context.Context, schema, table string) ([]rewrite.Column, error) {
	q, ok := cat.c.inner.(driver.QueryerContext)
	if !ok {
		return nil, errors.New("idsql: the inner driver cannot run catalog queries (no QueryerContext)")
	}
	var query, arg string
	args := make([]driver.NamedValue, 1, 2)
	switch cat.c.c.dialect {
	case rewrite.PostgreSQL:
		query, arg = pgColumns, quoteIdent(table)
		if schema != "" {
			arg = quoteIdent(schema) + "." + arg
		}
		args[0] = driver.NamedValue{Ordinal: 1, Value: arg}
	case rewrite.MySQL:
		query, arg = mysqlColumns, table
		var db any
		if schema != "" {
			db, arg = schema, schema+"."+table
		}
		args[0] = driver.NamedValue{Ordinal: 1, Value: db}
		args = append(args, driver.NamedValue{Ordinal: 2, Value: table})
	default:
		if schema != "" && !strings.EqualFold(schema, "main") {
			return nil, fmt.Errorf("idsql: catalog: schema %q: only main is supported for %s", schema, cat.c.c.name)
		}
		query, arg = sqliteColumns, table
		args[0] = driver.NamedValue{Ordinal: 1, Value: arg}
	}
	rows, err := q.QueryContext(ctx, query, args)
	if err != nil {
		return nil, fmt.Errorf("idsql: catalog: columns of %s: %w", arg, err)
	}
	defer rows.Close()
	var cols []rewrite.Column
	dest := make([]driver.Value, 2)
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return cols, nil
			}
			return nil, fmt.Errorf("idsql: catalog: columns of %s: %w", arg, err)
		}
		cols = append(cols, rewrite.Column{Name: asString(dest[0]), HasDefault: asBool(dest[1])})
	}
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func asString(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(v)
}

func asBool(v driver.Value) bool {
	switch v := v.(type) {
	case bool:
		return v
	case int64:
		return v != 0
	case []byte:
		return string(v) == "t" || string(v) == "1"
	case string:
		return v == "t" || v == "1"
	}
	return false
}
