package main

import (
	"strings"
	"testing"
)

// TestPrintGrants: migrate --print-grants prints the runtime grants of the
// DSN's database for the role, without connecting, and asks for a DSN.
func TestPrintGrants(t *testing.T) {
	code, out, stderr := runCmd(t, "migrate", "--print-grants", "app", "--dsn", "postgres://nobody@127.0.0.1:1/none")
	if code != 0 || !strings.Contains(out, "GRANT SELECT, UPDATE ON idsql_alloc TO app;\n") || !strings.Contains(out, "idsql_workers_lease_id_seq") {
		t.Errorf("PostgreSQL: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "migrate", "--print-grants", "'app'@'%'", "--dsn", "mysql://nobody@127.0.0.1:1/none")
	if code != 0 || !strings.Contains(out, "GRANT EXECUTE ON PROCEDURE idsql_allocate_v1 TO 'app'@'%';\n") {
		t.Errorf("MySQL: exit %d\n%s%s", code, out, stderr)
	}
	t.Setenv("IDSQL_DSN", "")
	if code, _, stderr = runCmd(t, "migrate", "--print-grants", "app"); code != 2 || !strings.Contains(stderr, "--print-grants needs --dsn") {
		t.Errorf("without a DSN: exit %d, %q", code, stderr)
	}
	// --db-defaults: what a writer around idsql needs for the defaults
	// of the configuration's tables (TestDBDefaultWriter* run them).
	cfgPath := writeConfig(t, "namespace: cmdtest\nholder: {kind: postgres, mode: lease, database_workers: 1}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment}\n")
	code, out, stderr = runCmd(t, "migrate", "--print-grants", "writer", "--db-defaults", "--config", cfgPath, "--dsn", "postgres://nobody@127.0.0.1:1/none")
	if code != 0 || !strings.Contains(out, `GRANT USAGE, SELECT, UPDATE ON SEQUENCE "orders_id_idsql", "orders_id_idsql_0", "orders_id_idsql_1", "orders_id_idsql_2", "orders_id_idsql_3" TO writer;`+"\n") ||
		!strings.Contains(out, `GRANT USAGE, SELECT, UPDATE ON SEQUENCE "users_id_idsql" TO writer;`+"\n") || strings.Contains(out, "idsql_alloc") {
		t.Errorf("PostgreSQL defaults: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "migrate", "--print-grants", "'writer'@'%'", "--db-defaults", "--config", cfgPath, "--dsn", "mysql://nobody@127.0.0.1:1/none")
	if code != 0 || !strings.Contains(out, "GRANT SELECT, INSERT ON `users_id_idsql` TO 'writer'@'%';\n") || strings.Contains(out, "orders") {
		t.Errorf("MariaDB defaults: exit %d\n%s%s", code, out, stderr)
	}
}
