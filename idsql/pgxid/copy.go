package pgxid

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// CopyFrom copies rows into table. Into a configured table whose columns
// do not include the key column, it adds the key column and gives each
// row a key. When they include it, a row whose key is 0 or NULL gets a
// key in its place, as an INSERT's row would (fill_zero; not for a table
// with fill_zero: false or shard bits, whose rows keep the caller's keys).
// Otherwise it copies as pgx does. A key that cannot be issued aborts the
// copy, which then writes nothing. The engine decides each key
// (engine.Copy).
func (s *session) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	t, ok := s.s.copyTable(table)
	if !ok {
		return s.q.CopyFrom(ctx, table, columns, rows)
	}
	cols, keyed, err := s.s.eng.Copy(ctx, s.cat, t, columns, rows)
	switch {
	case err != nil:
		return 0, err
	case keyed == nil:
		return s.q.CopyFrom(ctx, table, columns, rows)
	}
	n, err := s.q.CopyFrom(ctx, table, cols, keyed)
	return n, keyed.Failure(err)
}

// copyTable returns the configured table a COPY's table name designates.
// pgx quotes each part of the name, so the parts are compared as quoted
// identifiers: exactly.
func (s *shared) copyTable(id pgx.Identifier) (rewrite.Table, bool) {
	switch len(id) {
	case 1:
		return s.eng.Default().Match("", id[0])
	case 2:
		return s.eng.Default().Match(id[0], id[1])
	}
	return rewrite.Table{}, false
}
