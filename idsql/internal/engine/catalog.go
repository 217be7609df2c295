package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// ErrNoKeyColumn is wrapped by the error refusing an INSERT into a
// configured table that has no column of the configured key column's name
// (idsql.ErrNoKeyColumn).
var ErrNoKeyColumn = errors.New("idsql: configured key column missing")

// ColumnReader is how a front door reads the catalog over the caller's
// own connection (same search path, database and transaction): it runs
// query with args and calls row with the three values of each row (the
// column's name, whether it has a default, its type), in order.
type ColumnReader interface {
	ReadColumns(ctx context.Context, query string, args []any, row func(name, hasDefault, typ any)) error
}

// Catalog answers the rewriter's and the key check's questions about a
// table through a front door's ColumnReader. It implements
// rewrite.Catalog.
type Catalog struct {
	d      dialect.Dialect
	prefix string
	r      ColumnReader
}

// Catalog returns the catalog read through r.
func (e *Engine) Catalog(r ColumnReader) *Catalog {
	return &Catalog{d: e.cfg.Dialect, prefix: e.cfg.Prefix, r: r}
}

// column is one column as the dialect's catalog query describes it.
type column struct {
	name       string
	hasDefault bool
	typ        string
}

// columns lists a table's columns in order; none when there is no such
// table.
func (c *Catalog) columns(ctx context.Context, schema, table string) ([]column, error) {
	query, args, err := c.d.Columns(schema, table)
	if err == nil {
		var cols []column
		err = c.r.ReadColumns(ctx, query, args, func(name, hasDefault, typ any) {
			cols = append(cols, column{name: ValueString(name), hasDefault: asBool(hasDefault), typ: ValueString(typ)})
		})
		if err == nil {
			return cols, nil
		}
	}
	return nil, fmt.Errorf("%s: catalog: columns of %s: %w", c.prefix, rewrite.Table{Schema: schema, Name: table}, c.d.Denied(c.d.SplitStatement(err)))
}

// Columns implements rewrite.Catalog.
func (c *Catalog) Columns(ctx context.Context, schema, table string) ([]rewrite.Column, error) {
	cols, err := c.columns(ctx, schema, table)
	if err != nil {
		return nil, err
	}
	out := make([]rewrite.Column, len(cols))
	for i, col := range cols {
		out[i] = rewrite.Column{Name: col.name, HasDefault: col.hasDefault}
	}
	return out, nil
}

// CheckKey checks, once per table, that t has its key column and that the
// column can hold 64-bit keys (an error wrapping ErrNoKeyColumn, or
// dialect.ErrNarrowKey or dialect.ErrKeyType, otherwise). A table the catalog does not know
// (yet) is not checked, and known reports it: the server reports a
// missing table itself, and the check runs again at the next statement.
func (e *Engine) CheckKey(ctx context.Context, cat *Catalog, t rewrite.Table) (known bool, err error) {
	name := t.String()
	if _, ok := e.keyChecked.Load(name); ok {
		return true, nil
	}
	cols, err := cat.columns(ctx, t.Schema, t.Name)
	if err != nil {
		return false, err
	}
	for _, col := range cols {
		if !e.cfg.Dialect.SameColumn(col.name, t.KeyColumn) {
			continue
		}
		storage := dialect.NoUUID
		if e.cfg.UUIDs[name] != nil {
			storage, err = e.cfg.Dialect.UUIDColumn(name, col.name, col.typ)
		} else {
			err = e.cfg.Dialect.KeyColumn(name, col.name, col.typ)
		}
		if err != nil {
			return true, err
		}
		e.keyChecked.Store(name, storage)
		return true, nil
	}
	if len(cols) == 0 {
		return false, nil
	}
	have := make([]string, len(cols))
	for i, col := range cols {
		have[i] = col.name
	}
	return true, fmt.Errorf("%w: table %s has no column %s (it has %s): set tables.%s.column in the configuration to the key column's name, or add the column as BIGINT",
		ErrNoKeyColumn, name, t.KeyColumn, strings.Join(have, ", "), name)
}

// ValueString returns a catalog value as text: a string, the bytes of a
// []byte, "" for NULL, or the value printed.
func ValueString(v any) string {
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

func asBool(v any) bool {
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
