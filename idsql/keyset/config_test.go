package keyset

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/snowflake"
)

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

const goodYAML = `namespace: shop
layout: leaf
holder:
  kind: zookeeper
  servers: [127.0.0.1:2181]
  mode: recycle
tables:
  orders: {strategy: snowflake, column: id}
  users:  {strategy: segment, column: id, step: 500}
  public.items: {strategy: snowflake, cached: true}
`

func TestParseGood(t *testing.T) {
	c, err := Parse("idsql.yaml", []byte(goodYAML), now)
	if err != nil {
		t.Fatal(err)
	}
	if c.Namespace != "shop" || c.Holder.Kind != "zookeeper" || c.Holder.Mode != "recycle" {
		t.Errorf("parsed %+v", c)
	}
	if got := strings.Join(c.TableNames(), ","); got != "orders,public.items,users" {
		t.Errorf("tables %s", got)
	}
	if u := c.Tables["users"]; u.StepOrDefault() != 500 || u.KeyColumn() != "id" || c.SegmentKey("users") != "users" {
		t.Errorf("users %+v", u)
	}
	if !c.Tables["public.items"].Cached {
		t.Error("public.items not cached")
	}
	l, err := c.SnowflakeLayout()
	if err != nil || l != snowflake.Leaf {
		t.Errorf("layout %v, %v", l, err)
	}
}

func TestParseCustomLayout(t *testing.T) {
	for _, epoch := range []string{"2020-01-01", "2020-01-01T00:00:00Z", "1577836800000"} {
		y := "namespace: n\nlayout: {time_bits: 40, worker_bits: 10, sequence_bits: 13, unit: 10ms, epoch: " + epoch + "}\ntables: {t: {strategy: snowflake}}\n"
		c, err := Parse("x.yaml", []byte(y), now)
		if err != nil {
			t.Fatalf("epoch %s: %v", epoch, err)
		}
		l, _ := c.SnowflakeLayout()
		want := snowflake.Layout{Name: "custom", TimeBits: 40, WorkerBits: 10, SequenceBits: 13, Unit: 10 * time.Millisecond,
			Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
		if l != want {
			t.Errorf("epoch %s: layout %+v", epoch, l)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"no namespace", "tables: {t: {strategy: snowflake}}\n", "x.yaml: namespace: is required"},
		{"bad namespace", "namespace: 'a b'\ntables: {t: {strategy: snowflake}}\n", `x.yaml:1: namespace: "a b" is not a valid namespace`},
		{"unknown strategy", "namespace: n\ntables:\n  orders:\n    strategy: uuid\n", `x.yaml:4: tables.orders.strategy: unknown strategy "uuid"`},
		{"dotted table line", "namespace: n\ntables:\n  orders: {strategy: snowflake}\n  public.items:\n    column: id\n    strategy: uuid\n", `x.yaml:6: tables.public.items.strategy: unknown strategy "uuid"`},
		{"missing strategy", "namespace: n\ntables:\n  orders: {column: id}\n", `x.yaml:3: tables.orders.strategy: is required`},
		{"bad table name", "namespace: n\ntables:\n  'order items': {strategy: snowflake}\n", `x.yaml:3: tables.order items: "order items" is not a valid table name`},
		{"bad column", "namespace: n\ntables:\n  orders: {strategy: snowflake, column: 'a;b'}\n", `tables.orders.column: "a;b" is not a valid column name`},
		{"bits sum", "namespace: n\nlayout: {time_bits: 41, worker_bits: 10, sequence_bits: 13, epoch: 2020-01-01}\ntables: {t: {strategy: snowflake}}\n", "x.yaml:2: layout: snowflake: invalid layout: time_bits 41 + worker_bits 10 + sequence_bits 13 = 64, want 63"},
		{"future epoch", "namespace: n\nlayout: {time_bits: 41, worker_bits: 10, sequence_bits: 12, epoch: 2030-01-01}\ntables: {t: {strategy: snowflake}}\n", "epoch 2030-01-01T00:00:00Z is in the future"},
		{"exhausted uid", "namespace: n\nlayout: uid\ntables: {t: {strategy: snowflake}}\n", `x.yaml:2: layout: snowflake: invalid layout: preset "uid" (28 time bits of seconds from 2016-05-20) ran out on 2024-11-20`},
		{"runs out soon", "namespace: n\nlayout: {time_bits: 35, worker_bits: 10, sequence_bits: 18, epoch: 2026-01-01}\ntables: {t: {strategy: snowflake}}\n", "less than a year from now"},
		{"unknown field", "namespace: n\ntables: {t: {strategy: snowflake, colum: id}}\n", `x.yaml:2: tables.t.colum: unknown key "colum"; did you mean "column"?`},
		{"unknown top-level key", "namespace: n\ntabels:\n  t: {strategy: snowflake}\n", `x.yaml:2: tabels: unknown key "tabels"; did you mean "tables"? (keys here: namespace, dialect, layout, holder, snowflake, tables, redis)`},
		{"unknown key far from any", "namespace: n\nholder: {colour: blue}\n", `x.yaml:2: holder.colour: unknown key "colour" (keys here: kind, servers,`},
		{"unknown layout field", "namespace: n\nlayout: {time_bit: 41}\ntables: {t: {strategy: snowflake}}\n", `x.yaml:2: layout.time_bit: unknown key "time_bit"; did you mean "time_bits"?`},
		{"empty file", "", "x.yaml: the file is empty (or holds only comments); a configuration needs at least a namespace and its tables, e.g.\n  namespace: shop"},
		{"comments only", "# nothing yet\n", "x.yaml: the file is empty"},
		{"preset and bits", "namespace: n\nlayout: {preset: leaf, time_bits: 41}\ntables: {t: {strategy: snowflake}}\n", "a preset or custom bits, not both"},
		{"holder kind", "namespace: n\nholder: {kind: consul}\ntables: {t: {strategy: snowflake}}\n", `x.yaml:2: holder.kind: unknown holder "consul" (want etcd, local, mysql, postgres or zookeeper)`},
		{"etcd endpoints", "namespace: n\nholder: {kind: etcd}\ntables: {t: {strategy: snowflake}}\n", "holder.endpoints: the etcd holder needs at least one endpoint"},
		{"etcd servers", "namespace: n\nholder: {kind: etcd, servers: [a:1]}\ntables: {t: {strategy: snowflake}}\n", "holder.servers: the etcd holder takes its addresses in holder.endpoints"},
		{"zk endpoints", "namespace: n\nholder: {kind: zookeeper, servers: [a:1], endpoints: [a:1]}\ntables: {t: {strategy: snowflake}}\n", "holder.endpoints: the zookeeper holder takes its addresses in holder.servers"},
		{"endpoints without etcd", "namespace: n\nholder: {kind: postgres, endpoints: [a:1]}\ntables: {t: {strategy: snowflake}}\n", "holder.endpoints: only the etcd holder uses endpoints"},
		{"etcd mode", "namespace: n\nholder: {kind: etcd, endpoints: [a:1], mode: lease}\ntables: {t: {strategy: snowflake}}\n", `holder.mode: "lease" is not a mode of the etcd holder (want sticky, recycle)`},
		{"postgres holder mode", "namespace: n\nholder: {kind: postgres, mode: recycle}\ntables: {t: {strategy: snowflake}}\n", `holder.mode: "recycle" is not a mode of the postgres holder (want sticky, disposable, lease)`},
		{"mysql holder mode", "namespace: n\nholder: {kind: mysql, mode: recycle}\ntables: {t: {strategy: snowflake}}\n", `holder.mode: "recycle" is not a mode of the mysql holder (want sticky, disposable, lease)`},
		{"mysql lease below two heartbeats", "namespace: n\nholder: {kind: mysql, session_timeout: 5s}\ntables: {t: {strategy: snowflake}}\n", "the mysql holder's lease TTL must be at least 6s"},
		{"holder mode", "namespace: n\nholder: {kind: zookeeper, servers: [a:1], mode: lease}\ntables: {t: {strategy: snowflake}}\n", `holder.mode: "lease" is not a mode of the zookeeper holder (want sticky, recycle)`},
		{"zk servers", "namespace: n\nholder: {kind: zookeeper}\ntables: {t: {strategy: snowflake}}\n", "holder.servers: the zookeeper holder needs at least one server"},
		{"worker range", "namespace: n\nholder: {workers: {a: 1024}}\ntables: {t: {strategy: snowflake}}\n", "holder.workers.a: worker ID 1024 out of range 0..1023"},
		{"worker kept for the database", "namespace: n\nholder: {database_workers: 2, workers: {a: 1022}}\ntables: {t: {strategy: snowflake}}\n",
			"holder.workers.a: worker ID 1022 out of range 0..1021 for layout leaf (1022..1023 are holder.database_workers)"},
		{"database workers", "namespace: n\nholder: {database_workers: 1024}\ntables: {t: {strategy: snowflake}}\n", "holder.database_workers: 1024 is outside 0..1023"},
		{"step on snowflake", "namespace: n\ntables: {t: {strategy: snowflake, step: 10}}\n", "tables.t: step and key apply to segment tables only"},
		{"negative step", "namespace: n\ntables: {t: {strategy: segment, step: -1}}\n", "tables.t.step: -1 is negative"},
		{"duplicate key", "namespace: n\ntables: {a: {strategy: segment, key: k}, b: {strategy: segment, key: k}}\n", `tables.b.key: segment key "k" is also used by table a`},
		{"random start", "namespace: n\nsnowflake: {random_start: 5000}\ntables: {t: {strategy: snowflake}}\n", "snowflake.random_start: 5000 out of range 0..2048"},
		{"not yaml", "namespace: [\n", "x.yaml: yaml:"},
		{"second document", "namespace: n\ntables: {t: {strategy: snowflake}}\n---\nnamespace: other\n", "x.yaml:3: a second YAML document starts here"},
		{"second document after explicit start", "---\nnamespace: n\ntables: {t: {strategy: snowflake}}\n...\n# more\n---\ntables: {u: {strategy: segment}}\n", "x.yaml:6: a second YAML document starts here"},
		{"empty second document", "namespace: n\ntables: {t: {strategy: snowflake}}\n---\n", "x.yaml:3: a second YAML document starts here"},
		{"broken second document", "namespace: n\ntables: {t: {strategy: snowflake}}\n--- [x\n", "x.yaml: after the first YAML document: yaml:"},
		{"postgres lease below two heartbeats", "namespace: n\nholder:\n  kind: postgres\n  session_timeout: 5s\ntables: {t: {strategy: snowflake}}\n",
			"x.yaml:4: holder.session_timeout: 5s is shorter than two heartbeats of the worker registry: the postgres holder's lease TTL must be at least 6s (2 x holder.heartbeat 3s)"},
		{"postgres lease 1ms", "namespace: n\nholder: {kind: postgres, mode: lease, session_timeout: 1ms}\ntables: {t: {strategy: snowflake}}\n", "x.yaml:2: holder.session_timeout: 1ms is shorter than two heartbeats"},
		{"zk session 1ms", "namespace: n\nholder:\n  kind: zookeeper\n  servers: [a:1]\n  session_timeout: 1ms\ntables: {t: {strategy: snowflake}}\n",
			"x.yaml:5: holder.session_timeout: 1ms is outside [4s, 40s], the session timeouts ZooKeeper negotiates with the default holder.tick_time 2s (2 to 20 ticks)"},
		{"zk session below 2 ticks", "namespace: n\nholder: {kind: zookeeper, servers: [a:1], session_timeout: 999ms, tick_time: 500ms}\ntables: {t: {strategy: snowflake}}\n",
			"x.yaml:2: holder.session_timeout: 999ms is outside [1s, 10s], the session timeouts ZooKeeper negotiates with holder.tick_time 500ms (2 to 20 ticks)"},
		{"zk session above 20 ticks", "namespace: n\nholder:\n  kind: zookeeper\n  servers: [a:1]\n  tick_time: 2s\n  session_timeout: 41s\ntables: {t: {strategy: snowflake}}\n",
			"x.yaml:6: holder.session_timeout: 41s is outside [4s, 40s], the session timeouts ZooKeeper negotiates with holder.tick_time 2s"},
		{"zk default session above 20 ticks", "namespace: n\nholder:\n  kind: zookeeper\n  servers: [a:1]\n  tick_time: 100ms\ntables: {t: {strategy: snowflake}}\n",
			"x.yaml:2: holder.session_timeout: the default 10s is outside [200ms, 2s], the session timeouts ZooKeeper negotiates with holder.tick_time 100ms"},
		{"negative tick", "namespace: n\nholder:\n  kind: zookeeper\n  servers: [a:1]\n  tick_time: -2s\ntables: {t: {strategy: snowflake}}\n", "x.yaml:5: holder.tick_time: -2s is negative"},
		{"tick without zookeeper", "namespace: n\nholder:\n  kind: postgres\n  tick_time: 2s\ntables: {t: {strategy: snowflake}}\n", "x.yaml:4: holder.tick_time: only the zookeeper holder uses tick_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml), now)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Parse = %v\nwant an error containing %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "not found in type") || strings.Contains(err.Error(), ": EOF") {
				t.Errorf("Parse = %v: names a Go type or yaml's EOF instead of the key", err)
			}
		})
	}
}

// TestParseHolderTimeoutsAccepted: the bounds of the session_timeout
// checks are inclusive, and the defaults pass.
func TestParseHolderTimeoutsAccepted(t *testing.T) {
	for _, holder := range []string{
		"{kind: postgres, session_timeout: 6s}",
		"{kind: postgres}",
		"{kind: postgres, mode: lease, session_timeout: 1m}",
		"{kind: mysql}",
		"{kind: mysql, mode: disposable, session_timeout: 6s}",
		"{kind: zookeeper, servers: [a:1]}",
		"{kind: zookeeper, servers: [a:1], session_timeout: 4s}",
		"{kind: zookeeper, servers: [a:1], session_timeout: 40s}",
		"{kind: zookeeper, servers: [a:1], tick_time: 500ms, session_timeout: 1s}",
		"{kind: zookeeper, servers: [a:1], tick_time: 500ms, session_timeout: 10s}",
		"{kind: zookeeper, servers: [a:1], tick_time: 3s, session_timeout: 1m}",
		"{kind: etcd, endpoints: [a:1], mode: recycle}",
		"{kind: etcd, endpoints: ['http://a:1'], session_timeout: 5s}",
		"{kind: local, session_timeout: 1ms}", // the local holder has no session
	} {
		y := "namespace: n\nholder: " + holder + "\ntables: {t: {strategy: snowflake}}\n"
		if _, err := Parse("x.yaml", []byte(y), now); err != nil {
			t.Errorf("holder %s: %v", holder, err)
		}
	}
	c, err := Parse("x.yaml", []byte("---\nnamespace: n\nholder: {kind: zookeeper, servers: [a:1], tick_time: 500ms}\ntables: {t: {strategy: snowflake}}\n...\n"), now)
	if err != nil || c.Holder.TickTime != 500*time.Millisecond {
		t.Fatalf("one explicit document with tick_time: %+v, %v", c, err)
	}
}

func TestSecondDocumentError(t *testing.T) {
	_, err := Parse("x.yaml", []byte("namespace: n\ntables: {t: {strategy: snowflake}}\n---\nnamespace: m\n"), now)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.File != "x.yaml" || fe.Line != 3 || fe.Field != "" {
		t.Fatalf("error %v: want a *FieldError for x.yaml line 3 and no field", err)
	}
	if want := "idsql: config: x.yaml:3: a second YAML document starts here"; !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("error %q: want it to start with %q", err, want)
	}
}

func TestFieldErrorUnwraps(t *testing.T) {
	_, err := Parse("x.yaml", []byte("namespace: n\nlayout: uid\ntables: {t: {strategy: snowflake}}\n"), now)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "layout" || fe.Line != 2 || !errors.Is(err, snowflake.ErrLayout) {
		t.Fatalf("error %v: want a *FieldError for layout on line 2 wrapping ErrLayout", err)
	}
	// The retired sonyflake preset: refused at load, naming both successors.
	_, err = Parse("x.yaml", []byte("namespace: n\nlayout: sonyflake\ntables: {t: {strategy: snowflake}}\n"), now)
	if !errors.As(err, &fe) || fe.Line != 2 || !strings.Contains(err.Error(), `"sony-widths"`) {
		t.Fatalf("layout: sonyflake: %v, want a *FieldError on line 2 naming sony-widths", err)
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "idsql.yaml")
	if err := os.WriteFile(path, []byte(goodYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) = %v, want ErrNotExist", err)
	}
}

func TestParseTableNamesAndFillZero(t *testing.T) {
	cfg, err := Parse("x.yaml", []byte(`namespace: n
tables:
  orders: {strategy: snowflake}
  '"Mixed Case"': {strategy: snowflake, fill_zero: false}
  'shop."Order Items"': {strategy: segment, fill_zero: true}
  '"a""b"': {strategy: snowflake}
`), now)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		schema, table string
		fill          bool
	}{
		"orders":             {"", "orders", true},
		`"Mixed Case"`:       {"", "Mixed Case", false},
		`shop."Order Items"`: {"shop", "Order Items", true},
		`"a""b"`:             {"", `a"b`, true},
	} {
		tc, ok := cfg.Tables[name]
		schema, table, valid := SplitTableName(name)
		if !ok || !valid || schema != want.schema || table != want.table || tc.FillsZero() != want.fill {
			t.Errorf("%s: configured %v, split %q %q %v, fills zero %v; want %+v", name, ok, schema, table, valid, tc.FillsZero(), want)
		}
		rt := engine.Tables([]string{name}, cfg.Tables)[0].Table
		if rt.String() != name || rt.Schema != want.schema || rt.Name != want.table || rt.KeepZero == want.fill {
			t.Errorf("%s: rewriter table %+v", name, rt)
		}
	}
	// fill_zero does not apply to a sharded table.
	if sharded := (TableConfig{Strategy: Segment, Shard: &ShardConfig{Column: "u", Bits: 2}}); sharded.FillsZero() {
		t.Errorf("a sharded table fills zero keys")
	}
	_, err = Parse("x.yaml", []byte("namespace: n\ntables:\n  t: {strategy: segment, shard: {column: u, bits: 2}, fill_zero: true}\n"), now)
	if err == nil || !strings.Contains(err.Error(), "tables.t.fill_zero: does not apply to a table with shard") {
		t.Errorf("fill_zero on a sharded table: %v", err)
	}
	// No tables: valid (the wrapper passes everything).
	if _, err := Parse("x.yaml", []byte("namespace: n\n"), now); err != nil {
		t.Errorf("no tables: %v", err)
	}
}

// A short session timeout lowers the bound on the wait between attempts
// to acquire a new lease to half of it (a healed process issues again
// within about one lease period); no timeout, or a long one, leaves
// MaxRenewBackoff.
func TestMaxRenewBackoff(t *testing.T) {
	for _, c := range []struct {
		timeout, want time.Duration
	}{
		{0, MaxRenewBackoff},
		{1500 * time.Millisecond, 750 * time.Millisecond},
		{30 * time.Second, MaxRenewBackoff},
	} {
		k := &Keys{cfg: &Config{Holder: HolderConfig{SessionTimeout: c.timeout}}}
		if got := k.maxRenewBackoff(); got != c.want {
			t.Errorf("session_timeout %s: bound %s, want %s", c.timeout, got, c.want)
		}
	}
}
