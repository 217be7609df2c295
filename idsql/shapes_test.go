package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/pgtest"
)

func TestShapeConfig(t *testing.T) {
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		yaml string
		want string // "" means valid
	}{
		{`orders: {strategy: snowflake, shape: ordered}`, ""},
		{`orders: {strategy: snowflake, shape: {spread: reverse}}`, ""},
		{`users: {strategy: segment, shape: {spread: reverse}, max_id: 9007199254740991}`, ""},
		{`users: {strategy: segment, shape: {spread: shard, bits: 6}}`, ""},
		{`users: {strategy: segment, shape: {spread: shard, bits: 4}, shard: {column: u, bits: 3}}`, ""},
		{`users: {strategy: segment, shape: {spread: hashed, bits: 6}}`, ""},
		{`orders: {strategy: snowflake, shape: sideways}`, `shape: invalid shape: "sideways": write ordered, {spread: reverse} or {spread: hashed, bits: N}`},
		{`orders: {strategy: snowflake, shape: {spread: scatter}}`, `unknown spread "scatter"`},
		{`orders: {strategy: snowflake, shape: {spread: hashed}}`, "hashed bits 0 out of range 1..16"},
		{`orders: {strategy: snowflake, shape: {spread: reverse, bits: 2}}`, "bits apply to spread: hashed only"},
		{`orders: {strategy: snowflake, shape: {spread: hashed, bits: 4}}`,
			"tables.orders.shape: {spread: hashed, bits: 4} needs 4 free bits on top of the layout's keys, but layout leaf takes 63 of the key space of 63 bits: a snowflake table takes a hashed shape only with a 53-bit layout (js53, or custom bits adding up to 53) and at most 10 hashed bits"},
		{`users: {strategy: segment, shape: {spread: reverse}, max_id: 1000}`,
			"tables.users.shape: {spread: reverse} with max_id 1000: a spread shape maps the key space [1, max_id] onto itself, so max_id must be 2^B-1 (for example 511 = 2^9-1, or 1023 = 2^10-1)"},
		{`orders: {strategy: snowflake, shape: {spread: reverse}, max_id: 9007199254740991}`,
			"{spread: reverse}: layout leaf's keys take 63 bits, more than the key space of 53 bits (max_id 9007199254740991): raise max_id to 9223372036854775807 or more"},
		{`users: {strategy: segment, shape: {spread: hashed, bits: 16}, max_id: 65535}`, "16 hashed bits leave no room in a 16-bit key space"},
	} {
		_, err := keyset.Parse("idsql.yaml", []byte("namespace: shop\ntables:\n  "+c.yaml+"\n"), now)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.yaml, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v; want an error containing %q", c.yaml, err, c.want)
		}
	}
	// A shard shape on a snowflake table fits a layout that leaves room.
	if _, err := keyset.Parse("idsql.yaml", []byte(`
namespace: shop
layout: js53
tables:
  orders: {strategy: snowflake, shape: {spread: shard, bits: 10}}
`), now); err != nil {
		t.Error(err)
	}
}

// shapeConfig has a table of each spread shape; fresh issues no key.
func shapeConfig() *keyset.Config {
	return &keyset.Config{
		Namespace: "shapes",
		Tables: map[string]keyset.TableConfig{
			"orders":   {Strategy: keyset.Snowflake, Shape: keyset.Shape{Spread: "reverse"}},
			"users":    {Strategy: keyset.Segment, Step: 50, Shape: keyset.Shape{Spread: "reverse"}},
			"accounts": {Strategy: keyset.Segment, Step: 50, Shape: keyset.Shape{Spread: "shard", Bits: 6}},
			"fresh":    {Strategy: keyset.Segment, Shape: keyset.Shape{Spread: "reverse"}},
		},
	}
}

// shapeDB is a wrapped database with shapeConfig's tables and its raw
// handle, and how to write a bind parameter.
type shapeDB struct {
	db  *idsql.DB
	raw *sql.DB
	cfg *keyset.Config
	ph  func(n int) string
	// reopen opens the wrapper again with cfg, for a changed shape.
	reopen func(cfg *keyset.Config) (*idsql.DB, error)
}

// TestUnshapeKey: a spread table's key comes back before its shape; an ID
// without its table is refused, wrapping ErrTableNeeded, while snowflake
// tables have spread shapes; a table not configured, or a segment table,
// is refused.
func TestUnshapeKey(t *testing.T) {
	cfg, err := keyset.Parse("x.yaml", []byte("namespace: n\ntables:\n  orders: {strategy: snowflake, shape: {spread: reverse}}\n  plain: {strategy: snowflake}\n  users: {strategy: segment}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	codecs, err := cfg.Codecs()
	if err != nil {
		t.Fatal(err)
	}
	orders, _ := codecs.Of("orders")
	key, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC), Worker: 3, Sequence: 1})
	stored, _ := orders.Shape(key)
	want := cfg.Tables["orders"].Shape.String()
	if got, shape, err := codecs.UnshapeKey("orders", stored); err != nil || got != key || shape != want {
		t.Errorf("UnshapeKey(orders, %d) = %d, %q, %v; want %d, %q", stored, got, shape, err, key, want)
	}
	if got, shape, err := codecs.UnshapeKey("plain", key); err != nil || got != key || shape != "" {
		t.Errorf("UnshapeKey(plain, %d) = %d, %q, %v; want it unchanged", key, got, shape, err)
	}
	if _, _, err := codecs.UnshapeKey("", stored); !errors.Is(err, keyset.ErrTableNeeded) || !strings.Contains(err.Error(), "orders "+want) {
		t.Errorf("UnshapeKey without a table: %v; want ErrTableNeeded naming orders", err)
	}
	if _, _, err := codecs.UnshapeKey("nope", stored); !errors.Is(err, keyset.ErrUnknownTable) {
		t.Errorf("UnshapeKey(nope): %v; want ErrUnknownTable", err)
	}
	if _, _, err := codecs.UnshapeKey("users", 5); err == nil || !strings.Contains(err.Error(), "not a snowflake table") {
		t.Errorf("UnshapeKey(users): %v; want a refusal: not a snowflake table", err)
	}
}

func TestShapePostgres(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	for _, q := range []string{
		"CREATE TABLE orders (id bigint PRIMARY KEY, n int)",
		"CREATE TABLE users (id bigint PRIMARY KEY, n int)",
		"CREATE TABLE accounts (id bigint PRIMARY KEY, n int)",
		"CREATE TABLE fresh (id bigint PRIMARY KEY, n int)",
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfg := shapeConfig()
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	open := func(cfg *keyset.Config) (*idsql.DB, error) {
		return idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 5)}})
	}
	db, err := open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	testShapes(t, shapeDB{db: db, raw: raw, cfg: cfg, ph: func(n int) string { return fmt.Sprintf("$%d", n) }, reopen: open})
}

func TestShapeMySQL(t *testing.T) {
	schema := []string{
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)",
		"CREATE TABLE users (id BIGINT PRIMARY KEY, n INT)",
		"CREATE TABLE accounts (id BIGINT PRIMARY KEY, n INT)",
		"CREATE TABLE fresh (id BIGINT PRIMARY KEY, n INT)",
	}
	cfg := shapeConfig()
	m := openMySQL(t, schema, cfg, nil)
	open := func(cfg *keyset.Config) (*idsql.DB, error) {
		reg := registry.New(m.raw, registry.Settings{AcceptLazyCommits: true})
		return idsql.Open("mysql", m.dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 7), Registry: reg}})
	}
	testShapes(t, shapeDB{db: m.db, raw: m.raw, cfg: cfg, ph: func(int) string { return "?" }, reopen: open})
}

// testShapes inserts rows through the wrapper into every spread table and
// checks their keys: unique, positive, shaped (the shape undone gives the
// key the generator made: a snowflake key of now, a segment number in a
// logged range), traced by Lookup; then that a changed shape is refused
// and Reshape changes only what issued no key.
func testShapes(t *testing.T, s shapeDB) {
	ctx := context.Background()
	const rows = 120
	stores, err := idsql.StoresFor(s.raw, s.cfg.Holder)
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := dialectStores(s); ok {
		stores = m
	}
	for _, table := range []string{"orders", "users", "accounts"} {
		codec, err := s.cfg.Codec(table)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows / 3 {
			// One row, then two in one statement.
			q := fmt.Sprintf("INSERT INTO %s (n) VALUES (%s)", table, s.ph(1))
			if _, err := s.db.ExecContext(ctx, q, i); err != nil {
				t.Fatal(err)
			}
			q = fmt.Sprintf("INSERT INTO %s (n) VALUES (%s), (%s)", table, s.ph(1), s.ph(2))
			if _, err := s.db.ExecContext(ctx, q, i, i); err != nil {
				t.Fatal(err)
			}
		}
		keys := readKeys(t, s.raw, table)
		if len(keys) != rows {
			t.Fatalf("%s: %d rows; want %d", table, len(keys), rows)
		}
		seen := map[int64]bool{}
		for _, k := range keys {
			if k <= 0 || seen[k] {
				t.Fatalf("%s: key %d repeated or not positive", table, k)
			}
			seen[k] = true
			made, err := codec.Unshape(k)
			if err != nil {
				t.Fatalf("%s: Unshape(%d): %v", table, k, err)
			}
			if again, err := codec.Shape(made); err != nil || again != k {
				t.Fatalf("%s: Apply(Unshape(%d)) = %d, %v", table, k, again, err)
			}
			if s.cfg.Tables[table].Strategy == keyset.Snowflake {
				p, err := snowflake.Leaf.Decode(made, time.Now(), time.Second)
				if err != nil || time.Since(p.Time) > time.Minute {
					t.Fatalf("%s: key %d (made %d) decodes to %+v, %v; want now", table, k, made, p, err)
				}
			} else if k < 1<<40 {
				// A segment number below 2^20 reversed, or hashed bits on top
				// of 57, is above 2^40 unless the hash is 0 (1 in 64).
				if codec.ShapeFunc().Shape().Spread == "reverse" || made != k {
					t.Fatalf("%s: key %d (made %d) was not shaped", table, k, made)
				}
			}
			got, err := idsql.LookupIn(ctx, s.cfg, stores, k)
			if err != nil {
				t.Fatalf("%s: Lookup(%d): %v", table, k, err)
			}
			if len(got) != 1 || got[0].Table != table || got[0].Key != made || got[0].ID != k {
				t.Fatalf("%s: Lookup(%d) = %v; want table %s, key %d", table, k, got, table, made)
			}
		}
	}

	// Time bounds of a spread table are refused.
	if _, _, err := s.cfg.Bounds("orders", time.Now().Add(-time.Hour), time.Now()); !errors.Is(err, keyset.ErrNoTimeOrder) {
		t.Errorf("Bounds(orders): %v; want ErrNoTimeOrder", err)
	}
	// A changed shape: Migrate, the wrapper and Reshape refuse it for
	// tables that issued keys.
	changed := shapeConfig()
	tc := changed.Tables["orders"]
	tc.Shape = keyset.Shape{}
	changed.Tables["orders"] = tc
	if err := idsql.MigrateIn(ctx, s.raw, changed, stores); !errors.Is(err, keyset.ErrShapeChanged) ||
		!strings.Contains(err.Error(), "configured with shape ordered, but its keys were issued with shape {spread: reverse}") {
		t.Errorf("Migrate with orders ordered: %v; want ErrShapeChanged naming both shapes", err)
	}
	db2, err := s.reopen(changed)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if _, err := db2.ExecContext(ctx, "INSERT INTO orders (n) VALUES (1)"); !errors.Is(err, keyset.ErrShapeChanged) ||
		!strings.Contains(err.Error(), "idsql migrate --reshape orders") {
		t.Errorf("insert into orders made ordered: %v; want ErrShapeChanged with the fix", err)
	}
	if err := keyset.Reshape(ctx, s.raw, changed, "orders"); !errors.Is(err, keyset.ErrShapeChanged) || !strings.Contains(err.Error(), "has issued keys") {
		t.Errorf("Reshape(orders): %v; want ErrShapeChanged (it issued keys)", err)
	}

	// fresh issued no key: Reshape changes its record, and the wrapper
	// then issues keys of the new shape.
	changed = shapeConfig()
	tc = changed.Tables["fresh"]
	tc.Shape = keyset.Shape{Spread: "shard", Bits: 3}
	changed.Tables["fresh"] = tc
	if err := keyset.Reshape(ctx, s.raw, changed, "fresh"); err != nil {
		t.Fatalf("Reshape(fresh): %v", err)
	}
	db3, err := s.reopen(changed)
	if err != nil {
		t.Fatal(err)
	}
	defer db3.Close()
	if _, err := db3.ExecContext(ctx, "INSERT INTO fresh (n) VALUES (1)"); err != nil {
		t.Fatalf("insert into fresh after Reshape: %v", err)
	}
	k := readKeys(t, s.raw, "fresh")[0]
	fresh, err := changed.Codec("fresh")
	if err != nil {
		t.Fatal(err)
	}
	if made, err := fresh.Unshape(k); err != nil || made >= 1<<20 {
		t.Errorf("fresh key %d: made %d, %v; want a small number under shape shard", k, made, err)
	}
	// The original configuration is now refused for fresh.
	if _, err := s.db.ExecContext(ctx, "INSERT INTO fresh (n) VALUES (2)"); !errors.Is(err, keyset.ErrShapeChanged) {
		t.Errorf("insert into fresh with its old shape: %v; want ErrShapeChanged", err)
	}
}

// dialectStores returns the stores of a MySQL test database, whose
// registry must accept lazy commits.
func dialectStores(s shapeDB) (idsql.Stores, bool) {
	if s.ph(1) != "?" {
		return idsql.Stores{}, false
	}
	return idsql.Stores{Workers: registry.New(s.raw, registry.Settings{AcceptLazyCommits: true}), Segments: mysqlstore.New(s.raw)}, true
}

// readKeys returns the keys of table's rows.
func readKeys(t *testing.T, raw *sql.DB, table string) []int64 {
	t.Helper()
	rows, err := raw.Query("SELECT id FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
