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
}
