package rewrite

import (
	"context"
	"database/sql/driver"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

const benchInsert = `INSERT INTO orders (user_id, total, note) VALUES ($1, $2, $3) RETURNING id`

// BenchmarkRewrite is the cache-hit path the driver wrapper takes on every
// execution of a known INSERT.
func BenchmarkRewrite(b *testing.B) {
	r := newTest(b, dialect.PostgreSQL)
	ctx := context.Background()
	if p, err := r.Plan(ctx, benchInsert, nil); p == nil || err != nil {
		b.Fatal(p, err)
	}
	b.ReportAllocs()
	for b.Loop() {
		r.Plan(ctx, benchInsert, nil)
	}
}

// BenchmarkRewriteParallel is BenchmarkRewrite from all Ps at once.
func BenchmarkRewriteParallel(b *testing.B) {
	r := newTest(b, dialect.PostgreSQL)
	ctx := context.Background()
	r.Plan(ctx, benchInsert, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r.Plan(ctx, benchInsert, nil)
		}
	})
}

// BenchmarkRewriteMiss plans without the cache: the first execution of a
// query text.
func BenchmarkRewriteMiss(b *testing.B) {
	r, _ := New(Config{Tables: testTables, CacheSize: -1})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		r.Plan(ctx, benchInsert, nil)
	}
}

// BenchmarkFastReject is a SELECT, rejected without allocating.
func BenchmarkFastReject(b *testing.B) {
	r := newTest(b, dialect.PostgreSQL)
	ctx := context.Background()
	q := `SELECT id, user_id, total, note FROM orders WHERE user_id = $1 ORDER BY id DESC LIMIT 50`
	b.ReportAllocs()
	for b.Loop() {
		r.Plan(ctx, q, nil)
	}
}

// BenchmarkArgs builds the arguments of a 3-row INSERT into a reused buffer.
func BenchmarkArgs(b *testing.B) {
	r := newTest(b, dialect.SQLite)
	p, _ := r.Plan(context.Background(), `INSERT INTO orders (user_id, total) VALUES (?, ?), (?, ?), (?, ?)`, nil)
	args := nv(1, 2, 3, 4, 5, 6)
	ids := []int64{7, 8, 9}
	buf := make([]driver.NamedValue, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.Args(buf, args, ids)
	}
}

// BenchmarkArgsListed is BenchmarkArgs for a statement that lists the key
// as a bind parameter (what gorm sends): Need and Args look at each row's
// key argument; here one of the three is 0 and takes a key.
func BenchmarkArgsListed(b *testing.B) {
	r := newTest(b, dialect.SQLite)
	p, _ := r.Plan(context.Background(), `INSERT INTO orders (id, user_id, total) VALUES (?, ?, ?), (?, ?, ?), (?, ?, ?)`, nil)
	args := nv(int64(11), 1, 2, int64(0), 3, 4, int64(12), 5, 6)
	ids := []int64{7}
	buf := make([]driver.NamedValue, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		buf = p.Args(buf, args, ids[:p.Need(args)])
	}
}
