package idsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
)

// The wrapper on MySQL and MariaDB (go-sql-driver/mysql). Every test here
// has MySQL in its name: go test -run MySQL ./idsql/ selects them.

// mysqlDB is an idsql.DB on a fresh MySQL database and the raw pool on
// the same database.
type mysqlDB struct {
	db  *idsql.DB
	raw *sql.DB
	dsn string
	cfg *keyset.Config
}

// openMySQL creates a database, runs schema on it and opens the idsql.DB
// for cfg over go-sql-driver/mysql. params are added to the DSN (session
// variables such as sql_mode, or driver settings such as
// interpolateParams).
func openMySQL(t *testing.T, schema []string, cfg *keyset.Config, params map[string]string) *mysqlDB {
	t.Helper()
	dsn := withParams(t, mysqltest.Database(t), params)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	ctx := context.Background()
	for _, q := range schema {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Leases are recorded in the worker table and segment ranges
	// allocated from idsql_alloc in the same database, the Connector's
	// defaults; the test server does not flush every commit, which the
	// registry must be told.
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true})
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: reg, Segments: mysqlstore.New(raw)}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 7), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &mysqlDB{db: db, raw: raw, dsn: dsn, cfg: cfg}
}

// inRange reports whether id is in a range allocated for a segment key.
func inRange(t *testing.T, raw *sql.DB, key string, id int64) bool {
	t.Helper()
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM idsql_alloc_log WHERE biz_tag = ? AND first_id <= ? AND last_id >= ?", key, id, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// withParams adds params to a go-sql-driver DSN.
func withParams(t testing.TB, dsn string, params map[string]string) string {
	t.Helper()
	if len(params) == 0 {
		return dsn
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range params {
		switch k {
		case "interpolateParams":
			c.InterpolateParams = v == "true"
		default:
			if c.Params == nil {
				c.Params = map[string]string{}
			}
			c.Params[k] = v
		}
	}
	return c.FormatDSN()
}

// sqlModeParam adds flags to the server's sql_mode for every connection.
func sqlModeParam(flags string) map[string]string {
	return map[string]string{"sql_mode": "CONCAT(@@sql_mode, '," + flags + "')"}
}

var mysqlSchema = []string{
	"CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, user_id INT NOT NULL, note VARCHAR(200))",
	"CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(100) NOT NULL UNIQUE)",
	"CREATE TABLE events (kind VARCHAR(20) NOT NULL, at INT, id BIGINT NOT NULL PRIMARY KEY)",
	"CREATE TABLE autoinc (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, n INT UNIQUE, s VARCHAR(20))",
	"CREATE TABLE narrow (id INT NOT NULL PRIMARY KEY, v INT)",
	"CREATE TABLE narrow_unsigned (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT)",
	"CREATE TABLE nullable_key (id BIGINT NULL UNIQUE, v INT)",
	"CREATE TABLE zero_default (id BIGINT NOT NULL DEFAULT 0, v INT)",
	"CREATE TABLE plain (id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT)",
}

func mysqlConfig() *keyset.Config {
	return &keyset.Config{Namespace: "my", Tables: map[string]keyset.TableConfig{
		"orders":          {Strategy: keyset.Snowflake},
		"users":           {Strategy: keyset.Segment, Step: 10},
		"events":          {Strategy: keyset.Snowflake},
		"autoinc":         {Strategy: keyset.Snowflake},
		"narrow":          {Strategy: keyset.Snowflake},
		"narrow_unsigned": {Strategy: keyset.Snowflake},
		"nullable_key":    {Strategy: keyset.Snowflake},
		"zero_default":    {Strategy: keyset.Snowflake},
	}}
}

// isKey checks that id is a snowflake key of table issued just now.
func (m *mysqlDB) isKey(t *testing.T, table string, id int64) {
	t.Helper()
	layout, _ := m.cfg.SnowflakeLayout()
	p, err := layout.Decode(id, time.Now(), time.Second)
	if want := tableWorker(m.cfg, 7, table); err != nil || p.Worker != want || time.Since(p.Time) > time.Minute {
		t.Errorf("key %d decodes to %+v, %v; want worker %d of %s, now", id, p, err, want, table)
	}
}

func TestMySQLIntKeyRefused(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
	ctx := context.Background()
	// MariaDB and MySQL before 8.0.19 show display widths: int(11).
	for _, c := range []struct{ table, typ string }{{"narrow", `int(\(11\))?`}, {"narrow_unsigned", `int(\(10\))? unsigned`}} {
		q := "INSERT INTO " + c.table + " (v) VALUES (?)"
		_, err := m.db.ExecContext(ctx, q, 1)
		if !errors.Is(err, idsql.ErrNarrowKey) {
			t.Fatalf("%s: %v, want ErrNarrowKey", c.table, err)
		}
		for _, want := range []string{"table " + c.table, "key column id is " + c.typ + ", a 32-bit integer", "make it BIGINT",
			"ALTER TABLE `" + c.table + "` MODIFY `id` BIGINT"} {
			if !regexp.MustCompile(want).MatchString(err.Error()) {
				t.Errorf("error %q does not say %s", err, want)
			}
		}
		// Refused when prepared too, and nothing was written.
		if _, err := m.db.PrepareContext(ctx, q); !errors.Is(err, idsql.ErrNarrowKey) {
			t.Errorf("%s: Prepare: %v, want ErrNarrowKey", c.table, err)
		}
		if n := queryInts(t, m.raw, "SELECT count(*) FROM "+c.table); n[0] != 0 {
			t.Errorf("%s: %d rows written", c.table, n[0])
		}
	}
	// Widened, the same statement is filled.
	if _, err := m.raw.ExecContext(ctx, "ALTER TABLE narrow MODIFY id BIGINT NOT NULL"); err != nil {
		t.Fatal(err)
	}
	res, err := m.db.ExecContext(ctx, "INSERT INTO narrow (v) VALUES (?)", 1)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	m.isKey(t, "narrow", id)
	// A statement that lists the key passes through: the server's rules.
	if _, err := m.db.ExecContext(ctx, "INSERT INTO narrow_unsigned (id, v) VALUES (?, ?)", 5, 1); err != nil {
		t.Fatal(err)
	}
}

func TestMySQLAutoIncrementKeyFilled(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
	ctx := context.Background()
	res, err := m.db.ExecContext(ctx, "INSERT INTO autoinc (n, s) VALUES (?, ?)", 1, "a")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := res.LastInsertId()
	m.isKey(t, "autoinc", id)
	if got := queryInts(t, m.raw, "SELECT id FROM autoinc WHERE n = 1"); len(got) != 1 || got[0] != id {
		t.Fatalf("row key %v, LastInsertId %d", got, id)
	}
	// Multi-row: the first row's key, as MySQL reports a generated
	// AUTO_INCREMENT (for explicit values MariaDB would report the last).
	res, err = m.db.ExecContext(ctx, "INSERT INTO autoinc (n, s) VALUES (?, 'b'), (?, 'c')", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	id, _ = res.LastInsertId()
	if got := queryInts(t, m.raw, "SELECT id FROM autoinc WHERE n IN (2, 3) ORDER BY n"); len(got) != 2 || got[0] != id || got[0] == got[1] {
		t.Fatalf("rows %v, LastInsertId %d", got, id)
	}
	// INSERT IGNORE of a duplicate inserts nothing: 0, as MySQL says.
	res, err = m.db.ExecContext(ctx, "INSERT IGNORE INTO autoinc (n, s) VALUES (?, 'dup')", 1)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 0 {
		t.Errorf("INSERT IGNORE of a duplicate: LastInsertId %d, want 0", id)
	}
	// INSERT ... SELECT is not filled: AUTO_INCREMENT is the key's default,
	// so it passes unchanged and the server numbers the row.
	res, err = m.db.ExecContext(ctx, "INSERT INTO autoinc (n, s) SELECT 9, 'sel'")
	if err != nil {
		t.Fatal(err)
	}
	id, _ = res.LastInsertId()
	if got := queryInts(t, m.raw, "SELECT id FROM autoinc WHERE n = 9"); len(got) != 1 || got[0] != id {
		t.Errorf("INSERT ... SELECT: LastInsertId %d, row %v", id, got)
	}
}

func TestMySQLLastInsertId(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
	ctx := context.Background()
	last := func(q string, args ...any) int64 {
		t.Helper()
		res, err := m.db.ExecContext(ctx, q, args...)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			t.Fatalf("%s: LastInsertId: %v", q, err)
		}
		return id
	}
	// Filled, the key column without AUTO_INCREMENT: idsql's first key.
	id := last("INSERT INTO users (name) VALUES (?), (?)", "a", "b")
	if got := queryInts(t, m.raw, "SELECT id FROM users ORDER BY name"); len(got) != 2 || got[0] != id || !inRange(t, m.raw, "users", id) {
		t.Fatalf("users %v, LastInsertId %d", got, id)
	}
	// Nothing inserted: the server's 0.
	if id := last("INSERT IGNORE INTO users (name) VALUES (?)", "a"); id != 0 {
		t.Errorf("ignored duplicate: LastInsertId %d, want 0", id)
	}
	if id := last("INSERT INTO users (name) VALUES (?) ON DUPLICATE KEY UPDATE name = name", "a"); id != 0 {
		t.Errorf("unchanged duplicate: LastInsertId %d, want 0", id)
	}
	// The key listed: the statement passes through, and the server's
	// answer (0 without AUTO_INCREMENT) comes back.
	if id := last("INSERT INTO users (id, name) VALUES (?, ?)", 5000, "c"); id != 0 {
		t.Errorf("key listed: LastInsertId %d, want the server's 0", id)
	}
	// An unconfigured table: the server's AUTO_INCREMENT value.
	last("INSERT INTO plain (v) VALUES (1)")
	if id := last("INSERT INTO plain (v) VALUES (?), (?)", 2, 3); id != 2 {
		t.Errorf("unconfigured table: LastInsertId %d, want 2", id)
	}
	// Prepared: the same answers.
	st, err := m.db.PrepareContext(ctx, "INSERT INTO orders (user_id) VALUES (?)")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 3 {
		res, err := st.ExecContext(ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		if got := queryInts(t, m.raw, fmt.Sprintf("SELECT id FROM orders WHERE user_id = %d", i)); len(got) != 1 || got[0] != id {
			t.Errorf("prepared run %d: LastInsertId %d, row %v", i, id, got)
		}
	}
}

// sql_mode reaches the rewriter: statements are read as the server reads
// them, whether the mode comes from the server, the DSN or a SET.
func TestMySQLSQLMode(t *testing.T) {
	ctx := context.Background()
	t.Run("NO_BACKSLASH_ESCAPES", func(t *testing.T) {
		m := openMySQL(t, mysqlSchema, mysqlConfig(), sqlModeParam("NO_BACKSLASH_ESCAPES"))
		// 'C:\' is a whole string here; read with backslash escapes it
		// would run on to the next quote.
		if _, err := m.db.ExecContext(ctx, `INSERT INTO orders (note, user_id) VALUES ('C:\', ?), ('?\', 2)`, 1); err != nil {
			t.Fatal(err)
		}
		got := mysqlStrings(t, m.raw, "SELECT note FROM orders ORDER BY user_id")
		if !slices.Equal(got, []string{`C:\`, `?\`}) {
			t.Fatalf("notes %q", got)
		}
		for _, id := range queryInts(t, m.raw, "SELECT id FROM orders") {
			m.isKey(t, "orders", id)
		}
	})
	t.Run("ANSI_QUOTES", func(t *testing.T) {
		m := openMySQL(t, mysqlSchema, mysqlConfig(), sqlModeParam("ANSI_QUOTES"))
		if _, err := m.db.ExecContext(ctx, `INSERT INTO "orders" ("user_id", "note") VALUES (?, 'it''s')`, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := m.db.ExecContext(ctx, `INSERT INTO "users" ("name") VALUES (?)`, "q"); err != nil {
			t.Fatal(err)
		}
		for _, id := range queryInts(t, m.raw, "SELECT id FROM orders") {
			m.isKey(t, "orders", id)
		}
	})
	t.Run("SET", func(t *testing.T) {
		m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
		c, err := m.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		const q = `INSERT INTO orders (note, user_id) VALUES ('\', ?)`
		if _, err := c.ExecContext(ctx, q, 1); err == nil {
			t.Fatal("a backslash-escaped quote was accepted as the end of a string")
		}
		if _, err := c.ExecContext(ctx, "SET SESSION sql_mode = CONCAT(@@sql_mode, ',NO_BACKSLASH_ESCAPES')"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, q, 2); err != nil {
			t.Fatalf("after SET sql_mode: %v", err)
		}
		if _, err := c.ExecContext(ctx, "set @@sql_mode = REPLACE(@@sql_mode, 'NO_BACKSLASH_ESCAPES', '')"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.ExecContext(ctx, `INSERT INTO orders (note, user_id) VALUES ('\'', ?)`, 3); err != nil {
			t.Fatalf("after resetting sql_mode: %v", err)
		}
		got := mysqlStrings(t, m.raw, "SELECT note FROM orders ORDER BY user_id")
		if !slices.Equal(got, []string{`\`, `'`}) {
			t.Fatalf("notes %q", got)
		}
	})
}

// The catalog's queries have arguments, which go-sql-driver/mysql runs
// only prepared unless interpolateParams is on: both ways work.
func TestMySQLCatalog(t *testing.T) {
	for _, params := range []map[string]string{nil, {"interpolateParams": "true"}} {
		t.Run(fmt.Sprint("params=", params), func(t *testing.T) {
			m := openMySQL(t, mysqlSchema, mysqlConfig(), params)
			ctx := context.Background()
			// No column list: the catalog gives the column order, and the
			// key (the last column) is filled.
			res, err := m.db.ExecContext(ctx, "INSERT INTO events VALUES (?, ?)", "click", 3)
			if err != nil {
				t.Fatal(err)
			}
			id, _ := res.LastInsertId()
			m.isKey(t, "events", id)
			// MariaDB reports a nullable column's implicit DEFAULT NULL as
			// 'NULL': that is no default for a key, so INSERT ... SELECT
			// is refused rather than inserting a NULL key.
			_, err = m.db.ExecContext(ctx, "INSERT INTO nullable_key (v) SELECT 1")
			if err == nil || !strings.Contains(err.Error(), "nullable_key") || !strings.Contains(err.Error(), "no default") {
				t.Errorf("INSERT ... SELECT into a key without default: %v", err)
			}
			// A real default lets it pass unchanged.
			if _, err := m.db.ExecContext(ctx, "INSERT INTO zero_default (v) SELECT 1"); err != nil {
				t.Errorf("INSERT ... SELECT into a key with a default: %v", err)
			}
			// In a database named in the statement.
			db := mysqlStrings(t, m.raw, "SELECT database()")[0]
			if _, err := m.db.ExecContext(ctx, "INSERT INTO `"+db+"`.events VALUES (?, ?)", "qualified", 4); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The dialect comes from the driver's type, the driver's name, or the
// configuration; a driver idsql does not know needs the setting.
func TestMySQLDialectChoice(t *testing.T) {
	dsn := mysqltest.Database(t)
	ctx := context.Background()
	mc, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	raw := sql.OpenDB(inner)
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, mysqlSchema[0]); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "choice", Tables: map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}}}
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true})
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	opts := idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 1), Registry: reg}}

	// From the driver's type, without a name.
	c, err := idsql.NewConnector(inner, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	db := idsql.NewDB(c)
	defer db.Close()
	if db.DriverName() != "mysql" || db.Rebind("a = ? AND b = ?") != "a = ? AND b = ?" {
		t.Errorf("sqlx: driver %q, Rebind %q", db.DriverName(), db.Rebind("a = ? AND b = ?"))
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO orders (user_id) VALUES (?)", 1); err != nil {
		t.Fatal(err)
	}
	db.Close() // releases the worker lease

	// A driver idsql does not know: an error naming the setting, no guess.
	wrapped := otherConnector{inner}
	_, err = idsql.NewConnector(wrapped, cfg, opts)
	if err == nil || !strings.Contains(err.Error(), "dialect: postgres, mysql, sqlite") || !strings.Contains(err.Error(), "otherDriver") {
		t.Fatalf("unknown driver: %v", err)
	}
	// With the setting it works end to end.
	cfg2 := *cfg
	cfg2.Dialect = "mariadb"
	c, err = idsql.NewConnector(wrapped, &cfg2, opts)
	if err != nil {
		t.Fatal(err)
	}
	db2 := idsql.NewDB(c)
	defer db2.Close()
	if db2.Rebind("?") != "?" {
		t.Errorf("Rebind(?) = %q", db2.Rebind("?"))
	}
	if _, err := db2.ExecContext(ctx, "INSERT INTO orders (user_id) VALUES (?)", 2); err != nil {
		t.Fatal(err)
	}
	if n := queryInts(t, raw, "SELECT count(DISTINCT id) FROM orders"); n[0] != 2 {
		t.Fatalf("%d keys", n[0])
	}
	// A bad setting is a configuration error.
	cfg2.Dialect = "oracle"
	if _, err := idsql.NewConnector(inner, &cfg2, opts); err == nil || !strings.Contains(err.Error(), "dialect") {
		t.Errorf("dialect oracle: %v", err)
	}
	// Segment tables on MySQL: idsql_alloc in the same database, by
	// default.
	if _, err := raw.ExecContext(ctx, mysqlSchema[1]); err != nil {
		t.Fatal(err)
	}
	cfg3 := &keyset.Config{Namespace: "choice", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment, Step: 5}}}
	if err := idsql.MigrateIn(ctx, raw, cfg3, idsql.Stores{Segments: mysqlstore.New(raw)}); err != nil {
		t.Fatal(err)
	}
	c, err = idsql.NewConnector(inner, cfg3, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db3 := idsql.NewDB(c)
	defer db3.Close()
	for _, name := range []string{"a", "b"} {
		if _, err := db3.ExecContext(ctx, "INSERT INTO users (name) VALUES (?)", name); err != nil {
			t.Fatal(err)
		}
	}
	if got := queryInts(t, raw, "SELECT id FROM users ORDER BY id"); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("segment keys %v, want 1 and 2", got)
	}
}

// otherConnector hides go-sql-driver's driver behind a type idsql does
// not know, as a tracing wrapper would.
type otherConnector struct{ inner driver.Connector }

type otherDriver struct{ driver.Driver }

func (c otherConnector) Connect(ctx context.Context) (driver.Conn, error) {
	return c.inner.Connect(ctx)
}
func (c otherConnector) Driver() driver.Driver { return otherDriver{c.inner.Driver()} }

// Everything else database/sql and sqlx offer keeps working: the inner
// connection is go-sql-driver's, transactions keep their options.
func TestMySQLPassThrough(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), nil)
	ctx := context.Background()
	c, err := m.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var typ string
	c.Raw(func(dc any) error {
		typ = reflect.TypeOf(idsql.InnerConn(dc)).String()
		return nil
	})
	if typ != "*mysql.mysqlConn" {
		t.Errorf("inner connection %s", typ)
	}
	tx, err := m.db.BeginTxx(ctx, &sql.TxOptions{Isolation: sql.LevelSerializable, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO orders (user_id) VALUES (1)"); err == nil || !strings.Contains(err.Error(), "READ ONLY") {
		t.Errorf("insert in a read-only transaction: %v", err)
	}
}

func mysqlStrings(t *testing.T, db *sql.DB, q string) []string {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// The worker table a Connector opens for itself on MySQL refuses a server
// that does not flush every commit, naming the config setting that accepts
// the risk, and records leases once holder.accept_lazy_commits is set.
func TestMySQLConfigAcceptLazyCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := mysqltest.Database(t)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	var flush, logBin, syncBinlog int
	if err := raw.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).
		Scan(&flush, &logBin, &syncBinlog); err != nil {
		t.Fatal(err)
	}
	lazy := (flush != 1 && flush != 3) || (logBin != 0 && syncBinlog != 1)
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, note VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	open := func(accept bool) *idsql.DB {
		cfg := &keyset.Config{Namespace: "lazy", Tables: map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}}}
		cfg.Holder.AcceptLazyCommits = accept
		if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Workers: registry.New(raw, registry.Settings{Dialect: "mysql"})}); err != nil {
			t.Fatal(err)
		}
		db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 5)}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	_, err = open(false).ExecContext(ctx, "INSERT INTO orders (note) VALUES ('strict')")
	switch {
	case lazy && (!errors.Is(err, registry.ErrNotDurable) || !strings.Contains(err.Error(), "holder.accept_lazy_commits")):
		t.Fatalf("INSERT on a server with innodb_flush_log_at_trx_commit = %d, sync_binlog = %d (log_bin %d): err = %v, want ErrNotDurable naming holder.accept_lazy_commits",
			flush, syncBinlog, logBin, err)
	case !lazy && err != nil:
		t.Fatalf("INSERT on a durable server: %v", err)
	}
	if _, err := open(true).ExecContext(ctx, "INSERT INTO orders (note) VALUES ('accepted')"); err != nil {
		t.Fatalf("INSERT with holder.accept_lazy_commits: %v", err)
	}
	var n int
	if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM orders WHERE id > 0 AND note = 'accepted'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows written with holder.accept_lazy_commits: %d, %v; want 1", n, err)
	}
}

// TestMySQLMultiResultRecipe runs go-sql-driver/mysql's documented recipe
// for one result per statement of a multi-statement Exec through the
// wrapper: sql.Conn.Raw, the connection as a driver.Execer, its result as
// a mysql.Result.
func TestMySQLMultiResultRecipe(t *testing.T) {
	m := openMySQL(t, mysqlSchema, mysqlConfig(), map[string]string{"multiStatements": "true"})
	ctx := context.Background()
	for _, q := range []string{"INSERT INTO autoinc (n) VALUES (1), (2), (3)"} {
		if _, err := m.raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := m.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var affected []int64
	err = conn.Raw(func(dc any) error {
		ex, ok := dc.(driver.Execer) //nolint:staticcheck // the recipe's interface
		if !ok {
			return fmt.Errorf("the connection (%T) is not a driver.Execer", dc)
		}
		res, err := ex.Exec("UPDATE autoinc SET s = 'a' WHERE n = 1; UPDATE autoinc SET s = 'b' WHERE n > 1", nil)
		if err != nil {
			return err
		}
		r, ok := res.(mysql.Result)
		if !ok {
			return fmt.Errorf("the result (%T) is not a mysql.Result", res)
		}
		affected = r.AllRowsAffected()
		return nil
	})
	if err != nil || !slices.Equal(affected, []int64{1, 2}) {
		t.Errorf("the recipe: rows affected %v, %v; want [1 2]", affected, err)
	}
	// An INSERT into a configured table through the old interface is
	// filled as through ExecContext.
	err = conn.Raw(func(dc any) error {
		_, err := dc.(driver.Execer).Exec("INSERT INTO orders (user_id) VALUES (?)", []driver.Value{int64(5)}) //nolint:staticcheck // the recipe's interface
		return err
	})
	if got := queryInts(t, m.raw, "SELECT id FROM orders WHERE user_id = 5"); err != nil || len(got) != 1 {
		t.Fatalf("insert through driver.Execer: %v, keys %v", err, got)
	} else {
		m.isKey(t, "orders", got[0])
	}
}
