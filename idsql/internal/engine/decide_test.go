package engine

import (
	"context"
	"testing"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// plan plans q on a MySQL rewriter of table t.
func plan(t *testing.T, q string) *rewrite.Plan {
	t.Helper()
	rw, err := rewrite.New(rewrite.Config{Tables: []rewrite.Table{{Name: "t"}}, Dialect: dialect.MySQL})
	if err != nil {
		t.Fatal(err)
	}
	p, err := rw.Plan(context.Background(), q, nil)
	if err != nil || p == nil {
		t.Fatalf("%s: %v, %v", q, p, err)
	}
	return p
}

func TestKnown(t *testing.T) {
	insert := plan(t, "INSERT INTO t (v) VALUES (?)")
	upsert := plan(t, "INSERT INTO t (v) VALUES (?) ON DUPLICATE KEY UPDATE v = VALUES(v)")
	multi := plan(t, "INSERT INTO t (v) VALUES (?), (?) ON DUPLICATE KEY UPDATE v = VALUES(v)")
	ignore := plan(t, "INSERT IGNORE INTO t (v) VALUES (?), (?)")
	for _, c := range []struct {
		name          string
		p             *rewrite.Plan
		affected      int64
		countsUpdates bool
		want          bool
	}{
		{"insert", insert, 1, true, true},
		{"insert, count unknown", insert, -1, false, true},
		{"insert of nothing", insert, 0, true, false},
		{"upsert inserted", upsert, 1, true, true},
		{"upsert updated", upsert, 2, true, false},
		{"upsert unchanged", upsert, 0, true, false},
		{"upsert, found rows", upsert, 1, false, false},
		{"upsert, count unknown", upsert, -1, true, false},
		{"multi-row upsert", multi, 1, true, false},
		{"multi-row upsert, both inserted", multi, 2, true, false},
		{"multi-row, every row written", ignore, 2, true, true},
		{"multi-row, a row skipped", ignore, 1, true, false},
		{"multi-row, count unknown", ignore, -1, true, true},
	} {
		if got := Known(c.p, c.affected, c.countsUpdates); got != c.want {
			t.Errorf("%s: Known = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestStates(t *testing.T) {
	var s States[string]
	p, q := plan(t, "INSERT INTO t (v) VALUES (?)"), plan(t, "INSERT INTO t (w) VALUES (?)")
	a, b := "a", "b"
	if got := s.Store(p, &a); got != &a {
		t.Fatalf("Store kept %v", got)
	}
	if got := s.Store(p, &b); got != &a {
		t.Errorf("a second Store replaced the state kept")
	}
	if got, ok := s.Load(p); !ok || got != &a {
		t.Errorf("Load = %v, %v", got, ok)
	}
	if _, ok := s.Load(q); ok {
		t.Errorf("a state for a plan never stored")
	}
	// Bounded: past maxStates the cache starts over.
	for range maxStates {
		s.Store(&rewrite.Plan{}, &b)
	}
	if _, ok := s.Load(p); ok {
		t.Errorf("the cache kept more than %d states", maxStates)
	}
}

// table is a TableConfig.
type table struct {
	key, shard string
	zero       bool
	bits       int
}

func (t table) KeyColumn() string   { return t.key }
func (t table) FillsZero() bool     { return t.zero }
func (t table) ShardColumn() string { return t.shard }
func (t table) ShardBits() int      { return t.bits }

func TestTables(t *testing.T) {
	got := Tables([]string{"orders", `shop."Mixed Case"`}, map[string]table{
		"orders":            {key: "id", zero: true},
		`shop."Mixed Case"`: {key: "Key", shard: "user_id", bits: 3},
	})
	want := []Table{
		{Table: rewrite.Table{Name: "orders", KeyColumn: "id", Label: "orders"}},
		{Table: rewrite.Table{Schema: "shop", Name: "Mixed Case", KeyColumn: "Key", KeepZero: true, Label: `shop."Mixed Case"`, ShardColumn: "user_id"}, ShardBits: 3},
	}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Tables = %+v, want %+v", got, want)
	}
}
