package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyform"
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

// TestDecodeUUID: with a uuid7 table in the configuration, decode reads a
// UUID key in its usual text forms as the key it carries, and says the
// UUID; a UUID idsql did not write is refused, naming it.
func TestDecodeUUID(t *testing.T) {
	cfgPath := writeConfig(t, `namespace: text
tables:
  accounts: {strategy: uuid7}
`)
	id := int64(1000)<<22 | 5<<12 | 7
	u, err := keyform.NewUUIDKeys(snowflake.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	b, err := u.UUID(id)
	if err != nil {
		t.Fatal(err)
	}
	text := keyform.FormatUUID(b)
	code, out, stderr := runCmd(t, "decode", "--config", cfgPath, text, "{"+strings.ToUpper(text)+"}")
	if code != 0 || strings.Count(out, text+"\n  key       "+strconv.FormatInt(id, 10)+"\n") != 2 || strings.Count(out, "worker    5\n  sequence  7\n") != 2 {
		t.Fatalf("decode %s: exit %d\n%s%s", text, code, out, stderr)
	}
	code, out, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "accounts", "--json", text)
	if code != 0 || !strings.Contains(out, `"uuid": "`+text+`"`) || !strings.Contains(out, `"id": `+strconv.FormatInt(id, 10)) {
		t.Fatalf("decode --table accounts --json %s: exit %d\n%s%s", text, code, out, stderr)
	}
	v4 := "6ba7b810-9dad-41d1-80b4-00c04fd430c8"
	if code, _, stderr = runCmd(t, "decode", "--config", cfgPath, v4); code != 1 || !strings.Contains(stderr, "not a key of a uuid7 table") {
		t.Errorf("decode of a version 4 UUID: exit %d, %q", code, stderr)
	}
}
