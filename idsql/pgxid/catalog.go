package pgxid

import (
	"context"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// queryer runs a catalog query: a Querier, or the *pgx.Conn pgx hands a
// QueryRewriter.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// reader reads the catalog over the caller's own pool, connection or
// transaction, so it sees the same search path: the statement engine's
// engine.ColumnReader.
type reader struct{ q queryer }

// ReadColumns implements engine.ColumnReader. It uses the simple protocol:
// no statement of idsql's in the caller's statement cache, whatever its
// exec mode.
func (r reader) ReadColumns(ctx context.Context, query string, args []any, row func(name, hasDefault, typ any)) error {
	rows, err := r.q.Query(ctx, query, append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		var def bool
		if err := rows.Scan(&name, &def, &typ); err != nil {
			return err
		}
		row(name, def, typ)
	}
	return rows.Err()
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

// sentRows are the rows of a statement pgxid sent; their error says how to
// mend a statement a connection pooler split (engine.Engine.Sent).
type sentRows struct {
	pgx.Rows
	eng *engine.Engine
}

func (r sentRows) Err() error { return r.eng.Sent(r.Rows.Err()) }

// sentRow is the row of a statement pgxid sent, its error mapped as
// sentRows's.
type sentRow struct {
	pgx.Row
	eng *engine.Engine
}

func (r sentRow) Scan(dest ...any) error { return r.eng.Sent(r.Row.Scan(dest...)) }
