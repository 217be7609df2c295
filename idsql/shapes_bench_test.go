package idsql_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/pgtest"
)

// BenchmarkShapeBTree measures what a spread key costs a PostgreSQL
// B-tree: each loop inserts one batch of keys (IDSQL_SHAPE_BATCH rows,
// default 1000) into each of two tables, one with ordered snowflake keys
// and one with the same keys under {spread: reverse}, in rotating order
// (internal/benchpair). The keys are a realistic run: consecutive
// sequences of consecutive milliseconds of the leaf layout, 4 workers.
// -benchtime Nx makes N batches per side: 1000x with the default batch is
// the 1M rows per side of BENCHMARKS.md. After the loop it checks that each
// side's table holds what it wrote, and reports the size of each side's
// primary key index.
func BenchmarkShapeBTree(b *testing.B) {
	batch := 1000
	if s := os.Getenv("IDSQL_SHAPE_BATCH"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			b.Fatalf("IDSQL_SHAPE_BATCH=%q: want a positive number", s)
		}
		batch = n
	}
	raw, _ := pgtest.Open(b)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE shape_ordered (id bigint PRIMARY KEY, n int NOT NULL)",
		"CREATE TABLE shape_spread (id bigint PRIMARY KEY, n int NOT NULL)",
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	f, err := shape.New(shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41})
	if err != nil {
		b.Fatal(err)
	}
	l := snowflake.Leaf
	tick := l.Tick(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC))
	var worker, seq int64
	// next returns the next ordered key: 200 keys per worker and tick, as
	// 4 processes at 800 inserts a millisecond in all.
	next := func() int64 {
		k := tick<<(l.WorkerBits+l.SequenceBits) | (worker+1)<<l.SequenceBits | seq
		if seq++; seq == 200 {
			seq = 0
			if worker++; worker == 4 {
				worker, tick = 0, tick+1
			}
		}
		return k
	}
	ordered, spread, ns := make([]int64, batch), make([]int64, batch), make([]int32, batch)
	insert := func(table string, keys []int64) error {
		_, err := raw.ExecContext(ctx, "INSERT INTO "+table+" (id, n) SELECT * FROM unnest($1::bigint[], $2::int[])", pq.Array(keys), pq.Array(ns))
		return err
	}
	filled := -1
	fill := func(i int) {
		if i == filled {
			return
		}
		filled = i
		for j := range batch {
			ordered[j] = next()
			spread[j], _ = f.Apply(ordered[j])
			ns[j] = int32(i)
		}
	}
	paired(b, []string{"ordered", "spread"}, []func(int) error{
		func(i int) error { fill(i); return insert("shape_ordered", ordered) },
		func(i int) error { fill(i); return insert("shape_spread", spread) },
	})
	b.StopTimer()
	for _, side := range []string{"ordered", "spread"} {
		var rows, size int64
		if err := raw.QueryRowContext(ctx, "SELECT count(*), pg_relation_size('shape_"+side+"_pkey') FROM shape_"+side).Scan(&rows, &size); err != nil {
			b.Fatal(err)
		}
		if rows != int64(b.N*batch) {
			b.Fatalf("%s: %d rows; it wrote %d", side, rows, b.N*batch)
		}
		b.ReportMetric(float64(size)/(1<<20), side+"-index-MiB")
	}
	b.ReportMetric(float64(batch), "rows/batch")
}
