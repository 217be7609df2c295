//go:build unix

package idsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

// The wrapper's own CPU per statement, with nothing else in the way: a
// driver that answers every Exec at once (and the catalog query with a
// fixed table), so what is left is database/sql plus, on the idsql side,
// idsql. Run:
//
//	go test -run '^$' -bench 'WrapperCPU' -count 8 ./idsql/
//
// raw: the INSERT with its key through database/sql alone; idsql: the
// INSERT without its key through idsql, which fills it; added: the
// difference, idsql's own cost per statement. B/op and allocs/op are
// those of one raw and one idsql block of 2,048 statements together.
func BenchmarkWrapperCPU(b *testing.B) {
	const block = 2048
	ctx := context.Background()
	rawSent, idsqlSent := new(sent), new(sent)
	raw := sql.OpenDB(instantConnector{rawSent})
	b.Cleanup(func() { raw.Close() })
	cfg := &keyset.Config{Namespace: "cpu", Dialect: "sqlite", Tables: map[string]keyset.TableConfig{"t": {Strategy: keyset.Snowflake}}}
	c, err := idsql.NewConnector(instantConnector{idsqlSent}, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: holder.Fixed(1)}})
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	b.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, "INSERT INTO t (user_id, note) VALUES (?, ?)", 1, "warm"); err != nil {
		b.Fatal(err)
	}
	rawMark, idsqlMark := *rawSent, *idsqlSent
	// The sides alternate in blocks of 2,048 statements, so machine noise
	// hits both alike, each first in every other round.
	b.ReportAllocs()
	pairedCPU(b, block, func(i, j int64) {
		if _, err := raw.ExecContext(ctx, filledInsert, j, "note", i+1); err != nil {
			b.Fatal(err)
		}
	}, func(j int64) {
		if _, err := db.ExecContext(ctx, "INSERT INTO t (user_id, note) VALUES (?, ?)", j, "note"); err != nil {
			b.Fatal(err)
		}
	})
	rawSent.check(b, "raw", rawMark, int64(b.N)*block, filledInsert)
	idsqlSent.check(b, "idsql", idsqlMark, int64(b.N)*block, filledInsert)
}

// pairedCPU runs the benchmark's two sides in alternating blocks of block
// statements, the side that goes first alternating, and times each block
// on the process's CPU clock (getrusage: on a loaded machine, wall time
// would count the time the process waited for a core). raw(i, j) runs the
// raw side's statement j of a block, i numbering the statements of every
// raw block; idsql(j) runs idsql's. It reports the CPU per statement of
// each side and idsql's added CPU; one op is one block of each side.
func pairedCPU(b *testing.B, block int64, raw func(i, j int64), idsql func(j int64)) {
	var rawT, idsqlT time.Duration
	var k int64
	rawBlock := func() {
		start := processCPU(b)
		for j := range block {
			k++
			raw(k, j)
		}
		rawT += processCPU(b) - start
	}
	idsqlBlock := func() {
		start := processCPU(b)
		for j := range block {
			idsql(j)
		}
		idsqlT += processCPU(b) - start
	}
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			rawBlock()
			idsqlBlock()
		} else {
			idsqlBlock()
			rawBlock()
		}
	}
	n := float64(int64(b.N) * block)
	b.ReportMetric(float64(rawT.Nanoseconds())/n, "raw-cpu-ns/stmt")
	b.ReportMetric(float64(idsqlT.Nanoseconds())/n, "idsql-cpu-ns/stmt")
	b.ReportMetric(float64((idsqlT-rawT).Nanoseconds())/n, "added-cpu-ns/stmt")
	b.ReportMetric(0, "ns/op")
}

// processCPU returns the CPU time the process has used (user and system).
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// instantConnector makes connections that answer at once: Exec affects
// one row, and every query returns table t's catalog (id bigint, user_id
// integer, note text). Its connections record what they are sent in sent,
// when it is not nil.
type instantConnector struct{ sent *sent }

func (c instantConnector) Connect(context.Context) (driver.Conn, error) { return instantConn(c), nil }
func (c instantConnector) Driver() driver.Driver                        { return instantDriver(c) }

type instantDriver struct{ sent *sent }

func (d instantDriver) Open(string) (driver.Conn, error) { return instantConn(d), nil }

type instantConn struct{ sent *sent }

func (instantConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (instantConn) Close() error                        { return nil }
func (instantConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (c instantConn) ExecContext(_ context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if s := c.sent; s != nil {
		s.record(query, args)
	}
	return driver.RowsAffected(1), nil
}
func (instantConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &catalogRows{}, nil
}

// filledInsert is the one-row INSERT into t with its key, as the raw
// sides send it and as idsql rewrites the INSERT without it.
const filledInsert = "INSERT INTO t (user_id, note, id) VALUES (?, ?, ?)"

// sent is what instantConn executed: how many statements, the last one's
// text, and its key, taken to be its last argument (the benchmarks' raw
// statements put the key column last, and idsql appends it there), with
// a count of statements whose last argument was no int64 (no key) or no
// larger than the key before it. Recording assigns a few fields and
// allocates nothing, so it costs both sides of a benchmark alike and next
// to nothing. One goroutine runs each benchmark's statements.
type sent struct {
	execs, unfilled, notIncreasing int64
	query                          string
	key                            int64
}

func (s *sent) record(query string, args []driver.NamedValue) {
	s.execs++
	s.query = query
	key, ok := int64(0), len(args) > 0
	if ok {
		key, ok = args[len(args)-1].Value.(int64)
	}
	switch {
	case !ok || key == 0:
		s.unfilled++
	case key <= s.key:
		s.notIncreasing++
	}
	s.key = key
}

// check fails b unless, since mark (a copy of s taken before the loop),
// the driver was sent n statements, the last of them query, each with a
// key larger than the one before it.
func (s *sent) check(b *testing.B, side string, mark sent, n int64, query string) {
	b.Helper()
	if got := s.execs - mark.execs; got != n {
		b.Fatalf("%s: the driver was sent %d statements, want %d", side, got, n)
	}
	if s.query != query {
		b.Fatalf("%s: the driver was last sent %q, want %q (the INSERT with its key)", side, s.query, query)
	}
	if u, d := s.unfilled-mark.unfilled, s.notIncreasing-mark.notIncreasing; u != 0 || d != 0 || s.key <= mark.key {
		b.Fatalf("%s: of %d statements the driver was sent, %d had no key and %d a key no larger than the one before; the last key %d, before the loop %d",
			side, n, u, d, s.key, mark.key)
	}
}

// catalogRows are the rows of the SQLite dialect's catalog query (name,
// has a default, type) for table t.
type catalogRows struct{ i int }

var catalogOfT = [][]driver.Value{{"id", false, "bigint"}, {"user_id", false, "integer"}, {"note", false, "text"}}

func (*catalogRows) Columns() []string { return []string{"name", "has_default", "type"} }
func (*catalogRows) Close() error      { return nil }
func (r *catalogRows) Next(dest []driver.Value) error {
	if r.i == len(catalogOfT) {
		return io.EOF
	}
	copy(dest, catalogOfT[r.i])
	r.i++
	return nil
}
