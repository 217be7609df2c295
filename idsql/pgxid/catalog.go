package pgxid

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// queryer runs a catalog query: a Querier, or the *pgx.Conn pgx hands a
// QueryRewriter.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// catalog answers the rewriter's questions over the caller's own pool,
// connection or transaction, so it sees the same search path.
type catalog struct{ q queryer }

// column is one column as the catalog describes it.
type column struct {
	name       string
	hasDefault bool
	typ        string
}

// columns lists a table's columns in order; none when there is no such
// table.
func (c *catalog) columns(ctx context.Context, schema, table string) ([]column, error) {
	name := rewrite.Table{Schema: schema, Name: table}.String()
	query, args, err := dialect.PostgreSQL.Columns(schema, table)
	if err != nil {
		return nil, fmt.Errorf("pgxid: catalog: columns of %s: %w", name, err)
	}
	// The simple protocol: no statement of idsql's in the caller's
	// statement cache, whatever its exec mode.
	rows, err := c.q.Query(ctx, query, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("pgxid: catalog: columns of %s: %w", name, err)
	}
	cols, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (column, error) {
		var col column
		err := r.Scan(&col.name, &col.hasDefault, &col.typ)
		return col, err
	})
	if err != nil {
		return nil, fmt.Errorf("pgxid: catalog: columns of %s: %w", name, err)
	}
	return cols, nil
}

// Columns implements rewrite.Catalog.
func (c *catalog) Columns(ctx context.Context, schema, table string) ([]rewrite.Column, error) {
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

// checkKey checks, once per table, that the key column of t can hold
// 64-bit keys. A table the catalog does not know (yet) is not checked: the
// server reports a missing table itself.
func (s *shared) checkKey(ctx context.Context, cat *catalog, t rewrite.Table) error {
	name := t.String()
	if _, ok := s.keyChecked.Load(name); ok {
		return nil
	}
	cols, err := cat.columns(ctx, t.Schema, t.Name)
	if err != nil {
		return err
	}
	for _, col := range cols {
		if col.name != t.KeyColumn {
			continue
		}
		if err := dialect.PostgreSQL.NarrowKey(name, col.name, col.typ); err != nil {
			return err
		}
		s.keyChecked.Store(name, true)
		return nil
	}
	return nil
}

// errRows is the Rows of a statement refused before it was sent.
type errRows struct{ err error }

func (r errRows) Close()                                       {}
func (r errRows) Err() error                                   { return r.err }
func (r errRows) CommandTag() pgconn.CommandTag                { return pgconn.CommandTag{} }
func (r errRows) FieldDescriptions() []pgconn.FieldDescription { return nil }
func (r errRows) Next() bool                                   { return false }
func (r errRows) Scan(...any) error                            { return r.err }
func (r errRows) Values() ([]any, error)                       { return nil, r.err }
func (r errRows) RawValues() [][]byte                          { return nil }
func (r errRows) Conn() *pgx.Conn                              { return nil }
func (r errRows) TypeMap() *pgtype.Map                         { return nil }

// errRow is the Row of a statement refused before it was sent.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }
