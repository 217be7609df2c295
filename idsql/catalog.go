package idsql

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/internal/dialect"
)

// ErrNarrowKey is wrapped by the error refusing an INSERT whose key column
// cannot hold idsql's 64-bit keys (a MySQL INT, a PostgreSQL integer): the
// keys would be refused by the server or, in MySQL without a strict
// sql_mode, silently clamped to the column's largest value.
var ErrNarrowKey = dialect.ErrNarrowKey

// ErrKeyType is wrapped by the error refusing an INSERT whose key column
// is not an integer type (text, numeric, uuid, a SQLite column of text or
// real affinity): the server would store the key as text or convert it,
// or refuse it with an error naming no table.
var ErrKeyType = dialect.ErrKeyType

// ErrNoKeyColumn is wrapped by the error refusing an INSERT into a
// configured table that has no column of the configured key column's name.
var ErrNoKeyColumn = engine.ErrNoKeyColumn

// ReadColumns runs a catalog query over the caller's own connection, so
// it sees the same search path, database and transaction: the statement
// engine's engine.ColumnReader.
func (c *conn) ReadColumns(ctx context.Context, query string, args []any, row func(name, hasDefault, typ any)) error {
	nv := make([]driver.NamedValue, len(args))
	for i, a := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	rows, err := c.query(ctx, query, nv)
	if err != nil {
		return err
	}
	defer rows.Close()
	dest := make([]driver.Value, 3)
	for {
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		row(dest[0], dest[1], dest[2])
	}
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
