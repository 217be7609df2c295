package pgxid

import (
	"context"

	"github.com/idsql/idsql/idsql/internal/engine"
)

// Filled runs sql with args through the engine as DB.Exec does, up to the
// filled statement and its arguments, sending nothing (a query rewriter's
// door), for BenchmarkPgxFill.
func Filled(ctx context.Context, db *DB, sql string, args []any) error {
	var st engine.Statement[[]any]
	_, err := engine.Run(ctx, db.s.eng, rewriteDoor{pgxArgs{&db.session}}, db.statement(&st, sql, args))
	return err
}
