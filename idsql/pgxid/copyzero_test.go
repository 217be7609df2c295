package pgxid_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql"
)

// TestPgxCopyFromZeroKeys: a COPY that lists the key column gives a row
// whose key is 0 or NULL a generated key, as an INSERT's row gets one
// (fill_zero), and keeps every other key; on a narrow key column it is
// refused only when a key would be generated.
func TestPgxCopyFromZeroKeys(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	rows := [][]any{{int64(0), int32(1)}, {nil, int32(2)}, {int64(777), int32(3)}, {int32(0), int32(4)}}
	if n, err := db.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"id", "user_id"}, pgx.CopyFromRows(rows)); err != nil || n != 4 {
		t.Fatalf("CopyFrom: %d, %v", n, err)
	}
	if rows[0][0] != int64(0) || rows[1][0] != nil {
		t.Errorf("the caller's rows were modified: %v", rows)
	}
	keys := ids(t, pool, "SELECT id FROM orders ORDER BY user_id")
	if len(keys) != 4 || keys[2] != 777 || keys[0] < 1<<40 || keys[1] < 1<<40 || keys[3] < 1<<40 || keys[0] == keys[1] || keys[1] == keys[3] {
		t.Errorf("keys %v: want generated keys for rows 1, 2 and 4, and row 3's 777", keys)
	}
	// A narrow key column: the caller's keys are copied, a zero key refused.
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"narrow"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(5), int32(1)}})); err != nil {
		t.Errorf("CopyFrom with keys into a narrow column: %v", err)
	}
	_, err := db.CopyFrom(ctx, pgx.Identifier{"narrow"}, []string{"id", "v"}, pgx.CopyFromRows([][]any{{int32(0), int32(2)}}))
	if !errors.Is(err, idsql.ErrNarrowKey) {
		t.Errorf("CopyFrom of a zero key into a narrow column: %v, want ErrNarrowKey", err)
	}
}
