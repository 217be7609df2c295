package main

import (
	"bytes"
	"context"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/tlstest"
)

func TestMySQLDSN(t *testing.T) {
	for _, c := range []struct {
		in                string
		user, pass, addr  string
		db                string
		lazy, oneWriter   bool
		parseTime         bool
		params            map[string]string
		timeout           time.Duration
		interpolateParams bool
	}{
		{in: "mysql://u:p%40ss@db.example:3307/shop", user: "u", pass: "p@ss", addr: "db.example:3307", db: "shop", parseTime: true},
		{in: "mariadb://u@db.example/shop?timeout=5s&interpolateParams=true", user: "u", addr: "db.example:3306", db: "shop", parseTime: true,
			timeout: 5 * time.Second, interpolateParams: true},
		{in: "mysql://u:p@h:1/d?accept_lazy_commits=true&parseTime=false", user: "u", pass: "p", addr: "h:1", db: "d", lazy: true},
		{in: "u:p@tcp(127.0.0.1:3306)/shop", user: "u", pass: "p", addr: "127.0.0.1:3306", db: "shop", parseTime: true},
		{in: "u:p@tcp(h:2)/shop?accept_lazy_commits=1&sql_mode=%27ANSI%27", user: "u", pass: "p", addr: "h:2", db: "shop", parseTime: true, lazy: true,
			params: map[string]string{"sql_mode": "'ANSI'"}},
		{in: "mariadb://u@galera-writer/shop?one_writer_node=true&timeout=2s", user: "u", addr: "galera-writer:3306", db: "shop", parseTime: true,
			oneWriter: true, timeout: 2 * time.Second}, // not a bound: the DSN's timeout=2s, the parse's input read back
	} {
		if dialect.ForDSN(c.in) != dialect.MySQL {
			t.Errorf("%s: not recognised as MySQL", c.in)
			continue
		}
		out, accepted, err := mysqlDSN(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := mysql.ParseDSN(out)
		if err != nil {
			t.Errorf("%s -> %s: %v", c.in, out, err)
			continue
		}
		if got.User != c.user || got.Passwd != c.pass || got.Net != "tcp" || got.Addr != c.addr || got.DBName != c.db ||
			got.ParseTime != c.parseTime || accepted.AcceptLazyCommits != c.lazy || accepted.OneWriterNode != c.oneWriter ||
			got.Timeout != c.timeout || got.InterpolateParams != c.interpolateParams {
			t.Errorf("%s -> %s: %+v, accepted %+v", c.in, out, got, accepted)
		}
		for k, v := range c.params {
			if got.Params[k] != v {
				t.Errorf("%s -> %s: param %s = %q, want %q", c.in, out, k, got.Params[k], v)
			}
		}
		for _, own := range []string{lazyParam, oneWriterParam} {
			if _, ok := got.Params[own]; ok {
				t.Errorf("%s -> %s: %s reaches the driver", c.in, out, own)
			}
		}
		if strings.Contains(redactMySQL(out), c.pass+"@") && c.pass != "" {
			t.Errorf("redacted %s shows the password", redactMySQL(out))
		}
	}
	for _, notMySQL := range []string{"postgres://u@h/db", "host=h dbname=d", "sqlite:x.db"} {
		if dialect.ForDSN(notMySQL) == dialect.MySQL {
			t.Errorf("%s taken for MySQL", notMySQL)
		}
	}
	code, _, stderr := runCmd(t, "segments", "--dsn", "mysql://u@h/d?accept_lazy_commits=maybe")
	if code != 2 || !strings.Contains(stderr, "accept_lazy_commits") {
		t.Errorf("bad accept_lazy_commits: exit %d, %q", code, stderr)
	}
}

// mysqlURL returns the test database as a mysql:// URL, which the
// commands take as well as go-sql-driver's form.
func mysqlURL(t *testing.T, dsn string) string {
	t.Helper()
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", Host: c.Addr, Path: "/" + c.DBName, User: url.UserPassword(c.User, c.Passwd)}
	return u.String()
}

// TestMySQLCommands runs migrate, lookup, workers, segments and demo
// against a MariaDB database, with both DSN forms.
func TestMySQLCommands(t *testing.T) {
	raw, dsn := mysqltest.Open(t)
	ctx := context.Background()
	// The test server does not flush every commit; the worker table must
	// be told to accept it.
	lazyDSN := dsn + "&" + lazyParam + "=true"
	if !strings.Contains(dsn, "?") {
		lazyDSN = dsn + "?" + lazyParam + "=true"
	}
	cfgPath := writeConfig(t, `namespace: cmdtest
holder: {kind: mysql, instance: test-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 50}
`)
	code, out, stderr := runCmd(t, "migrate", "--dsn", mysqlURL(t, dsn)+"?"+lazyParam+"=true", "--config", cfgPath)
	if code != 0 || !regexp.MustCompile(`(?m)^migrated mysql database`).MatchString(out) || !regexp.MustCompile(`(?m)^users\s+0\s+50\s`).MatchString(out) {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}

	cfg, err := keyset.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true})
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{DB: raw, Registry: reg, SegmentStore: mysqlstore.New(raw)})
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

	code, out, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath,
		strconv.FormatInt(orderID, 10), strconv.FormatInt(userID, 10))
	if code != 0 {
		t.Fatalf("lookup: exit %d\n%s%s", code, out, stderr)
	}
	for _, re := range []string{`table     orders\n  strategy  snowflake\n`, `table     users\n  strategy  segment\n  key       users\n  range     1\.\.50`} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("lookup output lacks %s:\n%s", re, out)
		}
	}
	code, _, stderr = runCmd(t, "lookup", "--dsn", dsn, "--config", cfgPath, "123456789012")
	if code != 1 || !strings.Contains(stderr, "no table of namespace cmdtest issued this ID") {
		t.Errorf("lookup of a foreign ID: exit %d, %q", code, stderr)
	}
	code, out, stderr = runCmd(t, "workers", "--dsn", dsn, "--config", cfgPath)
	if code != 0 || !regexp.MustCompile(`(?m)^\d+\s+orders\s+test-1\s+\d+\s+mysql/sticky\s`).MatchString(out) {
		t.Errorf("workers: exit %d\n%s%s", code, out, stderr)
	}
	code, out, stderr = runCmd(t, "segments", "--dsn", mysqlURL(t, dsn))
	if code != 0 || !regexp.MustCompile(`(?m)^users\s+50\s+50\s`).MatchString(out) {
		t.Errorf("segments: exit %d\n%s%s", code, out, stderr)
	}

	// The demo on the same database: its own tables, dropped at the end.
	var demoOut bytes.Buffer
	if err := demo(ctx, &demoOut, t.TempDir(), lazyDSN); err != nil {
		t.Fatalf("demo: %v\n%s", err, demoOut.String())
	}
	s := demoOut.String()
	for _, re := range []string{
		`on a mysql database`,
		`INSERT INTO idsql_demo_customers \(name\) VALUES \(\?\)\s+"Ada Lovelace"\s+-> id \d+\n`,
		`INSERT INTO idsql_demo_orders .*"compiler"\s+-> id \d{18,19}\n`,
		`\n   \d+ -> table idsql_demo_customers \(segment key "idsql_demo_customers", range \d+\.\.\d+`,
		`\n   \d{18,19} -> table idsql_demo_orders \(snowflake, worker 1, lease #\d+ recorded in idsql_workers`,
		`tables idsql_demo_orders and idsql_demo_customers dropped again`,
	} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("demo output does not match %s", re)
		}
	}
	if t.Failed() {
		t.Log(s)
	}
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM information_schema.tables WHERE table_schema = database() AND table_name LIKE 'idsql_demo%'").Scan(&n); err != nil || n != 0 {
		t.Errorf("%d demo tables left, %v", n, err)
	}
	// Without accepting lazy commits, a server that has them is refused
	// with a hint.
	if err := mysqlstore.CheckDurable(ctx, raw); err != nil {
		code, _, stderr := runCmd(t, "demo", "--dsn", dsn)
		if code != 1 || !strings.Contains(stderr, lazyParam+"=true") {
			t.Errorf("demo on a lazy server without %s: exit %d, %q", lazyParam, code, stderr)
		}
	}
}

// TestMySQLServe runs `idsql serve` on a MySQL DSN and takes IDs of both
// kinds.
func TestMySQLServe(t *testing.T) {
	_, dsn := mysqltest.Open(t)
	cfgPath := writeConfig(t, `namespace: servetest
holder: {kind: mysql, instance: serve-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 20}
`)
	banner := serveAndGet(t, []string{"--config", cfgPath, "--dsn", mysqlURL(t, dsn) + "?" + lazyParam + "=true",
		"--migrate"}, "/api/snowflake/get/orders", "/api/segment/get/users/3", "/healthz")
	if !strings.Contains(banner, "on mysql") {
		t.Errorf("banner does not name the database:\n%s", banner)
	}
}

// TestMySQLPrivateAuthority: the ssl- parameters of a MySQL DSN give the
// command a server certificate of a private authority and a client
// certificate, as the mariadb client's options do, on a server that takes
// only TLS and a user that must show the certificate. The wrong authority
// is refused, and so is a DSN without them.
func TestMySQLPrivateAuthority(t *testing.T) {
	files := tlstest.New(t, "app")
	srv, _ := mysqltest.StartTLSUser(t, files, "app", "app-password")
	c, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	base := (&url.URL{Scheme: "mysql", Host: c.Addr, Path: "/" + c.DBName, User: url.UserPassword("app", "app-password")}).String() +
		"?" + lazyParam + "=true"
	withFiles := func(ca string) string {
		return base + "&" + url.Values{sslCAParam: {ca}, sslCertParam: {files.ClientCert}, sslKeyParam: {files.ClientKey}}.Encode()
	}
	cfgPath := writeConfig(t, "namespace: tls\nholder: {kind: mysql, instance: cli}\ntables:\n  orders: {strategy: snowflake}\n")
	if code, out, stderr := runCmd(t, "migrate", "--dsn", withFiles(files.CA), "--config", cfgPath); code != 0 || !strings.Contains(out, "migrated mysql database") {
		t.Fatalf("migrate with ssl-ca, ssl-cert and ssl-key: exit %d\n%s%s", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, "workers", "--dsn", withFiles(files.OtherCA), "--namespace", "tls"); code == 0 || !strings.Contains(stderr, "certificate") {
		t.Errorf("workers with ssl-ca of an authority that signed nothing: exit %d, %q; want a refused certificate", code, stderr)
	}
	if code, _, stderr := runCmd(t, "workers", "--dsn", base, "--namespace", "tls"); code == 0 {
		t.Errorf("workers without TLS on a server that takes only TLS: exit 0, %q", stderr)
	}
	if code, _, stderr := runCmd(t, "workers", "--dsn", base+"&"+sslCertParam+"="+url.QueryEscape(files.ClientCert), "--namespace", "tls"); code != 2 || !strings.Contains(stderr, "ssl-key") {
		t.Errorf("ssl-cert without ssl-key: exit %d, %q; want a usage error naming ssl-key", code, stderr)
	}
}

// The risks a configuration's holder section accepts reach the stores the
// command made from a DSN without idsql's parameters (serve and demo take
// both), and those the DSN accepted stay.
func TestConfigRisksReachTheStores(t *testing.T) {
	_, dsn := mysqltest.Open(t)
	ctx := context.Background()
	for _, c := range []struct {
		param         string
		holder        keyset.HolderConfig
		lazy, oneNode bool
	}{
		{holder: keyset.HolderConfig{}, lazy: false, oneNode: false},
		{holder: keyset.HolderConfig{AcceptLazyCommits: true, OneWriterNode: true}, lazy: true, oneNode: true},
		{param: oneWriterParam + "=true", holder: keyset.HolderConfig{AcceptLazyCommits: true}, lazy: true, oneNode: true},
	} {
		withParam := dsn
		if c.param != "" {
			withParam += map[bool]string{true: "&", false: "?"}[strings.Contains(dsn, "?")] + c.param
		}
		d, err := openDatabase(ctx, withParam)
		if err != nil {
			t.Fatal(err)
		}
		d.keysOptions(&keyset.Config{Holder: c.holder})
		if s := d.registry().Settings(); s.AcceptLazyCommits != c.lazy || s.OneWriterNode != c.oneNode {
			t.Errorf("DSN parameter %q, holder accept_lazy_commits %v, one_writer_node %v: registry accepts lazy commits %v, one writer node %v; want %v, %v",
				c.param, c.holder.AcceptLazyCommits, c.holder.OneWriterNode, s.AcceptLazyCommits, s.OneWriterNode, c.lazy, c.oneNode)
		}
		d.db.Close()
	}
}
