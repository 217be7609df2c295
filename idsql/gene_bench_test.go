package idsql_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyset"
)

// BenchmarkShardedInsert compares an INSERT into a segment table whose key
// carries the shard of user_id (6 bits) and an app ID with the same INSERT
// into a plain segment table, in one run, on PostgreSQL. rows=100 spans
// all 64 shards in one statement.
//
//	go test -run '^$' -bench BenchmarkShardedInsert -benchtime 2000x -count 5 ./idsql/
func BenchmarkShardedInsert(b *testing.B) {
	cfg := &keyset.Config{Namespace: "benchgene", Tables: map[string]keyset.TableConfig{
		"g_plain":   {Strategy: keyset.Segment, Step: 100_000},
		"g_sharded": {Strategy: keyset.Segment, Step: 100_000, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 6}, App: &keyset.AppConfig{ID: 3, Bits: 8}},
	}}
	db, raw, _ := openSegmentsPG(b, []string{
		`CREATE UNLOGGED TABLE g_plain (id bigint PRIMARY KEY, user_id bigint NOT NULL, note text)`,
		`CREATE UNLOGGED TABLE g_sharded (id bigint PRIMARY KEY, user_id bigint NOT NULL, note text)`,
	}, cfg, keyset.KeysOptions{})
	ctx := context.Background()
	db.SetMaxOpenConns(1)
	for _, rows := range []int{1, 100} {
		var vals []string
		for r := range rows {
			vals = append(vals, fmt.Sprintf("($%d, 'n')", r+1))
		}
		for _, table := range []string{"g_plain", "g_sharded"} {
			q := "INSERT INTO " + table + " (user_id, note) VALUES " + strings.Join(vals, ", ")
			b.Run(fmt.Sprintf("rows=%d/table=%s", rows, table), func(b *testing.B) {
				if _, err := raw.ExecContext(ctx, "TRUNCATE "+table); err != nil {
					b.Fatal(err)
				}
				args := make([]any, rows)
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					for r := range args {
						args[r] = int64(i*rows + r)
					}
					if _, err := db.ExecContext(ctx, q, args...); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*rows)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
