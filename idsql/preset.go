package idsql

import (
	"context"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// namedKey carries a NamedExec's keys to the driver and the keys the driver
// generated back.
type namedKey struct{}

// namedExec is what NamedExec and the driver share about one statement.
type namedExec struct {
	// rows are the statement's rows as the engine reads them: their
	// table, and their own keys for a statement that does not list the
	// key column (engine.Engine.OwnKeys), nil otherwise.
	rows engine.NamedRows
	// plan is the plan NamedExec made for query with rw: the connection
	// takes it instead of asking the rewriter again.
	plan  *rewrite.Plan
	query string
	rw    *rewrite.Rewriter
	// got is set by the driver once the statement has succeeded: for each
	// row, the key it generated, or 0 when the row kept the caller's.
	got []int64
}

// withNamed hands n to the driver for the next filled INSERT into n.table.
func withNamed(ctx context.Context, n *namedExec) context.Context {
	return context.WithValue(ctx, namedKey{}, n)
}

// namedIn returns the NamedExec state ctx carries, nil when there is
// none. While no NamedExec of the connector is in flight it costs one
// atomic load.
func (c *Connector) namedIn(ctx context.Context) *namedExec {
	if c.namedN.Load() == 0 {
		return nil
	}
	n, _ := ctx.Value(namedKey{}).(*namedExec)
	return n
}
