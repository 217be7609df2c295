package pgxid

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/internal/pgtest"
)

// BenchmarkPgxFill is the wrapper's own work for one single-row INSERT,
// without the round trip: the plan (a cache hit), the key and the
// arguments pgx gets. Divided by BenchmarkPgxInsertRowPaired's raw-ns/op it
// is the part of the ratio that is the wrapper's, steady on a shared
// machine where the paired ratio is not.
func BenchmarkPgxFill(b *testing.B) {
	raw, dsn := pgtest.Open(b)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE b_pgxid (id bigint PRIMARY KEY, user_id int NOT NULL, note text)`); err != nil {
		b.Fatal(err)
	}
	cfg := &idsql.Config{Namespace: "bench", Tables: map[string]idsql.TableConfig{"b_pgxid": {Strategy: idsql.Snowflake}}}
	if err := idsql.Migrate(ctx, raw, cfg, idsql.PostgresStores(raw)); err != nil {
		b.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close(context.Background()) })
	db, err := New(conn, cfg, Options{KeysOptions: idsql.KeysOptions{Holder: holder.Static(map[string]int64{"b_pgxid": 3})}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	const q = "INSERT INTO b_pgxid (user_id, note) VALUES ($1, $2)"
	args := []any{1, "note"}
	if _, _, err := db.filled(ctx, q, args); err != nil { // the plan, the catalog check and the lease, once
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := db.filled(ctx, q, args); err != nil {
			b.Fatal(err)
		}
	}
}
