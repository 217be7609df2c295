package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/clocktest"
	"github.com/idsql/idsql/internal/pgtest"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the commands' output")

// boundsConfig has a snowflake table with a text form, a schema-qualified
// one and a segment table.
const boundsConfig = `namespace: shop
layout: leaf
tables:
  orders:      {strategy: snowflake, text: {encoding: base62, prefix: ord_}}
  shop.events: {strategy: snowflake, column: event_id}
  users:       {strategy: segment}
`

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (run go test -update if the change is right):\n%s", path, got)
	}
}

func TestBoundsGolden(t *testing.T) {
	cfg := writeConfig(t, boundsConfig)
	for _, tt := range []struct {
		golden string
		args   []string
	}{
		{"bounds.golden", []string{"bounds", "--config", cfg, "--table", "orders", "--from", "2026-01", "--to", "2026-02-01"}},
		{"bounds_json.golden", []string{"bounds", "--config", cfg, "--table", "orders", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T01:00", "--json"}},
		{"partitions.golden", []string{"partitions", "--config", cfg, "--table", "shop.events", "--from", "2026-01", "--months", "12"}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			code, out, stderr := runCmd(t, tt.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, tt.golden, out)
		})
	}
}

func TestBoundsPartitionsErrors(t *testing.T) {
	cfg := writeConfig(t, boundsConfig)
	tests := []struct {
		args []string
		code int
		says string // in stderr
	}{
		{[]string{"bounds", "--help"}, 0, "Usage: idsql bounds"},
		{[]string{"partitions", "--help"}, 0, "Usage: idsql partitions"},
		{[]string{"bounds", "--config", cfg, "--from", "2026-01", "--to", "2026-02"}, 2, "--table is required"},
		{[]string{"bounds", "--config", cfg, "--table", "orders", "--from", "2026-01"}, 2, "--from and --to are required"},
		{[]string{"bounds", "--config", cfg, "--table", "orders", "--from", "January", "--to", "2026-02"}, 2, `--from "January": want RFC 3339`},
		{[]string{"bounds", "--config", cfg, "--table", "orders", "--from", "2026-02", "--to", "2026-01"}, 1, "is not before to"},
		{[]string{"bounds", "--config", cfg, "--table", "orders", "--from", "2009-01", "--to", "2026-01"}, 1, "before the layout's epoch 2010-11-04T01:42:54.657Z"},
		{[]string{"bounds", "--config", cfg, "--table", "orders", "--from", "2026-01", "--to", "2099-01"}, 1, "after 2080-07-10T17:30:30.209Z, the end of the layout's 41 time bits"},
		{[]string{"bounds", "--config", cfg, "--table", "users", "--from", "2026-01", "--to", "2026-02"}, 1, "table users is a segment table"},
		{[]string{"bounds", "--config", cfg, "--table", "nope", "--from", "2026-01", "--to", "2026-02"}, 1, `no table "nope"`},
		{[]string{"partitions", "--config", cfg, "--table", "orders"}, 2, "--from is required"},
		{[]string{"partitions", "--config", cfg, "--table", "orders", "--from", "2026-01-15"}, 2, "give a month"},
		{[]string{"partitions", "--config", cfg, "--table", "orders", "--from", "2026-01-01T00:00:00+02:00"}, 2, "give a month"},
		{[]string{"partitions", "--config", cfg, "--table", "orders", "--from", "2026-01", "--months", "0"}, 2, "want at least 1"},
		{[]string{"partitions", "--config", cfg, "--table", "users", "--from", "2026-01"}, 1, "table users is a segment table"},
		{[]string{"partitions", "--config", cfg, "--table", "orders", "--from", "2080-01", "--months", "12"}, 1, "after 2080-07-10T17:30:30.209Z"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(t, tt.args...)
			if code != tt.code || !strings.Contains(stderr, tt.says) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, tt.code, tt.says)
			}
		})
	}
}

// TestPartitionsPostgres creates a table partitioned by the printed SQL on
// a real PostgreSQL and inserts through the wrapper at instants of several
// months, each month's first and last millisecond among them, and writes
// each month's first and last possible keys: every row lands in its
// month's partition, and a key past the last month is refused by
// PostgreSQL.
func TestPartitionsPostgres(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	cfgPath := writeConfig(t, `namespace: parts
tables:
  events: {strategy: snowflake}
`)
	code, script, stderr := runCmd(t, "partitions", "--config", cfgPath, "--table", "events", "--from", "2026-01", "--months", "3")
	if code != 0 {
		t.Fatalf("partitions: exit %d: %s", code, stderr)
	}
	if _, err := raw.ExecContext(ctx, "CREATE TABLE events (id BIGINT PRIMARY KEY, month TEXT NOT NULL) PARTITION BY RANGE (id)"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, script); err != nil {
		t.Fatalf("%v\n%s", err, script)
	}

	cfg, err := keyset.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := clocktest.New(jan)
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Static(map[string]int64{"events": 1023}), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	insert := func(at time.Time) error {
		clock.Set(at)
		_, err := db.ExecContext(ctx, "INSERT INTO events (month) VALUES ($1)", at.Format("2006_01"))
		return err
	}
	for i := range 3 {
		start := jan.AddDate(0, i, 0)
		for _, at := range []time.Time{start, start.AddDate(0, 0, 14).Add(7 * time.Hour), start.AddDate(0, 1, 0).Add(-time.Millisecond)} {
			if err := insert(at); err != nil {
				t.Fatalf("insert at %s: %v", at, err)
			}
		}
	}
	// Each month's first and last possible keys, written as they are.
	for i := range 3 {
		start := jan.AddDate(0, i, 0)
		lo, hi, err := cfg.Bounds("events", start, start.AddDate(0, 1, 0))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := raw.ExecContext(ctx, "INSERT INTO events (id, month) VALUES ($1, $3), ($2, $3)", lo, hi, start.Format("2006_01")); err != nil {
			t.Fatalf("insert keys %d and %d of %s: %v", lo, hi, start.Format("2006-01"), err)
		}
	}
	if err := insert(jan.AddDate(0, 3, 0)); err == nil || !strings.Contains(err.Error(), "no partition of relation") {
		t.Errorf("insert in April, past the partitions: %v; want PostgreSQL's refusal", err)
	}

	rows, err := raw.QueryContext(ctx, "SELECT tableoid::regclass::text, id, month FROM events ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var part, month string
		var id int64
		if err := rows.Scan(&part, &id, &month); err != nil {
			t.Fatal(err)
		}
		part = part[strings.LastIndexByte(part, '.')+1:]
		if part != "events_"+month {
			t.Errorf("key %d, made in %s, is in partition %s", id, month, part)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 15 {
		t.Errorf("%d rows, want 15", n)
	}
}
