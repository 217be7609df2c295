package main

import (
	"database/sql"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// errorCase is one error a user can reach from the command line or the
// ID server, with what its message must say: the cause, and where there
// is one, the fix.
type errorCase struct {
	name string
	// args runs `idsql args...`; {pg}, {my} are fresh PostgreSQL and
	// MariaDB databases (nothing migrated until a case does), {dir} a
	// temporary directory with the configuration files of TestErrorMessages.
	args []string
	// serve, instead, starts `idsql serve --addr 127.0.0.1:0 serve...`
	// for the http cases that follow (its stderr is checked when it stops).
	serve []string
	// http, instead, asks the server the last serve case started for
	// this path; code is the HTTP status, says in both the body's message
	// and X-Idsql-Error.
	http string
	code int      // exit code or HTTP status
	says []string // in stderr (or the HTTP answer)
	not  string   // never in stderr
}

// errorCases lists, in one place, every error path a user can reach from
// the CLI and the server, in the order TestErrorMessages runs them (some
// depend on what an earlier one did: migrate).
var errorCases = []errorCase{
	// Usage.
	{name: "no command", code: 2, says: []string{"Commands:"}},
	{name: "help", args: []string{"help"}, says: []string{"Commands:"}},
	{name: "unknown command", args: []string{"nope"}, code: 2, says: []string{`unknown command "nope"`}},
	{name: "decode --help", args: []string{"decode", "--help"}, says: []string{"Usage: idsql decode"}},
	{name: "demo -h", args: []string{"demo", "-h"}, says: []string{"Usage: idsql demo"}},
	{name: "lookup --help: --config is optional", args: []string{"lookup", "--help"}, says: []string{"Usage: idsql lookup --dsn DSN [--config idsql.yaml | --namespace NS]",
		"The configuration (--config, or ./idsql.yaml when there is one) is optional"}},
	{name: "migrate --help", args: []string{"migrate", "--help"}, says: []string{"Usage: idsql migrate"}},
	{name: "workers --help", args: []string{"workers", "--help"}, says: []string{"Usage: idsql workers"}},
	{name: "segments --help", args: []string{"segments", "--help"}, says: []string{"Usage: idsql segments"}},
	{name: "serve --help", args: []string{"serve", "--help"}, says: []string{"Usage: idsql serve", "--snowflake-table"}},
	{name: "decode without ID", args: []string{"decode"}, code: 2, says: []string{"no ID given"}},
	{name: "unknown flag", args: []string{"decode", "--bogus", "1"}, code: 2, says: []string{"flag provided but not defined"}},
	{name: "decode layout preset that runs out", args: []string{"decode", "--layout", "uid", "1"}, code: 2, says: []string{"ran out"}},
	{name: "decode --layout and --config", args: []string{"decode", "--layout", "leaf", "--config", "x.yaml", "1"}, code: 2, says: []string{"not both"}},
	{name: "decode not a number", args: []string{"decode", "abc"}, code: 1, says: []string{`"abc" is not a 64-bit decimal integer`}},
	{name: "decode negative", args: []string{"decode", "-5"}, code: 2, says: []string{"flag provided but not defined"}},
	{name: "decode ID from the future", args: []string{"decode", "9223372036854775807"}, code: 1, says: []string{"is it from another layout"}},
	{name: "decode js53 above 2^53", args: []string{"decode", "--layout", "js53", "9007199254740993"}, code: 1,
		says: []string{"9007199254740993 is above 2^53 - 1 = 9007199254740991, the largest ID of layout js53"}, not: "after"},
	{name: "configuration missing: one idsql: prefix", args: []string{"decode", "--config", "/nonexistent.yaml", "1"}, code: 1,
		says: []string{"idsql decode: config:", "nonexistent.yaml"}, not: "idsql decode: idsql:"},
	{name: "decode text of digits that is also a crockford32 key", args: []string{"decode", "--config", "{dir}/text.yaml", "0000000000010"}, code: 1,
		says: []string{`"0000000000010" reads as the decimal 10, and as 32 in the text form of table carts (crockford32): it is not decoded as either`,
			"set tables.T.text.prefix"}},
	{name: "lookup without ID", args: []string{"lookup", "--dsn", "{pg}"}, code: 2, says: []string{"no ID given"}},
	{name: "segments without --dsn", args: []string{"segments"}, code: 2, says: []string{"--dsn is required"}},
	{name: "serve extra argument", args: []string{"serve", "extra"}, code: 2, says: []string{`unexpected argument "extra"`}},

	// Before migrate.
	{name: "serve before migrate, PostgreSQL", args: []string{"serve", "--config", "{dir}/pg.yaml", "--dsn", "{pg}", "--addr", "127.0.0.1:0", "--quiet"}, code: 1,
		says: []string{`"idsql_alloc" does not exist`, "run `idsql migrate --config {dir}/pg.yaml --dsn ...` once, or serve with --migrate"}},
	{name: "serve before migrate, MariaDB", args: []string{"serve", "--config", "{dir}/my.yaml", "--dsn", "{my}", "--addr", "127.0.0.1:0", "--quiet"}, code: 1,
		says: []string{"Error 1146", "idsql_alloc' doesn't exist", "run `idsql migrate --config {dir}/my.yaml --dsn ...` once"}},
	{name: "segments before migrate", args: []string{"segments", "--dsn", "{my}"}, code: 1, says: []string{"1146", "run `idsql migrate"}},
	{name: "lookup before migrate", args: []string{"lookup", "--dsn", "{pg}", "12345"}, code: 1, says: []string{"idsql_workers", "run `idsql migrate"}},
	{name: "migrate a table without its key column", args: []string{"migrate", "--config", "{dir}/nokey.yaml", "--dsn", "{pg}"}, code: 1,
		says: []string{"table nokey", "has no column id", "set tables.nokey.column in the configuration"}},
	{name: "migrate", args: []string{"migrate", "--config", "{dir}/pg.yaml", "--dsn", "{pg}"}},
	{name: "serve a table added after migrate", args: []string{"serve", "--config", "{dir}/later.yaml", "--dsn", "{pg}", "--addr", "127.0.0.1:0", "--quiet"}, code: 1,
		says: []string{`table accounts: its segment key "accounts" has no row in idsql_alloc`, "run `idsql migrate --config idsql.yaml --dsn ...`",
			"once after adding the table to the configuration"}},
	{name: "lookup of an ID nobody issued", args: []string{"lookup", "--dsn", "{pg}", "123456789012"}, code: 1,
		says: []string{"123456789012: no table of namespace et issued this ID", "1 of 1 IDs not looked up: 1 not found"}},
	{name: "lookup of no ID", args: []string{"lookup", "--dsn", "{pg}", "abc"}, code: 1,
		says: []string{`"abc" is not an ID: a positive 64-bit decimal integer or a key in a table's text form`}},

	// The ID server: segment tables only, under the local holder.
	{name: "serve segment tables only", serve: []string{"--config", "{dir}/segonly.yaml", "--dsn", "sqlite:{dir}/ids.db", "--migrate"},
		says: []string{"snowflake keys that name no snowflake table are refused: the configuration has no snowflake table", "name it with --snowflake-table",
			// The server logs a client's mistake too (a line a second at most).
			`idsql server: GET /api/snowflake/get/coupon: 404: snowflake key "coupon" names no snowflake table`}},
	{name: "snowflake key with no snowflake table", http: "/api/snowflake/get/coupon", code: 404,
		says: []string{`snowflake key "coupon" names no snowflake table`, "--snowflake-table"}},
	{name: "sharded table without ?shard", http: "/api/segment/get/orders", code: 400,
		says: []string{"table orders is sharded: no shard given", "ask for one shard's keys with /api/segment/get/orders?shard=N, N from 0 to 3"}},
	{name: "?shard out of range", http: "/api/segment/get/orders?shard=9", code: 400, says: []string{`shard "9" is not a shard`, "N from 0 to 3"}},
	{name: "unknown segment key", http: "/api/segment/get/nope", code: 404,
		says: []string{"Result{id=-2, status=EXCEPTION}: ", `unknown segment key "nope"`, "run `idsql migrate`"}},
	{name: "bad segment key", http: "/api/segment/get/a%20b", code: 400, says: []string{`invalid segment key "a b"`}},
	{name: "bad count", http: "/api/segment/get/users/0", code: 400, says: []string{`invalid count "0": want a whole number from 1 to`}},
	{name: "batch crossing max_id (first request)", http: "/api/segment/get/capped/9", code: 500,
		says: []string{"a batch of 9 keys reaching 9 would cross max_id 5", "the 5 keys below max_id drawn for it are kept for later requests", "ask for at most 5 keys"}},
	{name: "batch bigger than what remains", http: "/api/segment/get/capped/6", code: 500,
		says: []string{"6 keys asked, but at most 5 remain below max_id 5", "no key was drawn"}},
	{name: "bad snowflakeId", http: "/decodeSnowflakeId?snowflakeId=abc", code: 400, says: []string{"abc"}},
	{name: "no such endpoint", http: "/nope", code: 404, says: []string{`no such endpoint: "/nope"`}},
}

// TestErrorMessages runs errorCases against the real databases.
func TestErrorMessages(t *testing.T) {
	dir := t.TempDir()
	pgRaw, pgDSN := pgtest.Open(t)
	myDSN := mysqltest.Database(t)
	myRaw, err := sql.Open("mysql", myDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { myRaw.Close() })
	for _, db := range []*sql.DB{pgRaw, myRaw} {
		for _, q := range []string{"CREATE TABLE users (id BIGINT PRIMARY KEY)", "CREATE TABLE accounts (id BIGINT PRIMARY KEY)", "CREATE TABLE nokey (ident BIGINT PRIMARY KEY)"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	for name, yaml := range map[string]string{
		"pg.yaml":    "namespace: et\nholder: {kind: postgres, instance: et-1}\ntables:\n  users: {strategy: segment}\n  orders: {strategy: snowflake}\n",
		"my.yaml":    "namespace: et\nholder: {kind: mysql, instance: et-1}\ntables:\n  users: {strategy: segment}\n",
		"later.yaml": "namespace: et\nholder: {kind: postgres, instance: et-1}\ntables:\n  users: {strategy: segment}\n  accounts: {strategy: segment}\n",
		"nokey.yaml": "namespace: et\ntables:\n  nokey: {strategy: segment}\n",
		"text.yaml":  "namespace: et\ntables:\n  carts: {strategy: segment, text: {encoding: crockford32}}\n",
		"segonly.yaml": "namespace: so\nholder: {kind: local, instance: so-1, workers: {}}\ntables:\n" +
			"  users: {strategy: segment}\n  orders: {strategy: segment, shard: {column: user_id, bits: 2}}\n  capped: {strategy: segment, step: 10, max_id: 5}\n",
	} {
		writeFile(t, filepath.Join(dir, name), yaml)
	}
	expand := func(s string) string {
		return strings.NewReplacer("{pg}", pgDSN, "{my}", myDSN, "{dir}", dir).Replace(s)
	}
	var base string
	var stop func() int
	var serveCase errorCase
	var serveErr interface{ String() string }
	stopServe := func() {
		if stop == nil {
			return
		}
		code := stop()
		stderr := serveErr.String()
		if code != 0 {
			t.Errorf("%s: exit %d: %s", serveCase.name, code, stderr)
		}
		for _, s := range serveCase.says {
			if !strings.Contains(stderr, expand(s)) {
				t.Errorf("%s: stderr lacks %q:\n%s", serveCase.name, expand(s), stderr)
			}
		}
		stop = nil
	}
	defer stopServe()
	for _, c := range errorCases {
		switch {
		case c.serve != nil:
			stopServe()
			var args []string
			for _, a := range c.serve {
				args = append(args, expand(a))
			}
			var urls map[string]string
			urls, stop, serveErr = startServe(t, "monitor", args...)
			base, serveCase = strings.TrimSuffix(urls["monitor"], "/"), c
		case c.http != "":
			resp, err := http.Get(base + c.http)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var a struct{ Message string }
			if err := json.Unmarshal(body, &a); err != nil {
				t.Errorf("%s: body %q: %v", c.name, body, err)
			}
			if resp.StatusCode != c.code {
				t.Errorf("%s: GET %s: %d %q; want %d", c.name, c.http, resp.StatusCode, a.Message, c.code)
			}
			for _, s := range c.says {
				if strings.HasPrefix(s, "Result{") {
					if !strings.HasPrefix(a.Message, s) {
						t.Errorf("%s: message %q does not start with %q", c.name, a.Message, s)
					}
					continue
				}
				if !strings.Contains(a.Message, s) || !strings.Contains(resp.Header.Get("X-Idsql-Error"), s) {
					t.Errorf("%s: message %q, X-Idsql-Error %q; want both to say %q", c.name, a.Message, resp.Header.Get("X-Idsql-Error"), s)
				}
			}
		default:
			var args []string
			for _, a := range c.args {
				args = append(args, expand(a))
			}
			t.Setenv("IDSQL_DSN", "")
			code, _, stderr := runCmd(t, args...)
			if code != c.code {
				t.Errorf("%s: idsql %s: exit %d, want %d; stderr:\n%s", c.name, strings.Join(c.args, " "), code, c.code, stderr)
			}
			for _, s := range c.says {
				if !strings.Contains(stderr, expand(s)) {
					t.Errorf("%s: idsql %s: stderr lacks %q:\n%s", c.name, strings.Join(c.args, " "), expand(s), stderr)
				}
			}
			if c.not != "" && strings.Contains(stderr, c.not) {
				t.Errorf("%s: stderr says %q:\n%s", c.name, c.not, stderr)
			}
		}
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}
