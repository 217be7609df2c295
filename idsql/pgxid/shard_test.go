package pgxid_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
)

// A sharded table's keys carry the shard of each row's shard column value,
// through every path that fills them: Exec with $n and literals, named
// arguments, pgx's option arguments, a batch and COPY.
func TestPgxShardedTable(t *testing.T) {
	ctx := context.Background()
	cfg := &keyset.Config{Namespace: "sharded", Tables: map[string]keyset.TableConfig{
		"accounts": {Strategy: keyset.Segment, Step: 20, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 4}},
	}}
	_, pool, _ := setupWith(t, `CREATE TABLE accounts (id bigint PRIMARY KEY, user_id bigint NOT NULL, region text NOT NULL)`, cfg)
	db, err := pgxid.New(pool, cfg, pgxid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	exec := func(sql string, args ...any) {
		t.Helper()
		if _, err := db.Exec(ctx, sql, args...); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	exec("INSERT INTO accounts (user_id, region) VALUES ($1, $2), (17, 'eu'), ($3, 'us')", 5, "eu", int32(300))
	exec("INSERT INTO accounts (user_id, region) VALUES (@u, @r)", pgx.NamedArgs{"u": 42, "r": "ap"})
	exec("INSERT INTO accounts (user_id, region) VALUES ($1, $2)", pgx.QueryExecModeSimpleProtocol, 7, "eu")
	b := &pgx.Batch{}
	b.Queue("INSERT INTO accounts (user_id, region) VALUES ($1, 'b')", 1001)
	b.Queue("INSERT INTO accounts (user_id, region) VALUES ($1, 'b')", 1002)
	if err := db.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	rows := [][]any{{int64(9), "c"}, {int64(10), "c"}, {int64(11), "c"}}
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"accounts"}, []string{"user_id", "region"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}

	got, err := pool.Query(ctx, "SELECT id, user_id FROM accounts")
	if err != nil {
		t.Fatal(err)
	}
	type row struct{ ID, UserID int64 }
	all, err := pgx.CollectRows(got, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 {
		t.Fatalf("%d rows, want 10", len(all))
	}
	seen := map[int64]bool{}
	for _, r := range all {
		want, err := keyset.ShardOf(r.UserID, 4)
		if err != nil {
			t.Fatal(err)
		}
		if r.ID <= 0 || seen[r.ID] || int(r.ID&15) != want {
			t.Errorf("user %d: key %d (shard bits %d), want a new positive key in shard %d", r.UserID, r.ID, r.ID&15, want)
		}
		seen[r.ID] = true
	}

	// No shard value, no key.
	_, err = db.Exec(ctx, "INSERT INTO accounts (user_id, region) VALUES ($1, 'x')", 1.5)
	if !errors.Is(err, keyset.ErrShardValue) || !strings.Contains(err.Error(), "accounts") || !strings.Contains(err.Error(), "user_id") {
		t.Errorf("float shard value: %v, want ErrShardValue naming the table and column", err)
	}
	_, err = db.CopyFrom(ctx, pgx.Identifier{"accounts"}, []string{"region"}, pgx.CopyFromRows([][]any{{"x"}}))
	if err == nil || !strings.Contains(err.Error(), "user_id") {
		t.Errorf("COPY without the shard column: %v, want an error naming it", err)
	}
}
