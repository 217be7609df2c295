package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestPostgresCommands runs migrate, lookup, workers and segments against a
// real PostgreSQL schema.
func TestPostgresCommands(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	cfgPath := writeConfig(t, `namespace: cmdtest
holder: {kind: postgres, instance: test-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 50}
`)
	if _, err := raw.Exec("CREATE TABLE users (id BIGINT PRIMARY KEY); INSERT INTO users VALUES (41), (977)"); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", cfgPath)
	if code != 0 || !regexp.MustCompile(`(?m)^users\s+977\s+50\s`).MatchString(out) {
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
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, Registry: stores.Workers, SegmentStore: stores.Segments})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	orderID, err := keys.NextID(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	userID, err := keys.NextID(ctx, "users")
	if err != nil {
		t.Fatal(err)
	}
	if userID <= 977 {
		t.Errorf("adopted key issued %d, not above the table's MAX(id) 977", userID)
	}

	code, out, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath,
		strconv.FormatInt(orderID, 10), strconv.FormatInt(userID, 10))
	if code != 0 {
		t.Fatalf("lookup: exit %d\n%s%s", code, out, stderr)
	}
	for _, re := range []string{`table     orders\n  strategy  snowflake\n`, `table     users\n  strategy  segment\n  key       users\n  range     978\.\.1027`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("lookup output lacks %s:\n%s", re, out)
		}
	}
	// Without a configuration (as the README shows it): the worker table
	// and idsql_alloc_log alone answer; --json gives the same.
	code, out, stderr = runCmd(t, "lookup", "--dsn", dsn, strconv.FormatInt(orderID, 10), strconv.FormatInt(userID, 10))
	for _, re := range []string{`table     orders \(as the worker table records it; no configuration given\)\n  strategy  snowflake\n`,
		`strategy  segment\n  key       users\n  range     978\.\.1027`, `namespace cmdtest\n`} {
		if code != 0 || !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("lookup without --config: exit %d, output lacks %s:\n%s%s", code, re, out, stderr)
		}
	}
	// --json, without a configuration and with one: the same origins;
	// without, they say they come from the records (and a segment's table,
	// which only the configuration names, is not given).
	for _, c := range []struct {
		name   string
		config []string
	}{
		{"lookup --json without --config", nil},
		{"lookup --json --config", []string{"--config", cfgPath}},
	} {
		args := append([]string{"lookup", "--dsn", dsn, "--json"}, c.config...)
		code, out, stderr := runCmd(t, append(args, strconv.FormatInt(orderID, 10), strconv.FormatInt(userID, 10), "42")...)
		var looked []struct {
			Input   string
			ID      int64
			Error   string
			Origins []struct {
				Table, Strategy, Key, Instance, Namespace string
				Worker                                    *int64
				RangeFirst                                int64 `json:"range_first"`
				FromRecords                               bool  `json:"from_records"`
			}
		}
		if err := json.Unmarshal([]byte(out), &looked); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		bare, usersTable := c.config == nil, "users"
		if bare {
			usersTable = ""
		}
		if code != 1 || len(looked) != 3 || looked[0].ID != orderID || len(looked[0].Origins) != 1 || len(looked[1].Origins) != 1 ||
			looked[0].Origins[0].Table != "orders" || looked[0].Origins[0].Strategy != "snowflake" || looked[0].Origins[0].Namespace != "cmdtest" ||
			looked[0].Origins[0].Worker == nil || looked[0].Origins[0].FromRecords != bare ||
			looked[1].Origins[0].Table != usersTable || looked[1].Origins[0].Strategy != "segment" || looked[1].Origins[0].Key != "users" ||
			looked[1].Origins[0].RangeFirst != 978 || looked[1].Origins[0].FromRecords != bare ||
			!strings.Contains(looked[2].Error, "42: no table of namespace cmdtest issued this ID") || stderr != "idsql lookup: 1 of 3 IDs not looked up: 1 not found\n" {
			t.Errorf("%s: exit %d, %+v\n%s", c.name, code, looked, stderr)
		}
	}
	code, _, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath, "123456789012")
	if code != 1 || !regexp.MustCompile(`no table of namespace cmdtest issued this ID`).MatchString(stderr) {
		t.Errorf("lookup of a foreign ID: exit %d, %q", code, stderr)
	}
	// Invalid arguments are told apart from IDs no table issued.
	code, _, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath, "abc", "0", "123456789012")
	for _, want := range []string{`"abc" is not an ID: a positive 64-bit decimal integer or a key in a table's text form`, `"0" is not an ID`,
		"123456789012: no table of namespace cmdtest issued this ID", "3 of 3 IDs not looked up: 2 invalid, 1 not found"} {
		if code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("lookup abc 0 123456789012: exit %d, %q; want it to say %q", code, stderr, want)
		}
	}

	code, out, stderr = runCmd(t, "workers", "--dsn", dsn, "--config", cfgPath)
	if code != 0 || !regexp.MustCompile(`(?m)^\d+\s+orders\s+\S+\s+\d+\s+postgres`).MatchString(out) {
		t.Errorf("workers: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "segments", "--dsn", dsn)
	if code != 0 || !regexp.MustCompile(`(?m)^users\s+1027\s+50\s`).MatchString(out) {
		t.Errorf("segments: exit %d\n%s%s", code, out, stderr)
	}
}
