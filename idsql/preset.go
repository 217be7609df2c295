package idsql

import (
	"context"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// namedKey carries a NamedExec's keys to the driver and the keys the driver
// generated back.
type namedKey struct{}

// namedExec is what NamedExec and the driver share about one statement.
type namedExec struct {
	table string
	// keys, when not nil, holds one key per row for a statement that does
	// not list the key column: the caller's own, or 0 for a new one.
	keys []int64
	// got is set by the driver once the statement has succeeded: for each
	// row, the key it generated, or 0 when the row kept the caller's.
	got []int64
}

// withNamed hands n to the driver for the next filled INSERT into n.table.
func withNamed(ctx context.Context, n *namedExec) context.Context {
	return context.WithValue(ctx, namedKey{}, n)
}

// namedFor returns the NamedExec state for p, nil when there is none or
// it does not describe p's rows.
func namedFor(ctx context.Context, p *rewrite.Plan) *namedExec {
	n, _ := ctx.Value(namedKey{}).(*namedExec)
	if n == nil || n.table != p.Table.String() || n.keys != nil && len(n.keys) != p.Rows {
		return nil
	}
	return n
}
