package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TestAppendIDs compares appendIDs with plain formatting over runs that
// cross digit boundaries and runs broken by gaps.
func TestAppendIDs(t *testing.T) {
	cases := [][]int64{
		nil,
		{1},
		{7, 8, 9, 10, 11},
		{98, 99, 100, 101, 5, 6, 1000},
		{999999, 1000000, 1000001},
		{math.MaxInt64 - 2, math.MaxInt64 - 1, math.MaxInt64},
		{0, 1, 2, -3, -2, 10, 9, 8},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var ids []int64
		v := r.Int64N(1 << 40)
		for range r.IntN(300) {
			if r.IntN(20) == 0 {
				v = r.Int64N(1 << 62)
			}
			ids = append(ids, v)
			v++
		}
		cases = append(cases, ids)
	}
	for _, ids := range cases {
		want := make([]string, len(ids))
		for i, id := range ids {
			want[i] = strconv.FormatInt(id, 10)
		}
		got := string(appendIDs([]byte("x"), ids))
		if got != "x"+strings.Join(want, "\n") {
			t.Fatalf("appendIDs(%v) = %q", ids, got)
		}
	}
}

func TestParseCount(t *testing.T) {
	for _, tt := range []struct {
		in string
		n  int
		ok bool
	}{
		{"1", 1, true}, {"10000", 10000, true}, {"10001", 0, false}, {"0", 0, false}, {"", 0, false},
		{"-1", 0, false}, {"+1", 0, false}, {"1e3", 0, false}, {"0010", 10, true}, {"9999999999", 0, false},
	} {
		n, ok := parseCount(tt.in, 10000)
		if ok != tt.ok || (ok && n != tt.n) {
			t.Errorf("parseCount(%q) = %d, %v", tt.in, n, ok)
		}
	}
}

func BenchmarkAppendIDs(b *testing.B) {
	ids := make([]int64, 1000)
	for i := range ids {
		ids[i] = 7139826715123912704 + int64(i)
	}
	buf := make([]byte, 0, 20*len(ids))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendIDs(buf[:0], ids)
	}
	b.ReportMetric(float64(b.N*len(ids))/b.Elapsed().Seconds(), "ids/s")
}

// TestFailureMapping checks the Leaf answer (status, Result id) of every
// error class the generators return, including those the HTTP tests do not
// reach (a clock that moved back, an exhausted layout).
func TestFailureMapping(t *testing.T) {
	srv := &Server{s: Settings{Log: log.New(io.Discard, "", 0), Now: time.Now}}
	e := &snowEntry{table: "orders"}
	dbDown := errors.New("dial tcp 127.0.0.1:5432: connect: connection refused")
	snow := []struct {
		err    error
		kind   errKind
		status int
		leaf   int64
	}{
		{&snowflake.ClockBackwardError{Behind: 40 * time.Millisecond, Max: 5 * time.Millisecond}, errClockBackwards, 500, -3},
		{fmt.Errorf("start: %w", &snowflake.ClockBehindError{}), errClockBackwards, 500, -1},
		{&startError{dbDown}, errNotRunning, 500, -1},
		{fmt.Errorf("x: %w", snowflake.ErrStopped), errNotRunning, 500, -1},
		{fmt.Errorf("x: %w", holder.ErrLeaseLost), errNotRunning, 500, -1},
		{fmt.Errorf("idsql: table orders: new worker lease: %w", dbDown), errNotRunning, 500, -1},
		{fmt.Errorf("x: %w", snowflake.ErrExhausted), errExhausted, 500, 0},
		{fmt.Errorf("x: %w", keyset.ErrClosed), errShuttingDown, 503, 0},
		{context.Canceled, errCanceled, 503, 0},
	}
	for _, tt := range snow {
		f := srv.snowflakeFailure(e, "orders", tt.err)
		if f.kind != tt.kind || f.status != tt.status || f.leaf != tt.leaf || f.generator != (tt.status == 500) {
			t.Errorf("snowflake %v: %+v; want kind %s, %d, Result id %d", tt.err, f, errKindNames[tt.kind], tt.status, tt.leaf)
		}
	}
	seg := []struct {
		err    error
		lookup bool
		kind   errKind
		status int
		leaf   int64
	}{
		{&segment.KeyError{Key: "k", Err: segment.ErrUnknownKey}, true, errUnknownKey, 404, -2},
		{&segment.KeyError{Key: "k", Err: dbDown}, true, errStore, 500, -2},
		{&segment.KeyError{Key: "k", Err: fmt.Errorf("%w after 3s (last load error: %w)", segment.ErrTimeout, dbDown)}, false, errNotReady, 500, -3},
		{&segment.KeyError{Key: "k", Err: dbDown}, false, errStore, 500, -3},
		{&segment.KeyError{Key: "k", Err: segment.ErrExhausted}, false, errExhausted, 500, 0},
		{&segment.KeyError{Key: "k", Err: segment.ErrClosed}, false, errShuttingDown, 503, 0},
		{&segment.KeyError{Key: "k", Err: context.DeadlineExceeded}, false, errCanceled, 503, 0},
	}
	for _, tt := range seg {
		f := srv.segmentFailure("k", tt.err, tt.lookup)
		if f.kind != tt.kind || f.status != tt.status || f.leaf != tt.leaf || f.generator != (tt.status == 500) {
			t.Errorf("segment %v (lookup %v): %+v; want kind %s, %d, Result id %d", tt.err, tt.lookup, f, errKindNames[tt.kind], tt.status, tt.leaf)
		}
	}
}

func TestNaturalCompare(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"orders#2", "orders#10", -1},
		{"orders#10", "orders#2", 1},
		{"orders#10", "orders#10", 0},
		{"orders#010", "orders#9", 1},
		{"a", "b", -1},
		{"orders", "orders#0", -1},
		{"users2", "users", 1},
		{"v9x", "v10a", -1},
	}
	for _, tt := range tests {
		if got := naturalCompare(tt.a, tt.b); got != tt.want {
			t.Errorf("naturalCompare(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
