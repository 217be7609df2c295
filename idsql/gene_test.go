package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
)

func geneConfig() *keyset.Config {
	return &keyset.Config{Namespace: "gene", Tables: map[string]keyset.TableConfig{
		// Small steps so that rows cross ranges; app bits under the shard.
		"orders":   {Strategy: keyset.Segment, Step: 5, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 3}, App: &keyset.AppConfig{ID: 5, Bits: 4}},
		"accounts": {Strategy: keyset.Segment, Step: 7, Shard: &keyset.ShardConfig{Column: "email", Bits: 6}},
		"apponly":  {Strategy: keyset.Segment, Step: 10, App: &keyset.AppConfig{ID: 2, Bits: 2}},
	}}
}

var geneSchema = []string{
	`CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint NOT NULL, note text)`,
	`CREATE TABLE accounts (id bigint PRIMARY KEY, email varchar(100) NOT NULL)`,
	`CREATE TABLE apponly (id bigint PRIMARY KEY, v int)`,
}

// insertGene inserts rows of orders and accounts every way the wrapper
// fills them (single rows, multi-row statements spanning shards, bind
// parameters and literals, prepared statements) and checks that every key
// carries the shard of its row's column value, and the app bits. With
// inOrder, one process's keys of a table are drawn in order with no gap
// (the in-memory buffer); a Redis queue's background pops may hand a later
// batch out before an earlier one.
func insertGene(t *testing.T, db *idsql.DB, raw *sql.DB, stores idsql.Stores, ph func(int) string, inOrder bool) {
	t.Helper()
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s %v: %v", q, args, err)
		}
	}
	for u := range 20 {
		exec("INSERT INTO orders (user_id, note) VALUES ("+ph(1)+", "+ph(2)+")", u*7, "single")
	}
	for r := range 5 {
		var vals []string
		var args []any
		for i := range 9 {
			vals = append(vals, fmt.Sprintf("(%s, %s)", ph(2*i+1), ph(2*i+2)))
			args = append(args, "multi", r*100+i)
		}
		exec("INSERT INTO orders (note, user_id) VALUES "+strings.Join(vals, ", "), args...)
	}
	exec("INSERT INTO orders (user_id, note) VALUES (12345, 'literal'), (-3, "+ph(1)+"), ("+ph(2)+", 'x')", "neg", int32(77))
	st, err := db.PrepareContext(ctx, "INSERT INTO orders (user_id, note) VALUES ("+ph(1)+", 'prepared'), ("+ph(2)+", 'prepared')")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := st.ExecContext(ctx, i, 1000+i*3); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	for i := range 40 {
		exec("INSERT INTO accounts (email) VALUES ("+ph(1)+"), ("+ph(2)+")", fmt.Sprintf("u%d@example.com", i), fmt.Sprintf("ü%d@example.org", i))
	}
	exec("INSERT INTO accounts (email) VALUES ('lit@example.com')")
	for range 15 {
		exec("INSERT INTO apponly (v) VALUES (1)")
	}

	// A statement that does not set the shard column fails whole.
	_, err = db.ExecContext(ctx, "INSERT INTO orders (note) VALUES ("+ph(1)+")", "no user")
	if err == nil || !strings.Contains(err.Error(), "orders") || !strings.Contains(err.Error(), "user_id") {
		t.Fatalf("insert without the shard column: %v; want an error naming orders and user_id", err)
	}
	_, err = db.ExecContext(ctx, "INSERT INTO orders (user_id, note) VALUES ("+ph(1)+", 'a'), ("+ph(2)+", 'b')", 1, 2.5)
	if !errors.Is(err, keyset.ErrShardValue) || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("float shard value: %v", err)
	}
	var n int
	raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders WHERE note IN ('no user', 'a', 'b')").Scan(&n)
	if n != 0 {
		t.Fatalf("%d rows of refused statements written", n)
	}
	// NamedExec writes back the sharded key the row got.
	named := &struct {
		ID     int64  `db:"id"`
		UserID int64  `db:"user_id"`
		Note   string `db:"note"`
	}{UserID: 4242, Note: "named"}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO orders (user_id, note) VALUES (:user_id, :note)", named); err != nil {
		t.Fatal(err)
	}
	var namedKey int64
	raw.QueryRowContext(ctx, "SELECT id FROM orders WHERE note = 'named'").Scan(&namedKey)
	if named.ID == 0 || named.ID != namedKey {
		t.Fatalf("NamedExec into a sharded table: struct key %d, row key %d", named.ID, namedKey)
	}
	// fill_zero does not apply to a sharded table: a listed key, 0
	// included, is the caller's.
	exec("INSERT INTO orders (id, user_id, note) VALUES (0, 1, 'listed')")
	raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders WHERE id = 0 AND note = 'listed'").Scan(&n)
	if n != 1 {
		t.Fatalf("listed key 0 of a sharded table: %d rows with key 0, want 1", n)
	}
	if _, err := raw.ExecContext(ctx, "DELETE FROM orders WHERE id = 0"); err != nil {
		t.Fatal(err)
	}

	cfg := db.Keys().Config()
	check := func(table, q string, value func(string) any) {
		t.Helper()
		rows, err := raw.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		g := cfg.Tables[table].Gene()
		seen, shards := map[int64]bool{}, map[int]bool{}
		for rows.Next() {
			var id int64
			var v string
			if err := rows.Scan(&id, &v); err != nil {
				t.Fatal(err)
			}
			want, err := cfg.ShardOf(table, value(v))
			if err != nil {
				t.Fatal(err)
			}
			p := g.Decompose(id)
			if seen[id] || p.Shard != want || p.App != g.App || p.Index < 1 {
				t.Fatalf("%s key %d (%+v) for %s: repeated %v; want shard %d, app %d", table, id, p, v, seen[id], want, g.App)
			}
			seen[id], shards[p.Shard] = true, true
			if len(seen) <= 3 || len(seen)%25 == 0 {
				// Keys of different tables may share numbers: lookup
				// lists every explanation, and this one must be among them.
				origins, err := idsql.LookupIn(ctx, cfg, stores, id)
				found := false
				for _, o := range origins {
					found = found || o.Table == table && o.Gene != nil && *o.Gene == p && o.Range.Key == fmt.Sprint(table, "#", p.Shard)
				}
				if err != nil || !found {
					t.Fatalf("lookup %d: %+v, %v; want table %s, %+v", id, origins, err, table, p)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if len(shards) < g.Shards()/2 {
			t.Fatalf("%s: keys in %d shards of %d", table, len(shards), g.Shards())
		}
	}
	check("orders", "SELECT id, CAST(user_id AS CHAR(20)) FROM orders", func(s string) any {
		var v int64
		fmt.Sscan(s, &v)
		return v
	})
	check("accounts", "SELECT id, email FROM accounts", func(s string) any { return s })
	var cnt int
	raw.QueryRowContext(ctx, "SELECT COUNT(*) FROM orders").Scan(&cnt)
	if want := 20 + 45 + 3 + 60 + 1; cnt != want { // + 1: NamedExec
		t.Fatalf("%d orders, want %d", cnt, want)
	}
	// App-only keys: index << 2 | 2, distinct indexes; in order,
	// consecutive ones from 1.
	rows, err := raw.QueryContext(ctx, "SELECT id FROM apponly ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	prev := int64(0)
	for i := int64(1); rows.Next(); i++ {
		var id int64
		rows.Scan(&id)
		if id&3 != 2 || id>>2 <= prev || inOrder && id != i<<2|2 {
			t.Fatalf("apponly key %d after index %d (row %d), want index<<2 | 2 with distinct indexes (in order: %d)", id, prev, i, i<<2|2)
		}
		prev = id >> 2
	}
	// Keys of a sharded table need their shard.
	if _, err := db.Keys().NextID(ctx, "orders"); !errors.Is(err, keyset.ErrSharded) || !strings.Contains(err.Error(), "user_id") {
		t.Fatalf("NextID of a sharded table: %v", err)
	}
}

func TestGeneKeysPostgres(t *testing.T) {
	db, raw, stores := openSegmentsPG(t, geneSchema, geneConfig(), keyset.KeysOptions{})
	insertGene(t, db, raw, stores, func(n int) string { return fmt.Sprint("$", n) }, true)
}

func TestGeneKeysMySQL(t *testing.T) {
	db, raw, stores := openSegmentsMySQL(t, geneSchema, geneConfig(), keyset.KeysOptions{})
	insertGene(t, db, raw, stores, func(int) string { return "?" }, true)
}

// Migrate gives every shard its key. A table that holds rows has every
// shard start above the index of its largest key, on PostgreSQL and
// MariaDB; a table that had a plain key has them start above what it
// handed out.
func TestGeneMigrateAdopts(t *testing.T) {
	for _, dialect := range []string{"postgres", "mysql"} {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			open := openSegmentsPG
			if dialect == "mysql" {
				open = openSegmentsMySQL
			}
			plain := geneConfig()
			accounts := plain.Tables["accounts"]
			accounts.Shard = nil
			plain.Tables["accounts"] = accounts
			db, raw, stores := open(t, append(geneSchema, `INSERT INTO orders VALUES (1000000, 1, 'old')`), plain, keyset.KeysOptions{})
			if _, err := db.Keys().NextIDs(ctx, "accounts", 300); err != nil {
				t.Fatal(err)
			}
			cfg := geneConfig()
			for range 2 { // idempotent
				if err := idsql.MigrateIn(ctx, raw, cfg, stores); err != nil {
					t.Fatal(err)
				}
			}
			keys, err := stores.Segments.ListKeys(ctx)
			if err != nil {
				t.Fatal(err)
			}
			byName := map[string]segment.KeyInfo{}
			for _, k := range keys {
				byName[k.Key] = k
			}
			plainMax := byName["accounts"].MaxID
			for s := range 64 {
				if s < 8 {
					if k, ok := byName[fmt.Sprint("orders#", s)]; !ok || k.MaxID != 1000000>>7 {
						t.Fatalf("orders#%d: %+v, %v; want max_id %d", s, k, ok, 1000000>>7)
					}
				}
				if k, ok := byName[fmt.Sprint("accounts#", s)]; !ok || k.MaxID != plainMax>>6 || plainMax < 300 {
					t.Fatalf("accounts#%d: %+v, %v; want max_id %d (plain key at %d)", s, k, ok, plainMax>>6, plainMax)
				}
			}
			if _, ok := byName["orders"]; ok || len(byName) != 8+64+1+1 {
				t.Fatalf("keys %v", keys)
			}
		})
	}
}

// A request for keys of several shards that one shard refuses (max_id)
// costs the other shards nothing: the keys they drew for it are handed out
// by their next requests. With max_id 13 and 2 shard bits, shard 0's keys
// are 4, 8, 12 and shard 3's 7, 11.
func TestGeneRefusedShardsCostNothing(t *testing.T) {
	cfg := &keyset.Config{Namespace: "geneback", Tables: map[string]keyset.TableConfig{
		"acc": {Strategy: keyset.Segment, Step: 10, MaxID: 13, Shard: &keyset.ShardConfig{Column: "u", Bits: 2}},
	}}
	db, _, _ := openSegmentsPG(t, []string{`CREATE TABLE acc (id bigint PRIMARY KEY, u int)`}, cfg, keyset.KeysOptions{})
	keys, ctx := db.Keys(), context.Background()
	for _, want := range []string{"[4 7 11]", "[8]"} {
		shards := []int{0, 3, 3}
		if want == "[8]" {
			shards = shards[:1]
		}
		if ids, err := keys.AppendShardIDs(ctx, nil, "acc", shards); err != nil || fmt.Sprint(ids) != want {
			t.Fatalf("shards %v: %v, %v; want %s", shards, ids, err, want)
		}
	}
	// Shard 0 draws 12 first; shard 3's next key, 15, is past max_id.
	for range 3 {
		if ids, err := keys.AppendShardIDs(ctx, nil, "acc", []int{0, 3}); !errors.Is(err, keyset.ErrKeySpaceExhausted) || len(ids) != 0 {
			t.Fatalf("shards [0 3] with shard 3 used up: %v, %v; want ErrKeySpaceExhausted and no key", ids, err)
		}
	}
	if ids, err := keys.AppendShardIDs(ctx, nil, "acc", []int{0}); err != nil || fmt.Sprint(ids) != "[12]" {
		t.Fatalf("shard 0 after the refusals: %v, %v; want its last key, 12", ids, err)
	}
	if _, err := keys.AppendShardIDs(ctx, nil, "acc", []int{0}); !errors.Is(err, keyset.ErrKeySpaceExhausted) {
		t.Fatalf("shard 0 used up: %v", err)
	}
}

// max_id caps the composed key; each shard runs out on its own, and a
// batch that crosses the cap gets nothing.
func TestGeneMaxID(t *testing.T) {
	cfg := &keyset.Config{Namespace: "genecap", Tables: map[string]keyset.TableConfig{
		"capped": {Strategy: keyset.Segment, Step: 4, MaxID: 21, Shard: &keyset.ShardConfig{Column: "u", Bits: 1}},
	}}
	logs := &logBuffer{}
	db, _, _ := openSegmentsPG(t, []string{`CREATE TABLE capped (id bigint PRIMARY KEY, u int)`}, cfg, keyset.KeysOptions{Logger: logs.logger()})
	ctx := context.Background()
	keys := db.Keys()
	got := map[int][]int64{}
	for _, shard := range []int{0, 1} {
		for {
			ids, err := keys.AppendShardIDs(ctx, nil, "capped", []int{shard})
			if errors.Is(err, keyset.ErrKeySpaceExhausted) {
				break
			}
			if err != nil || len(ids) != 1 {
				t.Fatalf("shard %d: %v, %v", shard, ids, err)
			}
			got[shard] = append(got[shard], ids[0])
		}
	}
	// Shard 0: 2, 4, ..., 20; shard 1: 3, 5, ..., 21.
	for shard, ids := range got {
		if len(ids) != 10 || ids[0] != int64(2+shard) || ids[9] != int64(20+shard) {
			t.Fatalf("shard %d keys %v", shard, ids)
		}
	}
	if c := strings.Count(logs.String(), "key space"); c != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", c, logs)
	}
}
