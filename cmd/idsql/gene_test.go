package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// decode --table and lookup take a gene key apart the same way.
func TestGeneDecodeLookup(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	cfgPath := writeConfig(t, `namespace: genecmd
tables:
  orders: {strategy: segment, step: 10, shard: {column: user_id, bits: 6}, app: {id: 3, bits: 8}}
`)
	if code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", cfgPath); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}
	cfg, err := keyset.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	stores, err := idsql.StoresFor(raw, cfg.Holder)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, SegmentStore: stores.Segments})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	shard, err := cfg.ShardOf("orders", "bob@example.com")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := keys.AppendShardIDs(ctx, nil, "orders", []int{shard, shard})
	if err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(ids[1], 10)

	code, out, stderr := runCmd(t, "decode", "--config", cfgPath, "--table", "orders", "--json", id)
	var got []decodedSegment
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("decode: exit %d\n%s%s", code, out, stderr)
	}
	if want := (decodedSegment{ID: ids[1], Table: "orders", Index: 2, Shard: shard, App: 3}); len(got) != 1 || got[0] != want {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
	code, out, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath, id)
	want := fmt.Sprintf(`table     orders\n  strategy  segment\n  shard     %d\n  app       3\n  index     2\n  key       orders#%d\n`, shard, shard)
	if code != 0 || !regexp.MustCompile(want).MatchString(out) {
		t.Fatalf("lookup: exit %d, want %s\n%s%s", code, want, out, stderr)
	}
	code, _, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "orders", "5")
	if code != 1 || !regexp.MustCompile(`not a key of table orders`).MatchString(stderr) {
		t.Fatalf("decode of a foreign key: exit %d %s", code, stderr)
	}
}
