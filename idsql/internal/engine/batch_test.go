package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"slices"
	"strings"
	"testing"
)

// errCapped is capped's refusal.
var errCapped = errors.New("capped: too few keys left")

// capped is a counter whose keys end at max: a request for more keys than
// are left is refused before any is drawn, as a table's max_id refuses it.
type capped struct {
	counter
	max   int64
	asked []int // the size of every request
}

func (c *capped) Source(context.Context, string) (Source, error) { return c, nil }

func (c *capped) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	c.asked = append(c.asked, n)
	if c.n+int64(n) > c.max {
		return dst, errCapped
	}
	return c.counter.AppendIDs(ctx, dst, n)
}

// A batch is decided whole before any key is drawn, and the keys of a
// table are drawn for all its statements in one request: a statement
// refused at any step costs the batch no key.
func TestFillBatch(t *testing.T) {
	ctx := context.Background()
	keys := &capped{max: 5}
	e, rw, cat := engineOfT(t, Config{Keys: keys})
	plan := func(rows int) *Stmt {
		t.Helper()
		st, err := e.Plan(ctx, rw, cat, "INSERT INTO t (v) VALUES (?)"+strings.Repeat(", (?)", rows-1))
		if err != nil || st == nil {
			t.Fatalf("plan of %d rows: %v, %v", rows, st, err)
		}
		return st
	}
	args := func(rows int) []driver.NamedValue {
		a := make([]driver.NamedValue, rows)
		for i := range a {
			a[i] = driver.NamedValue{Ordinal: i + 1, Value: int64(100 + i)}
		}
		return a
	}
	one, two := plan(1), plan(2)

	// The batch limit in the second statement: refused before the first
	// statement's key is drawn.
	_, err := e.FillBatch(ctx, cat, []*Stmt{one, plan(MaxBatch + 1)}, [][]driver.NamedValue{args(1), args(MaxBatch + 1)})
	if !errors.Is(err, ErrBatch) || !strings.HasPrefix(err.Error(), "batch query 1: ") || len(keys.asked) != 0 {
		t.Fatalf("a statement past MaxBatch: %v, requests %v; want ErrBatch naming query 1 and no request", err, keys.asked)
	}
	// 6 keys with 5 left, in statements that fit on their own: one request,
	// refused whole.
	_, err = e.FillBatch(ctx, cat, []*Stmt{two, two, two}, [][]driver.NamedValue{args(2), args(2), args(2)})
	if !errors.Is(err, errCapped) || !strings.HasPrefix(err.Error(), "batch queries 0, 1, 2: test: insert into t: ") || !slices.Equal(keys.asked, []int{6}) || keys.n != 0 {
		t.Fatalf("6 keys with 5 left: %v, requests %v, %d keys drawn; want the source's refusal naming queries 0, 1 and 2, one request of 6, no key", err, keys.asked, keys.n)
	}
	// 5 keys: one request, laid out in statement order; a statement that
	// passes unchanged (nil) takes none.
	fs, err := e.FillBatch(ctx, cat, []*Stmt{one, nil, two, two}, [][]driver.NamedValue{args(1), nil, args(2), args(2)})
	if err != nil || !slices.Equal(keys.asked, []int{6, 5}) {
		t.Fatalf("5 keys with 5 left: %v, requests %v", err, keys.asked)
	}
	want := [][]int64{{1}, nil, {2, 3}, {4, 5}}
	for i, f := range fs {
		if (f == nil) != (want[i] == nil) || f != nil && !slices.Equal(f.IDs, want[i]) {
			t.Fatalf("statement %d: %+v, want keys %v", i, f, want[i])
		}
		for _, k := range want[i] {
			if !slices.ContainsFunc(f.Args, func(a driver.NamedValue) bool { return a.Value == k }) {
				t.Errorf("statement %d: arguments %v do not carry key %d", i, f.Args, k)
			}
		}
	}
}
