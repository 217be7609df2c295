package idsql_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestOpenMySQLURL: idsql.Open takes a mysql:// URL, the form the idsql
// command takes, and fills keys through it.
func TestOpenMySQLURL(t *testing.T) {
	c, err := mysql.ParseDSN(mysqltest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", User: url.UserPassword(c.User, c.Passwd), Host: c.Addr, Path: "/" + c.DBName}
	cfg := &keyset.Config{Namespace: "url", Tables: map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}}}
	raw, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)"); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true}) // the test server does not flush every commit
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: reg}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("mysql", u.String(), cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 9), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (n) VALUES (1)"); err != nil {
		t.Fatalf("insert through %s: %v", u.Redacted(), err)
	}
	if got := queryInts(t, raw, "SELECT id FROM orders"); len(got) != 1 || got[0] <= 0 {
		t.Errorf("keys %v; want one filled", got)
	}
}

// TestConnectErrorsSayWhere: a failure to connect says so, in the
// wrapper and in Migrate (not as the first statement that failed), with
// the fix for a server that offers no TLS to a DSN that asks for it.
func TestConnectErrorsSayWhere(t *testing.T) {
	_, dsn := pgtest.Open(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("sslmode") // lib/pq then asks for TLS, which the test server does not offer
	u.RawQuery = q.Encode()
	cfg := &keyset.Config{Namespace: "c"}
	db, err := idsql.Open("postgres", u.String(), cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.PingContext(context.Background())
	if err == nil || !strings.HasPrefix(err.Error(), "idsql: connect to the PostgreSQL database: pq: SSL is not enabled on the server; ") ||
		!strings.Contains(err.Error(), "add sslmode=disable to the DSN") {
		t.Errorf("ping without TLS: %v", err)
	}

	raw, err := sql.Open("postgres", "postgres://postgres@127.0.0.1:1/x?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = idsql.Migrate(context.Background(), raw, cfg)
	if err == nil || !strings.HasPrefix(err.Error(), "idsql: migrate: connect to the PostgreSQL database: dial tcp 127.0.0.1:1") {
		t.Errorf("migrate of a database that does not answer: %v", err)
	}
}
