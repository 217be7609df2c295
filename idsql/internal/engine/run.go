package engine

import (
	"context"
	"database/sql/driver"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// Door is what a front door gives Run: how its arguments look (A) and how
// it sends a statement (R is what sending one returns: a result, rows, or
// the statement and arguments a query rewriter hands back). Everything
// between (plan, table state, key check, which rows take keys, the draw,
// the arguments that carry them, the mapping of a sent statement's error)
// is Run's.
type Door[A, R any] interface {
	// Named returns the statement's own arguments of args, $1 first, or
	// an error refusing args for plan p before any key is drawn.
	Named(p *rewrite.Plan, args A) ([]driver.NamedValue, error)
	// Filled returns the door's arguments for the filled execution f of
	// a statement called with args.
	Filled(args A, f *Filled) A
	// Send sends query with args: the caller's statement unchanged when
	// st is nil, otherwise st's filled one.
	Send(ctx context.Context, st *Stmt, query string, args A) (R, error)
}

// Statement is one statement a door runs through Run.
type Statement[A any] struct {
	// Query and Args are the caller's statement and arguments.
	Query string
	Args  A
	// Stmt is Query's statement when the door holds it already (a
	// prepared statement, a connection's last statement); Plan is a plan
	// of Query made for it elsewhere (NamedExec's). With neither, Run
	// plans Query with Rewriter (nil: the engine's Default).
	Stmt     *Stmt
	Plan     *rewrite.Plan
	Rewriter *rewrite.Rewriter
	// Catalog is read for the table's key column (the door's session).
	Catalog *Catalog
	// Send is the text to send for the filled statement when it is not
	// its plan's Query (a statement prepared under a name); "" for that.
	Send string
	// Named holds a NamedExec's rows, nil for other statements.
	Named *NamedRows
	// Buffers are Fill's buf.
	Buffers *Buffers
}

// NamedRows are the rows of a NamedExec, as its door read them from the
// caller's structs or maps before binding.
type NamedRows struct {
	// Table is the configured table the rows go into.
	Table string
	// Keys, when not nil, holds each row's own key (0 for a new one) for
	// a statement that does not list the key column (Engine.OwnKeys).
	Keys []int64
}

// Describes reports whether n (nil-safe) is about the rows of p.
func (n *NamedRows) Describes(p *rewrite.Plan) bool {
	return n != nil && n.Table == p.Table.String() && (n.Keys == nil || len(n.Keys) == p.Rows)
}

// given returns the rows' own keys for Fill when n describes p.
func (n *NamedRows) given(p *rewrite.Plan) []int64 {
	if !n.Describes(p) {
		return nil
	}
	return n.Keys
}

// OwnKeys reports whether a NamedExec's rows, one per row of p, can keep
// their own keys (a 0 key taking a new one) given as NamedRows.Keys: the
// statement does not list the key column (the engine adds it, one key per
// row) and its table is not sharded (each row's key must be drawn in its
// row's shard, so every row takes a new one). Otherwise the rows take
// the keys Fill decides, and keep none of their own.
func (e *Engine) OwnKeys(p *rewrite.Plan, rows int) bool {
	return !p.Listed() && rows == p.Rows && e.bits[p.Table.String()] == 0 && !e.uuidKeyed(p)
}

// Ran is what Run did: what the door's Send returned, the statement that
// ran (nil when the caller's passed unchanged) and its filled execution.
type Ran[R any] struct {
	Result R
	Stmt   *Stmt
	Filled *Filled
}

// Run runs one statement through door d: it plans s.Query (unless the
// door holds its statement), fills the execution with its keys, has the
// door send it, and maps the error of a statement that may have reached
// the server (Engine.Sent). A statement that fills nothing is sent as it
// came. Refusals come before any key is drawn, and nothing is sent after
// one.
func Run[A, R any](ctx context.Context, e *Engine, d Door[A, R], s *Statement[A]) (Ran[R], error) {
	var ran Ran[R]
	var err error
	st := s.Stmt
	if st == nil {
		if st, err = e.statement(ctx, s.Plan, s.Rewriter, s.Catalog, s.Query); err != nil {
			return ran, err
		}
	}
	if st == nil {
		ran.Result, err = d.Send(ctx, nil, s.Query, s.Args)
		return ran, e.sent(err)
	}
	ran.Stmt = st
	args, err := d.Named(st.Plan, s.Args)
	if err != nil {
		return ran, err
	}
	if ran.Filled, err = e.Fill(ctx, s.Catalog, st, args, s.Named.given(st.Plan), s.Buffers); err != nil {
		return ran, err
	}
	send := s.Send
	if send == "" {
		send = st.Plan.Query
	}
	ran.Result, err = d.Send(ctx, st, send, d.Filled(s.Args, ran.Filled))
	return ran, e.sent(err)
}

// sent is Sent, at no cost for nil.
func (e *Engine) sent(err error) error {
	if err == nil {
		return nil
	}
	return e.Sent(err)
}

// statement returns the statement of query (see Statement) when the door
// holds none: the state of p, or a new plan made with rw; nil when query
// passes unchanged.
func (e *Engine) statement(ctx context.Context, p *rewrite.Plan, rw *rewrite.Rewriter, cat *Catalog, query string) (*Stmt, error) {
	switch {
	case p != nil:
		return e.State(ctx, cat, p)
	case rw == nil:
		rw = e.Default()
	}
	return e.Plan(ctx, rw, cat, query)
}
