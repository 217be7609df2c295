package idsql

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/fill"
	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// appendShardIDs appends one key per row of p, a plan for a sharded table
// (p.Shards), each drawn in the shard of the row's value of the table's
// shard column.
func (k *Keys) appendShardIDs(ctx context.Context, dst []int64, p *rewrite.Plan, table string, args []driver.NamedValue) ([]int64, error) {
	bits := k.cfg.Tables[table].Shard.Bits
	shards, err := fill.Shards(make([]int, 0, len(p.Shards)), p, args, namedValue,
		func(v any) (int, error) { return ShardOf(v, bits) })
	if err != nil {
		return dst, fmt.Errorf("idsql: %w", err)
	}
	return k.AppendShardIDs(ctx, dst, table, shards)
}

// namedValue is a driver argument's value.
func namedValue(a driver.NamedValue) any { return a.Value }
