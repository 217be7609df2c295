package idsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/snowflake"
)

func TestLookup(t *testing.T) {
	db, raw := openTest(t)
	ctx := context.Background()
	cfg := db.Keys().Config()

	var orderID, userID int64
	if err := db.QueryRowContext(ctx, "INSERT INTO orders (user_id) VALUES (1) RETURNING id").Scan(&orderID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "INSERT INTO users (name) VALUES ('a') RETURNING id").Scan(&userID); err != nil {
		t.Fatal(err)
	}

	got, err := idsql.Lookup(ctx, raw, cfg, orderID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Table != "orders" || got[0].Strategy != idsql.Snowflake || got[0].Parts.Worker != tableWorker(cfg, 5, "orders") {
		t.Fatalf("Lookup(order %d) = %+v", orderID, got)
	}
	if got[0].Instance() == "" || time.Since(got[0].Parts.Time) > time.Minute {
		t.Errorf("order origin lacks instance or time: %+v", got[0])
	}

	got, err = idsql.Lookup(ctx, raw, cfg, userID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Table != "users" || got[0].Strategy != idsql.Segment || !got[0].Range.Contains(userID) {
		t.Fatalf("Lookup(user %d) = %+v", userID, got)
	}

	// An ID no lease or range explains is said to be unknown, not guessed.
	foreign, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Now().Add(-time.Hour), Worker: 900})
	if _, err := idsql.Lookup(ctx, raw, cfg, foreign); !errors.Is(err, idsql.ErrNotFound) {
		t.Fatalf("Lookup(foreign) = %v, want ErrNotFound", err)
	}
	// Nor is one with the orders lease's worker ID but a time no lease of
	// it held: a small integer (a time just after the layout's epoch) and
	// an ID from an hour ahead.
	w := tableWorker(cfg, 5, "orders")
	small, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: snowflake.Leaf.Epoch.Add(time.Millisecond), Worker: w, Sequence: 7})
	ahead, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Now().Add(time.Hour), Worker: w})
	for _, id := range []int64{small, ahead} {
		if got, err := idsql.Lookup(ctx, raw, cfg, id); !errors.Is(err, idsql.ErrNotFound) {
			t.Fatalf("Lookup(%d) = %+v, %v; want ErrNotFound", id, got, err)
		}
	}
	if _, err := idsql.Lookup(ctx, raw, cfg, -3); err == nil || !strings.Contains(err.Error(), "positive") {
		t.Fatalf("Lookup(-3) = %v", err)
	}
}

// A worker ID that served one table and then another: each ID is traced to
// the table that was using the worker ID when the ID was issued.
func TestLookupAfterWorkerReuse(t *testing.T) {
	_, raw := openTest(t)
	ctx := context.Background()
	cfg := testConfig()
	const reused = 40
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		t.Fatal(err)
	}
	// period returns Keys whose holder gives table the reused worker ID and
	// every other table one of its own (from base), and keys issued for
	// table through them; the Keys are closed, which ends the lease.
	period := func(table string, base int64) []int64 {
		workers := map[string]int64{}
		for i, name := range cfg.TableNames() {
			workers[name] = base + int64(i)
		}
		workers[table] = reused
		keys, err := idsql.NewKeys(cfg, idsql.KeysOptions{DB: raw, Holder: holder.Static(workers), Registry: idsql.PostgresStores(raw).Workers})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := keys.NextIDs(ctx, table, 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := keys.Close(); err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if p, err := layout.Decode(id, time.Now(), time.Minute); err != nil || p.Worker != reused {
				t.Fatalf("%s key %d: parts %+v, %v; want worker ID %d", table, id, p, err, reused)
			}
		}
		return ids
	}
	// Two periods of orders around one of Audit: a Lookup that took the
	// wrong lease of the worker ID could still name the right table for
	// one orders period, so each period's keys must name its own lease.
	periods := []string{"orders", "Audit", "orders"}
	issued := make([][]int64, len(periods))
	for n, table := range periods {
		issued[n] = period(table, 50+10*int64(n))
	}
	leases := map[any]int{} // lease ID -> period
	for n, table := range periods {
		for _, id := range issued[n] {
			got, err := idsql.Lookup(ctx, raw, cfg, id)
			if err != nil || len(got) != 1 || got[0].Table != table || got[0].Parts.Worker != reused {
				t.Errorf("period %d: Lookup(%d) = %+v, %v; want %s on worker ID %d", n, id, got, err, table, reused)
				continue
			}
			if m, ok := leases[got[0].Lease.LeaseID]; !ok {
				leases[got[0].Lease.LeaseID] = n
			} else if m != n {
				t.Errorf("period %d: Lookup(%d) names lease %v, of period %d", n, id, got[0].Lease.LeaseID, m)
			}
		}
	}
	if len(leases) != len(periods) {
		t.Errorf("keys of %d periods traced to %d leases: %v", len(periods), len(leases), leases)
	}
}
