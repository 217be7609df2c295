package segment

import (
	"context"
	"sync"
	"testing"
)

// countStore hands out consecutive ranges of a fixed step for any key.
type countStore struct {
	mu   sync.Mutex
	step int64
	max  int64
}

func (c *countStore) Keys(context.Context) ([]string, error) { return []string{"k"}, nil }

func (c *countStore) Allocate(_ context.Context, req Request) (Range, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := req.Step
	if n == 0 {
		n = c.step
	}
	r := Range{Key: req.Key, First: c.max + 1, Last: c.max + n, StoredStep: c.step}
	c.max = r.Last
	return r, nil
}

// TestFastBoundOpensAtPreload checks the invariant Next's inlined fast path
// rests on: a segment's fast bound is its preload value until the caller
// that draws (or takes, in NextIDs) that value has started the next load,
// and max+1 after, so the rest of the segment is served by the fast path.
func TestFastBoundOpensAtPreload(t *testing.T) {
	for _, tc := range []struct {
		name string
		take func(ctx context.Context, k *Key, n int) error
	}{
		{"Next", func(ctx context.Context, k *Key, n int) error {
			for range n {
				if _, err := k.Next(ctx); err != nil {
					return err
				}
			}
			return nil
		}},
		{"NextIDs", func(ctx context.Context, k *Key, n int) error {
			_, err := k.NextIDs(ctx, n)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, err := New(ctx, &countStore{step: 100}, Settings{RefreshInterval: -1, MaxStep: 100, Threshold: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { g.Close() })
			k, err := g.Key(ctx, "k")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := k.Next(ctx); err != nil { // loads [1, 100]
				t.Fatal(err)
			}
			s := k.cur.Load()
			if s.first != 1 || s.max != 100 {
				t.Fatalf("first segment [%d, %d], want [1, 100]", s.first, s.max)
			}
			if got := s.fast.Load(); got != s.preloadAt {
				t.Fatalf("fast bound %d before the preload value, want preloadAt %d", got, s.preloadAt)
			}
			// Stop one short of the preload value: still closed.
			if err := tc.take(ctx, k, int(s.preloadAt-2)); err != nil {
				t.Fatal(err)
			}
			if got := s.fast.Load(); got != s.preloadAt {
				t.Fatalf("fast bound %d one before the preload value, want %d", got, s.preloadAt)
			}
			if err := tc.take(ctx, k, 2); err != nil { // draws preloadAt
				t.Fatal(err)
			}
			if got := s.fast.Load(); got != s.max+1 {
				t.Fatalf("fast bound %d after the preload value, want max+1 = %d", got, s.max+1)
			}
			k.mu.Lock()
			started := k.loading || k.next != nil
			k.mu.Unlock()
			if !started {
				t.Fatal("drawing the preload value started no load")
			}
		})
	}
}

// TestEmptySegmentFastBound: the sentinel a key starts and ends with must
// send every caller down the slow path.
func TestEmptySegmentFastBound(t *testing.T) {
	s := emptySegment()
	if v := s.cursor.Load() + 1; v < s.fast.Load() {
		t.Fatalf("empty segment would hand out %d on the fast path", v)
	}
}
