package pgxid

import "context"

// Filled is DB.filled, for BenchmarkPgxFill.
func Filled(ctx context.Context, db *DB, sql string, args []any) error {
	_, _, err := db.filled(ctx, sql, args)
	return err
}
