package idsql_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
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
	if len(got) != 1 || got[0].Table != "orders" || got[0].Strategy != keyset.Snowflake || got[0].Parts.Worker != tableWorker(cfg, 5, "orders") {
		t.Fatalf("Lookup(order %d) = %+v", orderID, got)
	}
	if got[0].Instance() == "" || time.Since(got[0].Parts.Time) > time.Minute {
		t.Errorf("order origin lacks instance or time: %+v", got[0])
	}

	got, err = idsql.Lookup(ctx, raw, cfg, userID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Table != "users" || got[0].Strategy != keyset.Segment || !got[0].Range.Contains(userID) {
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
	stores, err := idsql.StoresFor(raw, cfg.Holder)
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
		keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, Holder: holder.Static(workers), Registry: stores.Workers})
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

// TestOriginString: %v of an Origin is one readable line naming the table
// and how the ID was issued, not a dump of zero fields.
func TestOriginString(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 5e6, time.UTC)
	tests := []struct {
		o    idsql.Origin
		want string
	}{
		{idsql.Origin{ID: 42, Table: "orders", Strategy: keyset.Snowflake,
			Parts: snowflake.Parts{Time: at, Worker: 3, Sequence: 7}, Lease: registry.Record{LeaseID: 9, Instance: "web-1:8080"}},
			"42: table orders (snowflake), worker 3, sequence 7, time 2026-03-01T12:00:00.005Z, instance web-1:8080 (lease #9)"},
		{idsql.Origin{ID: 1001, Table: "users", Strategy: keyset.Segment,
			Range: segment.Range{Key: "users", First: 1001, Last: 2000, Instance: "web-2", Time: at}},
			"1001: table users (segment), key users, range 1001..2000 handed out 2026-03-01T12:00:00.005Z to web-2"},
		{idsql.Origin{ID: 77, Strategy: keyset.Segment, Gene: &keyset.GeneParts{Index: 5, Shard: 2, App: 1},
			Range: segment.Range{Key: "orders#2", First: 1, Last: 10, Instance: "web-3", Time: at}},
			"77: table (not configured) (segment), shard 2, app 1, index 5, key orders#2, range 1..10 handed out 2026-03-01T12:00:00.005Z to web-3"},
	}
	for _, tt := range tests {
		if got := fmt.Sprint(tt.o); got != tt.want {
			t.Errorf("Sprint(Origin) =\n  %s\nwant\n  %s", got, tt.want)
		}
	}
}
