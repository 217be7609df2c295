package sqlitestore_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
)

func open(t *testing.T) *segment.SQLStore {
	t.Helper()
	s, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "seg.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.DB().Close() })
	return s
}

func TestStore(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if err := s.Migrate(ctx); err != nil { // idempotent
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 10, Description: "orders.id"}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 10}); !errors.Is(err, segment.ErrKeyExists) {
		t.Fatalf("second create: %v", err)
	}
	r1, err := s.Allocate(ctx, segment.Request{Key: "orders", Instance: "me"})
	if err != nil || r1.First != 1 || r1.Last != 10 || r1.StoredStep != 10 {
		t.Fatalf("first range %+v, %v", r1, err)
	}
	r2, err := s.Allocate(ctx, segment.Request{Key: "orders", Step: 25, Instance: "me"})
	if err != nil || r2.First != 11 || r2.Last != 35 {
		t.Fatalf("second range %+v, %v", r2, err)
	}
	if _, err := s.Allocate(ctx, segment.Request{Key: "nope"}); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("unknown key: %v", err)
	}
	keys, err := s.ListKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].MaxID != 35 || keys[0].Updated.IsZero() {
		t.Fatalf("ListKeys %+v, %v", keys, err)
	}
	res, err := s.Lookup(ctx, 20)
	if err != nil || len(res.Ranges) != 1 || res.Ranges[0].First != 11 || res.Ambiguous() || res.Ranges[0].Time.IsZero() {
		t.Fatalf("Lookup %+v, %v", res, err)
	}
}

func TestGeneratorOnSQLite(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "k", Step: 50}); err != nil {
		t.Fatal(err)
	}
	g, err := segment.New(ctx, s, segment.Settings{MaxStep: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	var mu sync.Mutex
	var all []int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []int64
			for range 2000 {
				id, err := g.NextID(ctx, "k")
				if err != nil {
					t.Error(err)
					return
				}
				mine = append(mine, id)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(all)
	if len(slices.Compact(all)) != 8000 {
		t.Fatal("duplicate IDs")
	}
	ranges, err := s.Ranges(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ranges); i++ {
		if ranges[i].First <= ranges[i-1].Last {
			t.Fatalf("overlapping ranges %+v %+v", ranges[i-1], ranges[i])
		}
	}
}

func TestBigStep(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "k", Step: 1, Start: segment.MaxID - 5}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, segment.Request{Key: "k", Step: 3_000_000_000}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("past MaxID: %v", err)
	}
	r, err := s.Allocate(ctx, segment.Request{Key: "k", Step: 6})
	if err != nil || r.Last != segment.MaxID {
		t.Fatalf("up to MaxID: %+v, %v", r, err)
	}
	if _, err := s.Allocate(ctx, segment.Request{Key: "k"}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("exhausted: %v", err)
	}
}

// TestOpenSyncsEveryCommit: every connection of an opened store runs with
// synchronous = FULL (2), so in WAL mode a committed allocation survives a
// power failure; NORMAL (1) could lose it and hand its range out again.
func TestOpenSyncsEveryCommit(t *testing.T) {
	ctx := context.Background()
	s := open(t)
	db := s.DB()
	db.SetMaxIdleConns(4)
	var conns []*sql.Conn
	for range 4 { // several connections: the pragma is per connection
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		var mode int
		if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if mode != 2 {
			t.Errorf("connection %d: synchronous = %d, want 2 (FULL)", i, mode)
		}
		c.Close()
	}
}
