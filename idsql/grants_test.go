package idsql_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestLeastPrivilegePostgres: the application runs as a role with INSERT
// and SELECT on its own tables and only dialect.RuntimeGrants on idsql's,
// while Migrate runs as the owner. Snowflake keys (a lease in the worker
// table) and segment keys (ranges and their log) are issued and Lookup
// reads their records; a grant taken away fails the next range with an
// error that says a privilege idsql uses is missing and how to list them,
// and writes nothing.
func TestLeastPrivilegePostgres(t *testing.T) {
	owner, dsn := pgtest.Open(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	role := fmt.Sprintf("app_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	cfg, err := keyset.Parse("lp.yaml", []byte("namespace: lp\nholder: {kind: postgres, mode: sticky, instance: app}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 3}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE orders (id bigint PRIMARY KEY, n int)", "CREATE TABLE users (id bigint PRIMARY KEY, n int)",
		"CREATE ROLE " + role + " LOGIN",
	} {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		owner.Exec("DROP OWNED BY " + role)
		owner.Exec("DROP ROLE " + role)
	})
	if err := idsql.Migrate(ctx, owner, cfg); err != nil {
		t.Fatal(err)
	}
	grants := append([]string{
		"GRANT USAGE ON SCHEMA " + schema + " TO " + role,
		"GRANT SELECT, INSERT ON orders, users TO " + role,
	}, dialect.PostgreSQL.RuntimeGrants(role)...)
	for _, q := range grants {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	u.User = url.User(role)
	appDSN := u.String()
	open := func() *idsql.DB {
		db, err := idsql.Open("postgres", appDSN, cfg, idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	runLeastPrivileged(t, owner, cfg, role, open, func(db *idsql.DB, table string, n int) (int64, error) {
		var id int64
		err := db.QueryRowContext(ctx, "INSERT INTO "+table+" (n) VALUES ($1) RETURNING id", n).Scan(&id)
		return id, err
	}, "permission denied for table idsql_alloc")
}

// TestLeastPrivilegeMySQL is TestLeastPrivilegePostgres on MariaDB: a user
// with SELECT and INSERT on the application's tables and only
// dialect.RuntimeGrants on idsql's.
func TestLeastPrivilegeMySQL(t *testing.T) {
	ownerDSN := mysqltest.Database(t)
	owner, err := sql.Open("mysql", ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ctx := context.Background()
	user := fmt.Sprintf("app_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	role := "'" + user + "'@'%'"
	cfg, err := keyset.Parse("lp.yaml", []byte("namespace: lp\nholder: {kind: mysql, mode: sticky, instance: app, accept_lazy_commits: true}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 3}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)", "CREATE TABLE users (id BIGINT PRIMARY KEY, n INT)",
		"CREATE USER " + role + " IDENTIFIED BY 'app-password'",
	} {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { owner.Exec("DROP USER " + role) })
	if err := idsql.Migrate(ctx, owner, cfg); err != nil {
		t.Fatal(err)
	}
	for _, q := range append([]string{"GRANT SELECT, INSERT ON orders TO " + role, "GRANT SELECT, INSERT ON users TO " + role},
		dialect.MySQL.RuntimeGrants(role)...) {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	c, err := mysql.ParseDSN(ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	c.User, c.Passwd = user, "app-password"
	open := func() *idsql.DB {
		db, err := idsql.Open("mysql", c.FormatDSN(), cfg, idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	runLeastPrivileged(t, owner, cfg, role, open, func(db *idsql.DB, table string, n int) (int64, error) {
		res, err := db.ExecContext(ctx, "INSERT INTO "+table+" (n) VALUES (?)", n)
		if err != nil {
			return 0, err
		}
		return res.LastInsertId()
	}, "command denied to user")
}

// runLeastPrivileged issues keys of orders (snowflake) and users (segment)
// as role through the wrappers open makes, insert returning the key an
// INSERT got, and traces two with Lookup; then it takes UPDATE on
// idsql_alloc away from role and checks that the INSERT needing a fresh
// range fails with the database's denial (denied) and a pointer to the
// grants, writing nothing.
func runLeastPrivileged(t *testing.T, owner *sql.DB, cfg *keyset.Config, role string, open func() *idsql.DB,
	insert func(db *idsql.DB, table string, n int) (int64, error), denied string) {
	t.Helper()
	ctx := context.Background()
	db := open()
	var ids []int64
	for i := range 5 {
		for _, table := range []string{"orders", "users"} {
			id, err := insert(db, table, i)
			if err != nil {
				t.Fatalf("insert into %s as %s: %v", table, role, err)
			}
			ids = append(ids, id)
		}
	}
	for i, id := range ids[:2] {
		origins, err := idsql.Lookup(ctx, db.DB.DB, cfg, id)
		if want := []string{"orders", "users"}[i]; err != nil || len(origins) != 1 || origins[0].Table != want {
			t.Errorf("Lookup(%d) as %s: %+v, %v; want table %s", id, role, origins, err, want)
		}
	}
	db.Close()

	if _, err := owner.ExecContext(ctx, "REVOKE UPDATE ON idsql_alloc FROM "+role); err != nil {
		t.Fatal(err)
	}
	var before, after int
	owner.QueryRow("SELECT count(*) FROM users").Scan(&before)
	// A fresh wrapper has no range: its first key of users needs one.
	_, err := insert(open(), "users", 9)
	if err == nil || !strings.Contains(err.Error(), denied) ||
		!strings.Contains(err.Error(), "`idsql migrate --print-grants ROLE` prints the grants it needs") {
		t.Errorf("a segment range without UPDATE on idsql_alloc: %v; want the denial and how to list the grants", err)
	}
	owner.QueryRow("SELECT count(*) FROM users").Scan(&after)
	if after != before {
		t.Errorf("%d rows written by the refused INSERT", after-before)
	}
}

// dbDefaultWriterConfig has a snowflake, a segment and a spread segment
// table, each keyed by a database-side default.
func dbDefaultWriterConfig(t *testing.T, holderKind string) *keyset.Config {
	t.Helper()
	cfg, err := keyset.Parse("dbw.yaml", []byte("namespace: dbw\nholder: {kind: "+holderKind+", mode: sticky, instance: app, accept_lazy_commits: true, database_workers: 1}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 3}\n  spread: {strategy: segment, shape: {spread: reverse}}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// runDBDefaultWriter checks a role that inserts around idsql, with INSERT
// on the tables and nothing of idsql's: refused with the database's
// denial (denied) while it lacks idsql.DBDefaultGrants where it needs
// them (needs), then, with them, its rows in every table keyed by the
// defaults, distinct, the snowflake keys following the clock (on
// PostgreSQL a slot moves forward with setval).
func runDBDefaultWriter(t *testing.T, owner, writer *sql.DB, cfg *keyset.Config, dialectName, role, denied string, needs map[string]bool) {
	t.Helper()
	ctx := context.Background()
	tables := []string{"orders", "spread", "users"}
	for _, table := range tables {
		_, err := writer.ExecContext(ctx, "INSERT INTO "+table+" (n) VALUES (0)")
		switch {
		case needs[table] && (err == nil || !strings.Contains(err.Error(), denied)):
			t.Fatalf("insert into %s without the default's grants: %v; want %q", table, err, denied)
		case !needs[table] && err != nil:
			t.Fatalf("insert into %s, whose default needs no grant: %v", table, err)
		}
	}
	grants, err := idsql.DBDefaultGrants(dialectName, cfg, role)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range grants {
		if _, err := owner.ExecContext(ctx, g); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
	}
	for i := range 6 {
		for _, table := range tables {
			if _, err := writer.ExecContext(ctx, "INSERT INTO "+table+" (n) VALUES ("+strconv.Itoa(i+1)+")"); err != nil {
				t.Fatalf("insert into %s with the grants %v: %v", table, grants, err)
			}
		}
		// Past the default's lag, the next first row of a transaction
		// moves a snowflake slot forward to the clock (setval).
		time.Sleep(15 * time.Millisecond) // not a tolerance: the default moves a slot that lags the clock by 10 ms (its {lag}); 15 ms makes every round move one
	}
	for _, table := range tables {
		var rows, keys int
		if err := owner.QueryRowContext(ctx, "SELECT count(*), count(DISTINCT id) FROM "+table+" WHERE n > 0").Scan(&rows, &keys); err != nil {
			t.Fatal(err)
		}
		if rows != 6 || keys != 6 {
			t.Errorf("%s: %d rows with %d distinct keys, want 6 and 6", table, rows, keys)
		}
	}
	// The snowflake keys follow the clock: a slot that stayed behind it
	// would stamp every row with its old tick.
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		t.Fatal(err)
	}
	var first, last int64
	if err := owner.QueryRowContext(ctx, "SELECT min(id), max(id) FROM orders WHERE n > 0").Scan(&first, &last); err != nil {
		t.Fatal(err)
	}
	if d := layout.Decompose(last).Time.Sub(layout.Decompose(first).Time); d < 50*time.Millisecond {
		t.Errorf("the writer's snowflake keys span %s of time over 5 waits of 15 ms: the default's slots did not follow the clock", d)
	}
}

// TestDBDefaultWriterPostgres: a role with INSERT on the tables and the
// grants idsql.DBDefaultGrants prints keys its rows by every kind of
// database-side default; without them it is refused.
func TestDBDefaultWriterPostgres(t *testing.T) {
	owner, dsn := pgtest.Open(t)
	ctx := context.Background()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	role := fmt.Sprintf("writer_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	cfg := dbDefaultWriterConfig(t, "postgres")
	for _, q := range []string{
		"CREATE TABLE orders (id bigint PRIMARY KEY, n int)", "CREATE TABLE users (id bigint PRIMARY KEY, n int)",
		"CREATE TABLE spread (id bigint PRIMARY KEY, n int)", "CREATE ROLE " + role + " LOGIN",
	} {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		owner.Exec("DROP OWNED BY " + role)
		owner.Exec("DROP ROLE " + role)
	})
	if err := idsql.MigrateWith(ctx, owner, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"GRANT USAGE ON SCHEMA " + u.Query().Get("search_path") + " TO " + role, "GRANT INSERT ON orders, users, spread TO " + role} {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	u.User = url.User(role)
	writer, err := sql.Open("postgres", u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	runDBDefaultWriter(t, owner, writer, cfg, "postgres", role, "permission denied for sequence",
		map[string]bool{"orders": true, "users": true, "spread": true})
}

// TestDBDefaultWriterMySQL is TestDBDefaultWriterPostgres on MariaDB,
// whose snowflake and spread defaults run in triggers with their
// definer's privileges: only the plain segment default needs a grant.
func TestDBDefaultWriterMySQL(t *testing.T) {
	ownerDSN := mysqltest.Database(t)
	owner, err := sql.Open("mysql", ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ctx := context.Background()
	user := fmt.Sprintf("writer_%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	role := "'" + user + "'@'%'"
	cfg := dbDefaultWriterConfig(t, "mysql")
	for _, q := range []string{
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, n INT)", "CREATE TABLE users (id BIGINT PRIMARY KEY, n INT)",
		"CREATE TABLE spread (id BIGINT PRIMARY KEY, n INT)", "CREATE USER " + role + " IDENTIFIED BY 'writer-password'",
	} {
		if _, err := owner.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { owner.Exec("DROP USER " + role) })
	if err := idsql.MigrateWith(ctx, owner, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"orders", "users", "spread"} {
		if _, err := owner.ExecContext(ctx, "GRANT INSERT ON "+table+" TO "+role); err != nil {
			t.Fatal(err)
		}
	}
	c, err := mysql.ParseDSN(ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	c.User, c.Passwd = user, "writer-password"
	writer, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	runDBDefaultWriter(t, owner, writer, cfg, "mysql", role, "command denied to user",
		map[string]bool{"users": true})
}
