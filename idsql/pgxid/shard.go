package pgxid

import (
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// shardPlan says where each row of a filled INSERT into a sharded table
// (shard: in its configuration) takes the value of the shard column: a
// bind parameter or a literal, as rewrite.ColumnValues read it. Each key
// is then drawn in its row's shard (idsql.ShardOf of the value), as the
// database/sql wrapper draws it.
type shardPlan struct {
	column string
	bits   int
	vals   []rewrite.Value
}

// shards returns the shard of each row; args are the statement's own
// arguments ($1 is args[0]).
func (sp *shardPlan) shards(table string, args []any) ([]int, error) {
	shards := make([]int, len(sp.vals))
	for i, v := range sp.vals {
		var value any
		switch v.Kind {
		case rewrite.ValueArg:
			if v.Arg >= len(args) {
				return nil, fmt.Errorf("pgxid: insert into %s: row %d: column %s takes argument %d of %d", table, i+1, sp.column, v.Arg+1, len(args))
			}
			value = args[v.Arg]
		case rewrite.ValueInt:
			value = v.Int
		default:
			value = v.Str
		}
		s, err := idsql.ShardOf(value, sp.bits)
		if err != nil {
			return nil, fmt.Errorf("pgxid: insert into %s: row %d: column %s: %w", table, i+1, sp.column, err)
		}
		shards[i] = s
	}
	return shards, nil
}

// ownArgs returns args without pgx's leading option arguments
// (QueryExecMode, QueryResultFormats, QueryResultFormatsByOID): the
// statement's own, $1 first.
func ownArgs(args []any) []any {
	for i, a := range args {
		switch a.(type) {
		case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
		default:
			return args[i:]
		}
	}
	return nil
}
