package server

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
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
