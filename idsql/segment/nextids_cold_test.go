package segment_test

import (
	"context"
	"slices"
	"testing"

	"github.com/idsql/idsql/idsql/segment"
)

// Small batches on a cold key wait for the first segment instead of each
// allocating a range of their own size.
func TestNextIDsColdKeyWaitsForSegment(t *testing.T) {
	ctx := context.Background()
	st := newMemStore(map[string]int64{"k": 100})
	g, err := segment.New(ctx, st, segment.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	k, err := g.Key(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for range 12 {
		ids, err := k.NextIDs(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids...)
	}
	if want := seq(1, 24); !slices.Equal(got, want) {
		t.Fatalf("IDs %v, want %v", got, want)
	}
	if n := st.calls.Load(); n > 2 {
		t.Fatalf("%d allocations for 24 IDs of a step-100 key, want the first segment (and at most its preload)", n)
	}
}

func seq(from, to int64) []int64 {
	var s []int64
	for v := from; v <= to; v++ {
		s = append(s, v)
	}
	return s
}
