package main

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/pgtest"
)

// TestDBDefaultCommands: idsql sql prints the defaults' SQL, migrate
// --dry-run shows the same without running it, and migrate --db-defaults
// installs it, after which an INSERT that leaves the key out gets one, in
// a segment table and in a snowflake table. A snowflake table's default
// needs holder.database_workers.
func TestDBDefaultCommands(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	const tables = `
tables:
  users: {strategy: segment, step: 50}
  events: {strategy: snowflake}
`
	cfgPath := writeConfig(t, "namespace: cmdtest\nholder: {kind: postgres, mode: lease, database_workers: 1}"+tables)
	noWorkers := writeConfig(t, "namespace: cmdtest"+tables)
	for _, q := range []string{"CREATE TABLE users (id BIGINT PRIMARY KEY, name TEXT)", "CREATE TABLE events (id BIGINT PRIMARY KEY, name TEXT)"} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"sql", "--dialect", "postgres", "--config", cfgPath}, 0, `CREATE SEQUENCE IF NOT EXISTS "users_id_idsql"`},
		{[]string{"sql", "--dialect", "postgres", "--config", cfgPath}, 0, `CREATE OR REPLACE FUNCTION idsql_snowflake_key_`},
		{[]string{"sql", "--dialect", "mysql", "--config", cfgPath}, 0, "DEFAULT (NEXT VALUE FOR `users_id_idsql`)"},
		{[]string{"sql", "--dialect", "mysql", "--config", cfgPath}, 0, "CREATE OR REPLACE TRIGGER `events_id_idsql`"},
		{[]string{"sql", "--dialect", "postgres", "--config", noWorkers}, 1, "holder.database_workers: is 0"},
		{[]string{"sql", "--dialect", "sqlite", "--config", cfgPath}, 1, "no database-side key default"},
		{[]string{"sql", "--config", cfgPath}, 2, "--dialect is required"},
		{[]string{"migrate", "--dsn", dsn, "--config", cfgPath, "--dry-run"}, 0, "idsql_next_key"},
	} {
		code, out, stderr := runCmd(t, tc.args...)
		if code != tc.code || !strings.Contains(out+stderr, tc.want) {
			t.Errorf("idsql %s: exit %d, want %d and %q\n%s%s", strings.Join(tc.args, " "), code, tc.code, tc.want, out, stderr)
		}
	}
	_, dry, _ := runCmd(t, "migrate", "--dsn", dsn, "--config", cfgPath, "--dry-run")
	_, printed, _ := runCmd(t, "sql", "--dialect", "postgres", "--config", cfgPath)
	if dry != printed {
		t.Errorf("migrate --dry-run shows\n%s\nidsql sql prints\n%s", dry, printed)
	}
	var created bool
	if err := raw.QueryRowContext(ctx, "SELECT to_regclass('idsql_alloc') IS NOT NULL").Scan(&created); err != nil || created {
		t.Fatalf("migrate --dry-run created idsql_alloc (%v, %v)", created, err)
	}
	if code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", cfgPath, "--db-defaults", "--db-block", "1000"); code != 0 {
		t.Fatalf("migrate --db-defaults: exit %d\n%s%s", code, out, stderr)
	}
	var id int64
	if err := raw.QueryRowContext(ctx, "INSERT INTO users (name) VALUES ('x') RETURNING id").Scan(&id); err != nil {
		t.Fatal(err)
	}
	var event int64
	if err := raw.QueryRowContext(ctx, "INSERT INTO events (name) VALUES ('x') RETURNING id").Scan(&event); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{id, event} {
		if code, out, stderr := runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath, strconv.FormatInt(id, 10)); code != 0 ||
			!strings.Contains(out, "instance  database") {
			t.Fatalf("lookup %d: exit %d\n%s%s", id, code, out, stderr)
		}
	}
}
