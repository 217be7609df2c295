package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TestDecodeKeyedAndTypeID: decode reads a keyed text while its variable
// holds the secret, and says which variable is missing when it does not;
// it reads a TypeID of a table with the configured layout.
func TestDecodeKeyedAndTypeID(t *testing.T) {
	cfgPath := writeConfig(t, `namespace: text
layout: leaf
tables:
  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_, key_env: IDSQL_CLI_TEST_ORD_KEY}}
  users: {strategy: snowflake, text: {encoding: typeid, prefix: user}}
`)
	id := int64(1000)<<22 | 5<<12 | 7
	t.Setenv("IDSQL_CLI_TEST_ORD_KEY", "1:cli-test-secret-0123456789")
	keyed := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_", KeyEnv: "IDSQL_CLI_TEST_ORD_KEY"}.Format(id)
	tid := keyset.TextForm{Encoding: keyset.TypeID, Prefix: "user"}.WithLayout(snowflake.Leaf).Format(id)
	code, out, stderr := runCmd(t, "decode", "--config", cfgPath, keyed, tid)
	if code != 0 || strings.Count(out, "worker    5\n  sequence  7\n") != 2 ||
		!strings.Contains(out, "text      "+keyed+", the text form of table orders") ||
		!strings.Contains(out, "text      "+tid+", the text form of table users") {
		t.Fatalf("decode %s %s: exit %d\n%s%s", keyed, tid, code, out, stderr)
	}
	// A decimal key with --table: its text line is the table's form.
	code, out, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "users", strconv.FormatInt(id, 10))
	if code != 0 || !strings.Contains(out, "text      "+tid+", the text form of table users") {
		t.Fatalf("decode --table users %d: exit %d\n%s%s", id, code, out, stderr)
	}
	t.Setenv("IDSQL_CLI_TEST_ORD_KEY", "")
	code, _, stderr = runCmd(t, "decode", "--config", cfgPath, keyed)
	if code != 1 || !strings.Contains(stderr, "IDSQL_CLI_TEST_ORD_KEY is not set") {
		t.Errorf("decode of a keyed text without the secret: exit %d, %q", code, stderr)
	}
}
