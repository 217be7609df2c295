package idsql

import (
	"context"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// presetKey carries keys chosen before the statement runs (NamedExec fills
// the caller's structs first, and the driver must insert exactly those).
type presetKey struct{}

type preset struct {
	table string
	ids   []int64
}

// withPresetIDs tells the driver to use ids for the next filled INSERT into
// table instead of generating them.
func withPresetIDs(ctx context.Context, table string, ids []int64) context.Context {
	return context.WithValue(ctx, presetKey{}, &preset{table: table, ids: ids})
}

// presetIDs returns the preset keys for p, nil when there are none.
func presetIDs(ctx context.Context, p *rewrite.Plan) ([]int64, error) {
	ps, _ := ctx.Value(presetKey{}).(*preset)
	if ps == nil || ps.table != p.Table.String() {
		return nil, nil
	}
	if len(ps.ids) != p.Rows {
		return nil, fmt.Errorf("idsql: insert into %s: %d keys chosen for %d rows", p.Table, len(ps.ids), p.Rows)
	}
	return ps.ids, nil
}
