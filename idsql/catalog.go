package idsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// ErrNarrowKey is wrapped by the error refusing an INSERT whose key column
// cannot hold idsql's 64-bit keys (a MySQL INT, a PostgreSQL integer): the
// keys would be refused by the server or, in MySQL without a strict
// sql_mode, silently clamped to the column's largest value.
var ErrNarrowKey = dialect.ErrNarrowKey

// catalog answers the rewriter's questions about a table over the caller's
// own connection, so it sees the same search path, database and
// transaction.
type catalog struct{ c *conn }

// column is one column as the dialect's catalog query describes it.
type column struct {
	name       string
	hasDefault bool
	typ        string
}

// columns lists a table's columns in order; none when there is no such
// table.
func (cat catalog) columns(ctx context.Context, schema, table string) ([]column, error) {
	name := table
	if schema != "" {
		name = schema + "." + table
	}
	query, args, err := cat.c.c.dialect.Columns(schema, table)
	if err != nil {
		return nil, fmt.Errorf("idsql: catalog: columns of %s: %w", name, err)
	}
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	rows, err := cat.c.query(ctx, query, nv)
	if err != nil {
		return nil, fmt.Errorf("idsql: catalog: columns of %s: %w", name, err)
	}
	defer rows.Close()
	var cols []column
	dest := make([]driver.Value, 3)
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return cols, nil
			}
			return nil, fmt.Errorf("idsql: catalog: columns of %s: %w", name, err)
		}
		cols = append(cols, column{name: asString(dest[0]), hasDefault: asBool(dest[1]), typ: asString(dest[2])})
	}
}

// Columns implements rewrite.Catalog.
func (cat catalog) Columns(ctx context.Context, schema, table string) ([]rewrite.Column, error) {
	cols, err := cat.columns(ctx, schema, table)
	if err != nil {
		return nil, err
	}
	out := make([]rewrite.Column, len(cols))
	for i, c := range cols {
		out[i] = rewrite.Column{Name: c.name, HasDefault: c.hasDefault}
	}
	return out, nil
}

// ErrNoKeyColumn is wrapped by the error refusing an INSERT into a
// configured table that has no column of the configured key column's name.
var ErrNoKeyColumn = errors.New("idsql: configured key column missing")

// checkKey checks, once per table, that t has its key column and that the
// column can hold 64-bit keys. A table the catalog does not know (yet) is
// not checked: the server reports a missing table itself. SQLite's key
// columns are all wide enough: every SQLite integer is 64-bit.
func (c *Connector) checkKey(ctx context.Context, cn *conn, t rewrite.Table) error {
	name := t.String()
	if _, ok := c.keyChecked.Load(name); ok {
		return nil
	}
	cols, err := catalog{cn}.columns(ctx, t.Schema, t.Name)
	if err != nil {
		return err
	}
	for _, col := range cols {
		if col.name != t.KeyColumn && (c.dialect == dialect.PostgreSQL || !strings.EqualFold(col.name, t.KeyColumn)) {
			continue
		}
		if err := c.dialect.NarrowKey(name, col.name, col.typ); err != nil {
			return err
		}
		c.keyChecked.Store(name, true)
		return nil
	}
	if len(cols) == 0 {
		return nil
	}
	have := make([]string, len(cols))
	for i, col := range cols {
		have[i] = col.name
	}
	return fmt.Errorf("%w: table %s has no column %s (it has %s): set tables.%s.column in the configuration to the key column's name, or add the column as BIGINT",
		ErrNoKeyColumn, name, t.KeyColumn, strings.Join(have, ", "), name)
}

// query runs a query with arguments on the inner connection, preparing it
// when the driver will not run it directly (go-sql-driver/mysql answers
// driver.ErrSkip to arguments unless interpolateParams is on).
func (c *conn) query(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := c.inner.(driver.QueryerContext); ok {
		rows, err := q.QueryContext(ctx, query, args)
		if !errors.Is(err, driver.ErrSkip) {
			return rows, err
		}
	}
	st, err := c.prepare(ctx, query)
	if err != nil {
		return nil, err
	}
	rows, err := stmtQuery(ctx, st, args)
	if err != nil {
		st.Close()
		return nil, err
	}
	return stmtRows{rows, st}, nil
}

// stmtRows closes the statement with its rows.
type stmtRows struct {
	driver.Rows
	st driver.Stmt
}

func (r stmtRows) Close() error { return errors.Join(r.Rows.Close(), r.st.Close()) }

func asString(v driver.Value) string {
	switch v := v.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case nil:
		return ""
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
