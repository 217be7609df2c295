package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

// writeConfig writes yaml to an idsql.yaml in a temporary directory and
// returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "idsql.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errw bytes.Buffer
	code := run(context.Background(), args, &out, &errw)
	return code, out.String(), errw.String()
}

func TestDemo(t *testing.T) {
	var out bytes.Buffer
	if err := demo(context.Background(), &out, t.TempDir(), ""); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	s := out.String()
	for _, re := range []string{
		`INSERT INTO customers \(name\) VALUES \(\?\)\s+"Ada Lovelace"\s+-> id 1\n`,
		`INSERT INTO orders .*"compiler"\s+-> id \d{18,19}\n`,
		`customers\.id\s+name`, `orders\.id\s+customer_id`,
		`worker    1\n`,
		`\n   2 -> table customers \(segment key "customers", range 1\.\.100`,
		`\n   \d{18,19} -> table orders \(snowflake, worker 1`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("demo output does not match %s", re)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
}

func TestDecode(t *testing.T) {
	// Leaf layout: tick 1000 (ms after the epoch), worker 5, sequence 7.
	id := int64(1000)<<22 | 5<<12 | 7
	code, out, stderr := runCmd(t, "decode", itoa(id), "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []struct {
		ID       int64     `json:"id"`
		Time     time.Time `json:"time"`
		Worker   int64     `json:"worker"`
		Sequence int64     `json:"sequence"`
		Layout   string    `json:"layout"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got) != 1 || got[0].Worker != 5 || got[0].Sequence != 7 || got[0].Layout != "leaf" ||
		got[0].Time.UnixMilli() != 1288834974657+1000 {
		t.Errorf("decoded %+v", got)
	}
	// sony: Sonyflake's order, time | sequence | machine ID.
	code, out, _ = runCmd(t, "decode", "--layout", "sony", itoa(int64(3)<<24|2<<16|1))
	if code != 0 || !strings.Contains(out, "worker    1\n") || !strings.Contains(out, "sequence  2\n") {
		t.Errorf("sony decode: exit %d\n%s", code, out)
	}
	code, _, stderr = runCmd(t, "decode", "--layout", "sonyflake", "1")
	if code != 2 || !strings.Contains(stderr, "retired") {
		t.Errorf("decode --layout sonyflake: exit %d, %s; want 2 and the preset's retirement", code, stderr)
	}
	// Every small number decodes to a time right after the epoch: said so.
	code, out, _ = runCmd(t, "decode", "42")
	if code != 0 || !strings.Contains(out, "note      its time is only 0s after the layout's epoch") {
		t.Errorf("decode 42: exit %d\n%s", code, out)
	}
	recent := (time.Now().Add(-time.Hour).UnixMilli()-1288834974657)<<22 | 5<<12 | 7
	code, out, _ = runCmd(t, "decode", itoa(recent))
	if code != 0 || strings.Contains(out, "note") {
		t.Errorf("decode of an ID from an hour ago: exit %d, want no note\n%s", code, out)
	}
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestServeEmbedded runs `idsql serve` on the embedded default, takes IDs,
// then cancels it as SIGTERM would and checks that it exits 0.
// TestServeSIGTERM sends the built binary a real SIGTERM with a request in
// flight and checks the drain and the worker table.
func TestServeEmbedded(t *testing.T) {
	serveAndGet(t, []string{"--data", t.TempDir()},
		"/api/snowflake/get/orders", "/api/segment/get/users/3", "/healthz")
}

// TestServeBannerURLsWork: every URL of the banner answers, a sharded
// table's in its shard form, and a plain segment key's first answer is the
// first key of its first range (start-up drew none).
func TestServeBannerURLsWork(t *testing.T) {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`namespace: banner
holder: {kind: local, instance: b, workers: {"orders@b": 1, "leaf_snowflake@b": 2}, cache_dir: %q}
tables:
  orders: {strategy: snowflake}
  %s: {strategy: segment, shard: {column: user_id, bits: 2}}
`, dir, "%s")
	for _, tt := range []struct{ tables, segment string }{
		{"sharded", "/api/segment/get/sharded?shard=0"},
		{"a_sharded", "/api/segment/get/users"},
	} {
		t.Run(tt.tables, func(t *testing.T) {
			y := fmt.Sprintf(cfg, tt.tables)
			if tt.tables == "a_sharded" {
				y += "  users: {strategy: segment}\n"
			}
			urls, stop, errw := startServe(t, "segment", "--config", writeConfig(t, y), "--dsn", "sqlite:"+filepath.Join(t.TempDir(), "ids.db"), "--migrate")
			if !strings.HasSuffix(urls["segment"], tt.segment) {
				t.Errorf("banner segment URL %q, want one ending in %s", urls["segment"], tt.segment)
			}
			for name, u := range urls {
				if name == "" {
					continue // the banner's text
				}
				body := getOK(t, u)
				if name == "segment" && tt.segment == "/api/segment/get/users" && body != "1" {
					t.Errorf("first key of users %q, want 1 (nothing drawn at start)", body)
				}
			}
			if code := stop(); code != 0 {
				t.Fatalf("serve exited %d: %s", code, errw.String())
			}
		})
	}
}

// TestDecodeTextForm: with --config, decode reads IDs in a table's text
// form as well as in decimal, and says which table's form it was.
func TestDecodeTextForm(t *testing.T) {
	cfgPath := writeConfig(t, `namespace: text
layout: leaf
tables:
  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}
  carts: {strategy: segment, app: {id: 2, bits: 3}, text: {encoding: crockford32, prefix: c_}}
`)
	id := int64(1000)<<22 | 5<<12 | 7
	text := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}.Format(id)
	code, out, stderr := runCmd(t, "decode", "--config", cfgPath, text, itoa(id))
	if code != 0 || strings.Count(out, "worker    5\n  sequence  7\n") != 2 ||
		!strings.Contains(out, "text      "+text+", the text form of table orders") {
		t.Fatalf("decode %s %d: exit %d\n%s%s", text, id, code, out, stderr)
	}
	code, _, stderr = runCmd(t, "decode", "--config", cfgPath, "ord_12")
	if code != 1 || !strings.Contains(stderr, `"ord_12" has the prefix of table orders but is not one of its keys`) {
		t.Errorf("decode ord_12: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "decode", text)
	if code != 1 || !strings.Contains(stderr, "give --config to read the tables' text forms") {
		t.Errorf("decode of a text form without --config: exit %d, %q", code, stderr)
	}
	key := int64(9)<<3 | 2 // index 9, app 2
	ctext := keyset.TextForm{Encoding: keyset.Crockford32, Prefix: "c_"}.Format(key)
	code, out, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "carts", ctext)
	if code != 0 || !strings.Contains(out, "index     9\n") {
		t.Errorf("decode --table carts %s: exit %d\n%s%s", ctext, code, out, stderr)
	}
	code, _, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "carts", text)
	if code != 1 || !strings.Contains(stderr, "a key of table orders (its text form), not of table carts") {
		t.Errorf("decode --table carts of an order: exit %d, %q", code, stderr)
	}
}
