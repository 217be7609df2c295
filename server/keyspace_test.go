package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/server"
)

// newKeySpaceServer serves cfgText from an SQLite segment store.
func newKeySpaceServer(t *testing.T, cfgText string) *server.Server {
	t.Helper()
	cfg, err := keyset.Parse("test", []byte(cfgText), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := sqliteServer(t, cfg, cfg, server.Settings{})
	if err := srv.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	return srv
}

// sqliteServer serves cfg from an SQLite segment store migrated for
// migrated (a configuration that may have fewer tables than cfg: those
// were added after migrate ran), with the other settings of s (nil Log:
// none).
func sqliteServer(t *testing.T, migrated, cfg *keyset.Config, s server.Settings) (*server.Server, *keyset.Keys) {
	t.Helper()
	ctx := context.Background()
	store, err := sqlitestore.Open(ctx, t.TempDir()+"/ids.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	if err := idsql.MigrateIn(ctx, store.DB(), migrated, idsql.Stores{Segments: store}); err != nil {
		t.Fatal(err)
	}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: store.DB(), Holder: holder.Fixed(1), SegmentStore: store,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	gen, err := segment.New(ctx, store, segment.Settings{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	s.Keys, s.Segments = keys, gen
	if s.Log == nil {
		s.Log = log.New(io.Discard, "", 0)
	}
	srv, err := server.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, keys
}

// The segment endpoint applies a table's max_id, and /metrics exports how
// much of it is used.
func TestSegmentMaxID(t *testing.T) {
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake}
  capped: {strategy: segment, step: 10, max_id: 25}
`)
	seen := map[int64]bool{}
	for _, ids := range parseIDs(t, mustGet(t, srv, "/api/segment/get/capped/20")) {
		seen[ids] = true
	}
	if len(seen) != 20 {
		t.Fatalf("%d distinct keys, want 20", len(seen))
	}
	_, body, _ := get(t, srv, "GET", "/metrics")
	if !strings.Contains(body, `idsql_key_space_used_ratio{table="capped"} 0.8`) || !strings.Contains(body, `idsql_key_space_max_id{table="capped"} 25`) {
		t.Fatalf("metrics lack the key space gauges at 20 of 25:\n%s", grepLines(body, "key_space"))
	}
	code, _, hdr := get(t, srv, "GET", "/api/segment/get/capped/10")
	if code == http.StatusOK || !strings.Contains(hdr.Get("X-Idsql-Error"), "at most 5 remain below max_id 25") || !strings.Contains(hdr.Get("X-Idsql-Error"), "no key was drawn") {
		t.Fatalf("batch across max_id: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
	// The refused batch cost nothing: the next key is 21, and 22..25 follow.
	if body := mustGet(t, srv, "/api/segment/get/capped"); fmt.Sprint(parseIDs(t, body)) != "[21]" {
		t.Fatalf("key after the refused batch: %s; want 21", body)
	}
	if body := mustGet(t, srv, "/api/segment/get/capped/4"); fmt.Sprint(parseIDs(t, body)) != "[22 23 24 25]" {
		t.Fatalf("the last 4 keys: %s; want 22..25", body)
	}
	code, _, hdr = get(t, srv, "GET", "/api/segment/get/capped")
	if code == http.StatusOK || !strings.Contains(hdr.Get("X-Idsql-Error"), "capped has used its keys up to max_id 25") {
		t.Fatalf("after running out: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
	_, body, _ = get(t, srv, "GET", "/metrics")
	if !strings.Contains(body, `idsql_key_space_used_ratio{table="capped"} 1`) {
		t.Fatalf("metrics after running out:\n%s", grepLines(body, "key_space"))
	}
}

func mustGet(t *testing.T, h http.Handler, target string) string {
	t.Helper()
	code, body, hdr := get(t, h, "GET", target)
	if code != http.StatusOK {
		t.Fatalf("%s: %d %s %q", target, code, body, hdr.Get("X-Idsql-Error"))
	}
	return body
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// /decodeId takes gene keys apart as keyset.Gene does; the segment endpoint
// composes app-only keys and refuses sharded tables (the shard comes from
// a row).
func TestGeneKeys(t *testing.T) {
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake}
  orders: {strategy: segment, shard: {column: user_id, bits: 6}, app: {id: 3, bits: 8}}
  tickets: {strategy: segment, app: {id: 1, bits: 2}}
`)
	ids := parseIDs(t, mustGet(t, srv, "/api/segment/get/tickets/3"))
	if len(ids) != 3 || ids[0] != 1<<2|1 || ids[2] != 3<<2|1 {
		t.Fatalf("tickets keys %v, want index << 2 | 1", ids)
	}
	code, _, hdr := get(t, srv, "GET", "/api/segment/get/orders")
	if code == http.StatusOK || !strings.Contains(hdr.Get("X-Idsql-Error"), "sharded") || !strings.Contains(hdr.Get("X-Idsql-Error"), "user_id") {
		t.Fatalf("sharded table over HTTP: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
	if msg := hdr.Get("X-Idsql-Error"); !strings.Contains(msg, "/api/segment/get/orders?shard=N, N from 0 to 63") {
		t.Errorf("sharded table without a shard: %q does not show the shard form", msg)
	}
	g := keyset.Gene{ShardBits: 6, AppBits: 8, App: 3}
	// The shard form.
	for _, p := range []string{"/api/segment/get/orders/2?shard=42", "/api/segment/get/orders?shard=42"} {
		for _, id := range parseIDs(t, mustGet(t, srv, p)) {
			if d := g.Decompose(id); d.Shard != 42 || d.App != 3 || d.Index < 1 {
				t.Errorf("%s: key %d decomposes to %+v, want shard 42, app 3", p, id, d)
			}
		}
	}
	for _, q := range []string{"?shard=64", "?shard=x", "?shard=-1"} {
		if code, _, _ := get(t, srv, "GET", "/api/segment/get/orders"+q); code == http.StatusOK {
			t.Errorf("/api/segment/get/orders%s answered %d, want a refusal", q, code)
		}
	}
	key, _ := g.Compose(12345, 42)
	body := mustGet(t, srv, "/decodeId?table=orders&id="+strconv.FormatInt(key, 10))
	var d server.DecodedGene
	if err := json.Unmarshal([]byte(body), &d); err != nil || d.Index != 12345 || d.Shard != 42 || d.App != 3 || d.Table != "orders" {
		t.Fatalf("decodeId: %s %v", body, err)
	}
	for _, tt := range []struct{ q, want string }{
		{"table=orders&id=5", "is not a key of table orders"},
		{"table=tickets&id=abc", `invalid id "abc"`},
		{"table=leaf_snowflake&id=5", "is not a segment table with shard or app bits"},
		{"table=nope&id=5", `table "nope" is not configured (configured: leaf_snowflake, orders, tickets)`},
		{"id=1", "missing query parameter table"},
		{"table=orders", "missing query parameter id"},
	} {
		code, _, hdr := get(t, srv, "GET", "/decodeId?"+tt.q)
		if msg := hdr.Get("X-Idsql-Error"); code != http.StatusBadRequest || !strings.Contains(msg, tt.want) {
			t.Errorf("/decodeId?%s: %d %q, want 400 saying %q", tt.q, code, msg, tt.want)
		}
	}
}

// TestMonitorShardGroups: the monitor page lists plain segment keys first,
// then each sharded table's shard keys as one group in natural order
// (orders#2 before orders#10), collapsed while no shard was used.
func TestMonitorShardGroups(t *testing.T) {
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake}
  orders: {strategy: segment, shard: {column: user_id, bits: 4}}
  zebras: {strategy: segment}
`)
	mustGet(t, srv, "/api/segment/get/zebras")
	page := mustGet(t, srv, "/")
	group := strings.Index(page, `<details class="card shardgroup" id="shards-orders">`)
	if plain := strings.Index(page, `id="seg-zebras"`); plain < 0 || group < plain {
		t.Fatalf("plain key at %d, shard group (collapsed) at %d: want the group after the plain key", plain, group)
	}
	if !strings.Contains(page, "sharded table orders: 16 shard keys, none used yet") {
		t.Errorf("collapsed group lacks its summary:\n%s", grepLines(page, "shard"))
	}
	if i2, i10 := strings.Index(page, `id="seg-orders#2"`), strings.Index(page, `id="seg-orders#10"`); i2 < 0 || i10 < i2 {
		t.Errorf("orders#2 at %d, orders#10 at %d: want natural order", i2, i10)
	}
	mustGet(t, srv, "/api/segment/get/orders?shard=10")
	page = mustGet(t, srv, "/")
	if !strings.Contains(page, `id="shards-orders" open>`) || !strings.Contains(page, "16 shard keys, 1 used") {
		t.Errorf("after a request for shard 10 the group is not open with 1 used:\n%s", grepLines(page, "shard"))
	}
}

// TestDecodeTextForm: both decode endpoints read IDs in a table's text form
// as well as in decimal.
func TestDecodeTextForm(t *testing.T) {
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}
  tickets: {strategy: segment, app: {id: 1, bits: 2}, text: {encoding: crockford32, prefix: t_}}
`)
	sf := parseIDs(t, mustGet(t, srv, "/api/snowflake/get/x"))[0]
	text := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}.Format(sf)
	var d server.Decoded
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/decodeSnowflakeId?snowflakeId="+text)), &d); err != nil ||
		d.ID != strconv.FormatInt(sf, 10) || d.Table != "leaf_snowflake" {
		t.Fatalf("decode %s: %+v %v", text, d, err)
	}
	key := parseIDs(t, mustGet(t, srv, "/api/segment/get/tickets"))[0]
	ktext := keyset.TextForm{Encoding: keyset.Crockford32, Prefix: "t_"}.Format(key)
	var g server.DecodedGene
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/decodeId?table=tickets&id="+ktext)), &g); err != nil || g.ID != strconv.FormatInt(key, 10) || g.Index != 1 {
		t.Fatalf("decodeId %s: %+v %v", ktext, g, err)
	}
	code, _, hdr := get(t, srv, "GET", "/decodeId?table=tickets&id="+text)
	if code != http.StatusBadRequest || !strings.Contains(hdr.Get("X-Idsql-Error"), "is a key of table leaf_snowflake (its text form), not of table tickets") {
		t.Errorf("decodeId of another table's text: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
}

// TestDecodeKeyedText: the snowflake decode endpoint reads a keyed text
// while the server's environment holds its secret, and answers 500 naming
// the variable when it does not.
func TestDecodeKeyedText(t *testing.T) {
	t.Setenv("IDSQL_SERVER_TEST_KEY", "1:server-test-secret-0123")
	form := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_", KeyEnv: "IDSQL_SERVER_TEST_KEY"}
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake, text: {encoding: base62, prefix: ord_, key_env: IDSQL_SERVER_TEST_KEY}}
`)
	sf := parseIDs(t, mustGet(t, srv, "/api/snowflake/get/x"))[0]
	text := form.Format(sf)
	var d server.Decoded
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/decodeSnowflakeId?snowflakeId="+text)), &d); err != nil ||
		d.ID != strconv.FormatInt(sf, 10) || d.Table != "leaf_snowflake" {
		t.Fatalf("decode %s: %+v %v", text, d, err)
	}
	t.Setenv("IDSQL_SERVER_TEST_KEY", "")
	code, body, hdr := get(t, srv, "GET", "/decodeSnowflakeId?snowflakeId="+text)
	if code != http.StatusInternalServerError || !strings.Contains(hdr.Get("X-Idsql-Error"), "IDSQL_SERVER_TEST_KEY is not set") {
		t.Errorf("decode without the secret: %d %q", code, hdr.Get("X-Idsql-Error"))
	}
	// The message quotes the text once: the JSON body escapes it once
	// more, and nothing else does.
	var e struct{ Message string }
	want := strconv.Quote(text) + " has the prefix of table leaf_snowflake"
	if err := json.Unmarshal([]byte(body), &e); err != nil || !strings.HasPrefix(e.Message, want) || !strings.HasPrefix(hdr.Get("X-Idsql-Error"), want) {
		t.Errorf("decode without the secret: message %q, header %q; want both to start %q", e.Message, hdr.Get("X-Idsql-Error"), want)
	}
}

// TestUUID7Route: /api/uuid7/get/{table} hands out a uuid7 table's keys as
// UUIDv7s (one, and a batch, each reading back as a key of the table's
// layout, none twice); a name that is no uuid7 table is 404, and the
// decode endpoint reads the UUID as the key it carries.
func TestUUID7Route(t *testing.T) {
	cfg, err := keyset.Parse("test", []byte(`namespace: test
tables:
  accounts: {strategy: uuid7}
  tickets: {strategy: segment}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// One worker ID (the test holder's) for the one leased table.
	srv, _ := sqliteServer(t, cfg, cfg, server.Settings{SnowflakeOff: "no snowflake table in this test"})
	u, err := keyform.NewUUIDKeys(snowflake.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{mustGet(t, srv, "/api/uuid7/get/accounts")}
	texts = append(texts, strings.Split(mustGet(t, srv, "/api/uuid7/get/accounts/50"), "\n")...)
	if len(texts) != 51 {
		t.Fatalf("%d UUIDs; want 51", len(texts))
	}
	seen := map[string]bool{}
	var last int64
	for _, s := range texts {
		b, err := keyform.ParseUUID(s)
		if err != nil || keyform.FormatUUID(b) != s {
			t.Fatalf("%q is not a canonical UUID: %v", s, err)
		}
		k, err := u.Key(b)
		if err != nil || seen[s] || k <= last {
			t.Fatalf("%s: key %d (after %d), %v, seen before %v", s, k, last, err, seen[s])
		}
		seen[s], last = true, k
	}
	var d server.Decoded
	if err := json.Unmarshal([]byte(mustGet(t, srv, "/decodeSnowflakeId?snowflakeId="+texts[0])), &d); err != nil || d.ID == "" {
		t.Fatalf("decode %s: %+v %v", texts[0], d, err)
	}
	for _, p := range []string{"/api/uuid7/get/tickets", "/api/uuid7/get/nosuch"} {
		if code, _, hdr := get(t, srv, "GET", p); code != http.StatusNotFound || !strings.Contains(hdr.Get("X-Idsql-Error"), "names no uuid7 table") {
			t.Errorf("%s: %d %q; want 404 naming no uuid7 table", p, code, hdr.Get("X-Idsql-Error"))
		}
	}
}
