package pgxid_test

import (
	"context"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TestPgxShape: pgxid issues keys of each table's spread shape, the same
// keys the database/sql wrapper issues (both draw from Keys), and decode
// and Lookup undo the shape.
func TestPgxShape(t *testing.T) {
	ctx := context.Background()
	cfg := &keyset.Config{Namespace: "shapes", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Snowflake, Shape: keyset.Shape{Spread: "reverse"}},
		"users":  {Strategy: keyset.Segment, Step: 20, Shape: keyset.Shape{Spread: "shard", Bits: 8}},
	}}
	raw, pool, _ := setupWith(t, `CREATE TABLE orders (id bigint PRIMARY KEY, n int);
CREATE TABLE users (id bigint PRIMARY KEY, n int)`, cfg)
	db, err := pgxid.New(pool, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, table := range []string{"orders", "users"} {
		for i := range 20 {
			if _, err := db.Exec(ctx, "INSERT INTO "+table+" (n) VALUES ($1), ($2)", i, i); err != nil {
				t.Fatal(err)
			}
		}
		keys := ids(t, pool, "SELECT id FROM "+table)
		distinctPositive(t, table, keys, 40)
		codec, err := cfg.Codec(table)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			made, err := codec.Unshape(k)
			if err != nil {
				t.Fatalf("%s: Unshape(%d): %v", table, k, err)
			}
			if table == "orders" {
				if p, err := snowflake.Leaf.Decode(made, time.Now(), time.Second); err != nil || time.Since(p.Time) > time.Minute {
					t.Fatalf("orders key %d (made %d) decodes to %+v, %v", k, made, p, err)
				}
			} else if made > 100 {
				t.Fatalf("users key %d: made %d; want one of the first numbers", k, made)
			}
			got, err := idsql.Lookup(ctx, raw, cfg, k)
			if err != nil || len(got) != 1 || got[0].Table != table || got[0].Key != made {
				t.Fatalf("Lookup(%d) = %v, %v; want table %s, key %d", k, got, err, table, made)
			}
		}
	}
}
