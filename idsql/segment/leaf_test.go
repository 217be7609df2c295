package segment_test

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// TestPostgresLeafTable, TestMySQLLeafTable: idsql allocates from an
// existing Meituan Leaf leaf_alloc table (Leaf's schema, Leaf's rows) while
// Leaf servers keep allocating from it with Leaf's own statements. Every ID
// idsql hands out is at or above the max_id the table held before (Leaf's
// max_id is the next ID it would hand out: it never handed that one out),
// and the ranges of both never overlap: together they tile the IDs from
// that max_id to the final one exactly.
func TestPostgresLeafTable(t *testing.T) { testLeafTable(t, pg) }
func TestMySQLLeafTable(t *testing.T)    { testLeafTable(t, my) }

func testLeafTable(t *testing.T, c dbCase) {
	t.Parallel()
	for _, f := range c.forms() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			testLeafForm(t, c, f.d)
		})
	}
}

func testLeafForm(t *testing.T, c dbCase, d segment.StoreSQL) {
	ctx := context.Background()
	db, dsn := c.open(t)
	leaf := segment.StoreSettings{LeafTable: "leaf_alloc"}

	// Without the table Migrate fails and names it; it never creates it.
	s, err := segment.NewSQLStoreWith(db, d, leaf)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "leaf_alloc") {
		t.Fatalf("Migrate without a Leaf table: %v", err)
	}

	const before = 5001 // orders: Leaf has handed out IDs up to 5000
	for _, q := range []string{
		c.leafSchema,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step, description) VALUES ('leaf-segment-test', 1, 2000, 'Leaf''s own test key')`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('orders', ` + strconv.Itoa(before) + `, 100)`,
		`INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('locked', 1, 10)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	s = c.migrated(t, db, d, leaf)
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM idsql_alloc`).Scan(&n); err == nil {
		t.Fatal("Migrate on a Leaf table created idsql_alloc")
	}
	keys, err := s.ListKeys(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.Key+" "+strconv.FormatInt(k.MaxID, 10)+" "+strconv.FormatInt(k.Step, 10)+" "+k.Description)
	}
	want := []string{"leaf-segment-test 0 2000 Leaf's own test key", "locked 0 10 ", "orders 5000 100 "}
	if !slices.Equal(got, want) {
		t.Fatalf("ListKeys:\n%q\nwant\n%q", got, want)
	}

	// Leaf servers and idsql generators allocate orders at the same time,
	// each from a connection pool of its own.
	leafDB, err := sql.Open(c.name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { leafDB.Close() })
	var (
		mu         sync.Mutex
		leafRanges []segment.Range
		leafErrs   []error
		wg         sync.WaitGroup
	)
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				step := int64(0) // the stored step; Leaf's dynamic step otherwise
				if (w+i)%2 == 1 {
					step = 37
				}
				r, err := leafAllocate(ctx, c, leafDB, "orders", step)
				mu.Lock()
				leafRanges = append(leafRanges, r)
				leafErrs = append(leafErrs, err)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	ids := takeFromGenerators(t, 2, 4, 2000, func(int) segment.Store {
		db, err := sql.Open(c.name, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		s, err := segment.NewSQLStoreWith(db, d, leaf)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, "orders", segment.Settings{MaxStep: 100, WaitTimeout: 30 * time.Second})
	wg.Wait()
	if err := errors.Join(leafErrs...); err != nil {
		t.Fatal(err)
	}

	checkUnique(t, ids)
	if low := slices.Min(ids); low < before {
		t.Fatalf("idsql handed out %d, below the Leaf table's max_id %d", low, before)
	}
	for _, id := range ids {
		for _, r := range leafRanges {
			if r.Contains(id) {
				t.Fatalf("ID %d handed out by idsql and by Leaf (%d-%d)", id, r.First, r.Last)
			}
		}
	}
	mine := checkLog(t, s, "orders", ids)
	all := slices.Concat(mine, leafRanges)
	slices.SortFunc(all, func(a, b segment.Range) int { return cmp.Compare(a.First, b.First) })
	var maxID int64
	if err := db.QueryRow(`SELECT max_id FROM leaf_alloc WHERE biz_tag = 'orders'`).Scan(&maxID); err != nil {
		t.Fatal(err)
	}
	next := int64(before)
	for _, r := range all {
		if r.First != next {
			t.Fatalf("ranges do not tile [%d, %d): at %d comes %+v", before, maxID, next, r)
		}
		next = r.Last + 1
	}
	if next != maxID {
		t.Fatalf("ranges end at %d, max_id is %d", next-1, maxID)
	}
	t.Logf("%d IDs from %d idsql ranges, %d Leaf ranges, max_id %d -> %d", len(ids), len(mine), len(leafRanges), before, maxID)

	// A key idsql creates in the Leaf table counts as Leaf does: Leaf's
	// first range of it starts at Start, and idsql's next one after it.
	createKey(t, s, segment.KeySpec{Key: "fresh", Step: 10, Start: 100, Description: "made by idsql"})
	if r, err := leafAllocate(ctx, c, leafDB, "fresh", 0); err != nil || r.First != 100 || r.Last != 109 {
		t.Fatalf("Leaf's first range of a key idsql created: %+v, %v", r, err)
	}
	if r, err := s.Allocate(ctx, segment.Request{Key: "fresh", Instance: "idsql"}); err != nil || r.First != 110 || r.Last != 119 || r.StoredStep != 10 {
		t.Fatalf("idsql's range after Leaf's: %+v, %v", r, err)
	}
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 1}); !errors.Is(err, segment.ErrKeyExists) {
		t.Fatalf("creating a key the Leaf table holds: %v", err)
	}

	// The allocation finds its row through the primary key: a lock another
	// transaction holds on another key's row does not stop it.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var x int64
	if err := tx.QueryRow(c.storeSQL().Dialect.Rebind(`SELECT max_id FROM leaf_alloc WHERE biz_tag = ? FOR UPDATE`), "locked").Scan(&x); err != nil {
		t.Fatal(err)
	}
	actx, cancel := context.WithTimeout(ctx, 5*time.Second)
	_, err = s.Allocate(actx, segment.Request{Key: "orders", Instance: "beside a lock"})
	cancel()
	if err != nil {
		t.Fatalf("allocating orders while another row is locked: %v (does the UPDATE scan the table?)", err)
	}
}

// leafAllocate allocates a range as a Leaf server does: its DAO runs the
// UPDATE and then reads the row back, in one transaction, and hands out
// [max_id - step, max_id). Step 0 uses the stored step, as Leaf's first
// load does; any other step is Leaf's dynamic step.
func leafAllocate(ctx context.Context, c dbCase, db *sql.DB, key string, step int64) (segment.Range, error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return segment.Range{}, err
	}
	defer tx.Rollback()
	if step == 0 {
		_, err = tx.ExecContext(ctx, c.storeSQL().Dialect.Rebind(`UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?`), key)
	} else {
		_, err = tx.ExecContext(ctx, c.storeSQL().Dialect.Rebind(`UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?`), step, key)
	}
	if err != nil {
		return segment.Range{}, err
	}
	var maxID, stored int64
	if err := tx.QueryRowContext(ctx, c.storeSQL().Dialect.Rebind(`SELECT max_id, step FROM leaf_alloc WHERE biz_tag = ?`), key).Scan(&maxID, &stored); err != nil {
		return segment.Range{}, err
	}
	if err := tx.Commit(); err != nil {
		return segment.Range{}, err
	}
	if step == 0 {
		step = stored
	}
	return segment.Range{Key: key, First: maxID - step, Last: maxID - 1, Instance: "leaf"}, nil
}
