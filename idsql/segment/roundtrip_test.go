package segment_test

import (
	"context"
	"testing"

	"github.com/idsql/idsql/idsql/segment"
)

// TestMySQLOneRoundTripPerRange counts, on the wire, the round trips an
// allocation costs on MariaDB: exactly one per range for the stored
// procedure (the log row and the stored step included), once the CALL is
// prepared on the connection. The transaction form's count is logged.
func TestMySQLOneRoundTripPerRange(t *testing.T) { testRoundTrips(t, my, 1) }

// TestPostgresRoundTrips logs the round trips of an allocation on
// PostgreSQL through lib/pq, for comparison; it asserts nothing about them.
func TestPostgresRoundTrips(t *testing.T) { testRoundTrips(t, pg, 0) }

// testRoundTrips measures both forms of c's dialect; want, when not 0, is
// the round trips one allocation of the one-statement form must cost.
func testRoundTrips(t *testing.T, c dbCase, want int64) {
	t.Parallel()
	for _, f := range c.forms() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			admin, dsn := c.open(t)
			createKey(t, c.migrated(t, admin, f.d, segment.StoreSettings{}), segment.KeySpec{Key: "k", Step: 10})
			db, rt := c.countingDB(t, dsn)
			db.SetMaxOpenConns(1) // one connection, prepared once
			s := segment.NewSQLStore(db, f.d)
			ctx := context.Background()

			// The first allocation connects and, with PrepareAllocate,
			// prepares the statement: not counted.
			if _, err := s.Allocate(ctx, segment.Request{Key: "k", Instance: "rt"}); err != nil {
				t.Fatal(err)
			}
			const n = 100
			before := rt.Count()
			for i := range n {
				step := int64(0) // the stored step, then explicit ones
				if i%2 == 1 {
					step = 25
				}
				if _, err := s.Allocate(ctx, segment.Request{Key: "k", Step: step, Instance: "rt"}); err != nil {
					t.Fatal(err)
				}
			}
			got := rt.Count() - before
			t.Logf("%s, %s: %d round trips for %d allocations (%.2f each)", c.name, f.name, got, n, float64(got)/n)
			if want != 0 && f.d.Allocate != nil && got != want*n {
				t.Fatalf("%d round trips for %d allocations, want %d each", got, n, want)
			}

			// Through the generator: one round trip per range loaded.
			g := newGen(t, s, segment.Settings{MaxStep: 10})
			k := mustKey(t, g, "k")
			if _, err := k.Next(ctx); err != nil { // the first range
				t.Fatal(err)
			}
			waitIdle(t, k)
			before, loads := rt.Count(), k.Stats().Loads
			for range 500 {
				if _, err := k.Next(ctx); err != nil {
					t.Fatal(err)
				}
			}
			waitIdle(t, k)
			got, ranges := rt.Count()-before, k.Stats().Loads-loads
			t.Logf("%s, %s: generator: %d round trips for %d ranges", c.name, f.name, got, ranges)
			if want != 0 && f.d.Allocate != nil && got != want*int64(ranges) {
				t.Fatalf("generator: %d round trips for %d ranges, want %d each", got, ranges, want)
			}
		})
	}
}
