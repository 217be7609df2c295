package idsql_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/tlstest"
)

// TestTLSPostgres runs idsql against a PostgreSQL that takes only TLS
// connections with a client certificate (pg_hba: hostssl ... cert), made
// by the test's own authority: Migrate, the wrapper over lib/pq and over
// pgx's stdlib, pgxid, the worker table and Lookup, all with
// sslmode=verify-full. The server says each connection is TLS with the
// client's certificate; a DSN without TLS, and one trusting another
// authority, are refused with an error that says the connection failed.
func TestTLSPostgres(t *testing.T) {
	files := tlstest.New(t, "postgres")
	srv := pgtest.StartTLSServer(t, files)
	dsn := srv.DSN()
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	var tls bool
	var client string
	if err := raw.QueryRowContext(ctx, "SELECT ssl, coalesce(client_dn, '') FROM pg_stat_ssl WHERE pid = pg_backend_pid()").Scan(&tls, &client); err != nil ||
		!tls || !strings.Contains(client, "CN=postgres") {
		t.Fatalf("the connection: TLS %v, client %q, %v; want TLS with the client certificate", tls, client, err)
	}
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, n int); CREATE TABLE users (id bigint PRIMARY KEY, n int)"); err != nil {
		t.Fatal(err)
	}
	cfg, err := keyset.Parse("tls.yaml", []byte("namespace: tls\nholder: {kind: postgres, mode: sticky, instance: app}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 5}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatalf("migrate over TLS: %v", err)
	}
	var last int64
	for _, driverName := range []string{"postgres", "pgx"} {
		db, err := idsql.Open(driverName, dsn, cfg, idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, table := range []string{"orders", "users"} {
			if err := db.QueryRowContext(ctx, "INSERT INTO "+table+" (n) VALUES (1) RETURNING id").Scan(&last); err != nil {
				t.Errorf("%s: insert into %s over TLS: %v", driverName, table, err)
			}
		}
		db.Close()
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	pdb, err := pgxid.New(pool, cfg, pgxid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pdb.QueryRow(ctx, "INSERT INTO orders (n) VALUES (2) RETURNING id").Scan(&last); err != nil {
		t.Errorf("pgxid: insert over TLS: %v", err)
	}
	pdb.Close()
	if origins, err := idsql.Lookup(ctx, raw, cfg, last); err != nil || len(origins) != 1 || origins[0].Table != "orders" {
		t.Errorf("Lookup(%d) over TLS: %+v, %v", last, origins, err)
	}
	var n int
	raw.QueryRow("SELECT (SELECT count(*) FROM orders) + (SELECT count(*) FROM users)").Scan(&n)
	if n != 5 {
		t.Errorf("%d rows; want 5", n)
	}

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, param, value, says string }{
		{"without TLS", "sslmode", "disable", "no encryption"},
		{"trusting another authority", "sslrootcert", files.OtherCA, "certificate signed by unknown authority"},
	} {
		q := u.Query()
		q.Set(c.param, c.value)
		bad := *u
		bad.RawQuery = q.Encode()
		db, err := idsql.Open("postgres", bad.String(), cfg, idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		_, err = db.ExecContext(ctx, "INSERT INTO orders (n) VALUES (3)")
		db.Close()
		if err == nil || !strings.Contains(err.Error(), "idsql: connect to the PostgreSQL database: ") || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v; want a refused connection saying %q", c.name, err, c.says)
		}
	}
}

// TestTLSMySQL runs idsql against a MariaDB that takes only TLS
// connections (require_secure_transport), as a user that must present
// the test authority's client certificate (REQUIRE SUBJECT): Migrate,
// the wrapper and Lookup; a DSN without TLS is refused, even for root,
// with an error that says the connection failed.
func TestTLSMySQL(t *testing.T) {
	files := tlstest.New(t, "app")
	srv, root := mysqltest.StartTLSUser(t, files, "app", "app-password")
	ctx := context.Background()
	var name, cipher string
	if err := root.QueryRowContext(ctx, "SHOW SESSION STATUS LIKE 'Ssl_cipher'").Scan(&name, &cipher); err != nil || cipher == "" {
		t.Fatalf("the connection's TLS cipher: %q, %v; want TLS", cipher, err)
	}
	for _, q := range []string{
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)", "CREATE TABLE users (id BIGINT PRIMARY KEY, n INT)",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg, err := keyset.Parse("tls.yaml", []byte("namespace: tls\nholder: {kind: mysql, mode: sticky, instance: app, accept_lazy_commits: true}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 5}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, root, cfg); err != nil {
		t.Fatalf("migrate over TLS: %v", err)
	}
	c, err := mysql.ParseDSN(srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	c.User, c.Passwd = "app", "app-password"
	db, err := idsql.Open("mysql", c.FormatDSN(), cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var last int64
	for _, table := range []string{"users", "orders"} {
		res, err := db.ExecContext(ctx, "INSERT INTO "+table+" (n) VALUES (1)")
		if err != nil {
			t.Fatalf("insert into %s over TLS as app: %v", table, err)
		}
		last, _ = res.LastInsertId()
	}
	if origins, err := idsql.Lookup(ctx, db.DB.DB, cfg, last); err != nil || len(origins) != 1 || origins[0].Table != "orders" {
		t.Errorf("Lookup(%d) over TLS: %+v, %v", last, origins, err)
	}
	db.Close()

	rootPlain, err := mysql.ParseDSN(srv.DSN()) // root may connect from anywhere without a certificate, but not in the clear
	if err != nil {
		t.Fatal(err)
	}
	rootPlain.TLSConfig, rootPlain.TLS = "false", nil
	plain, err := idsql.Open("mysql", rootPlain.FormatDSN(), cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	_, err = plain.ExecContext(ctx, "INSERT INTO orders (n) VALUES (2)")
	// MariaDB 10.11 refuses the clear-text login as a denied one.
	if err == nil || !strings.Contains(err.Error(), "idsql: connect to the MySQL database: ") || !strings.Contains(err.Error(), "Access denied") {
		t.Errorf("without TLS: %v; want a refused connection", err)
	}
}
