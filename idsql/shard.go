package idsql

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// rowShards says, for one INSERT into a sharded table, where each row's
// shard column value is: a bind parameter or a literal.
type rowShards struct {
	plan   *rewrite.Plan
	table  string
	column string
	bits   int
	vals   []rewrite.Value
}

// maxRowShards bounds the Connector's cache of rowShards; past it the
// cache starts over.
const maxRowShards = 4096

// rowShards returns where the rows of p (planned from query) take their
// shard, or nil when p's table has no shard bits.
func (c *conn) rowShards(query string, p *rewrite.Plan) (*rowShards, error) {
	if !c.c.keys.sharded {
		return nil, nil
	}
	table := p.Table.String()
	tc := c.c.keys.cfg.Tables[table]
	if tc.Shard == nil {
		return nil, nil
	}
	if v, ok := c.c.rowShards.Load(query); ok && v.(*rowShards).plan == p {
		return v.(*rowShards), nil
	}
	vals, err := c.rw.ColumnValues(query, p, tc.Shard.Column)
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", err)
	}
	rs := &rowShards{plan: p, table: table, column: tc.Shard.Column, bits: tc.Shard.Bits, vals: vals}
	if c.c.nRowShards.Add(1) > maxRowShards {
		c.c.rowShards.Clear()
		c.c.nRowShards.Store(0)
	}
	c.c.rowShards.Store(query, rs)
	return rs, nil
}

// appendIDs appends one key per row, each from the shard of the row's
// value of the shard column.
func (rs *rowShards) appendIDs(ctx context.Context, keys *Keys, dst []int64, args []driver.NamedValue) ([]int64, error) {
	shards := make([]int, len(rs.vals))
	for i, v := range rs.vals {
		var value any
		switch v.Kind {
		case rewrite.ValueArg:
			if v.Arg >= len(args) {
				return dst, fmt.Errorf("idsql: insert into %s: row %d: column %s takes argument %d of %d", rs.table, i+1, rs.column, v.Arg+1, len(args))
			}
			value = args[v.Arg].Value
		case rewrite.ValueInt:
			value = v.Int
		default:
			value = v.Str
		}
		s, err := ShardOf(value, rs.bits)
		if err != nil {
			return dst, fmt.Errorf("idsql: insert into %s: row %d: column %s: %w", rs.table, i+1, rs.column, err)
		}
		shards[i] = s
	}
	return keys.AppendShardIDs(ctx, dst, rs.table, shards)
}
