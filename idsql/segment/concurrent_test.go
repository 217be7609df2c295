package segment_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// TestPostgresGeneratorsShareKey, TestMySQLGeneratorsShareKey: four
// generators, each with a connection pool of its own (as four processes
// would have), take IDs of one key from four goroutines each, in both forms
// of the dialect. No ID is handed out twice; the logged ranges never
// overlap and cover every ID.
func TestPostgresGeneratorsShareKey(t *testing.T) { testGeneratorsShareKey(t, pg) }
func TestMySQLGeneratorsShareKey(t *testing.T)    { testGeneratorsShareKey(t, my) }

func testGeneratorsShareKey(t *testing.T, c dbCase) {
	t.Parallel()
	for _, f := range c.forms() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			s, _, dsn := c.store(t)
			createKey(t, s, segment.KeySpec{Key: "shared", Step: 20})
			ids := takeFromGenerators(t, 4, 4, 3000, func(i int) segment.Store {
				db, err := sql.Open(c.name, dsn)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				return segment.NewSQLStore(db, f.d)
			}, "shared", segment.Settings{MaxStep: 160, WaitTimeout: 30 * time.Second})
			checkUnique(t, ids)
			ranges := checkLog(t, s, "shared", ids)
			t.Logf("%d IDs from %d ranges", len(ids), len(ranges))
		})
	}
}

// takeFromGenerators starts gens generators, generator i on store(i), and
// has workers goroutines take each IDs of key from every one of them at
// the same time. It returns every ID taken, once the generators have
// closed.
func takeFromGenerators(t *testing.T, gens, workers, each int, store func(i int) segment.Store, key string, st segment.Settings) []int64 {
	t.Helper()
	ctx := context.Background()
	var keys []*segment.Key
	var generators []*segment.Generator
	for i := range gens {
		st.Instance = fmt.Sprintf("generator %d", i)
		g := newGen(t, store(i), st)
		generators = append(generators, g)
		keys = append(keys, mustKey(t, g, key))
	}
	var (
		mu   sync.Mutex
		all  []int64
		errs []error
		wg   sync.WaitGroup
	)
	for _, k := range keys {
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				mine := make([]int64, 0, each)
				var err error
				for range each {
					var id int64
					if id, err = k.Next(ctx); err != nil {
						break
					}
					mine = append(mine, id)
				}
				mu.Lock()
				all = append(all, mine...)
				errs = append(errs, err)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	// Close waits for background loads, so that a caller reading the
	// store's log or allocation row next sees every range the generators
	// will ever allocate (a preload committing after such a read made
	// TestPostgresLeafTable's tiling check fail now and then).
	for _, g := range generators {
		g.Close()
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	return all
}

// TestPostgresMigrateConcurrently, TestMySQLMigrateConcurrently: eight
// processes starting at once on an empty database all migrate it, and the
// store works afterwards.
func TestPostgresMigrateConcurrently(t *testing.T) { testMigrateConcurrently(t, pg) }
func TestMySQLMigrateConcurrently(t *testing.T)    { testMigrateConcurrently(t, my) }

func testMigrateConcurrently(t *testing.T, c dbCase) {
	t.Parallel()
	_, dsn := c.open(t)
	ctx := context.Background()
	const n = 8
	errs := make([]error, n)
	stores := make([]*segment.SQLStore, n)
	var wg sync.WaitGroup
	for i := range n {
		db, err := sql.Open(c.name, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		stores[i] = segment.NewSQLStore(db, c.storeSQL())
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			errs[i] = stores[i].Migrate(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Migrate %d: %v", i, err)
		}
	}
	createKey(t, stores[0], segment.KeySpec{Key: "k", Step: 10})
	if r, err := stores[n-1].Allocate(ctx, segment.Request{Key: "k"}); err != nil || r.First != 1 || r.Last != 10 {
		t.Fatalf("Allocate after concurrent migrations: %+v, %v", r, err)
	}
}
