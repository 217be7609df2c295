package idsql_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

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
	opts := idsql.KeysOptions{DB: raw, Holder: tableWorkers(cfg, 9), Registry: idsql.PostgresStores(raw).Workers}

	first, err := idsql.NewKeys(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, err := first.NextID(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	second, err := idsql.NewKeys(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	b, err := second.NextID(ctx, "Audit")
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{a: "orders", b: "Audit"} {
		got, err := idsql.Lookup(ctx, raw, cfg, id)
		if err != nil || len(got) != 1 || got[0].Table != want {
			t.Errorf("Lookup(%d) = %+v, %v; want %s", id, got, err, want)
		}
	}
}
