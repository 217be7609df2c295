package rewrite

import (
	"context"
	"database/sql"
	"reflect"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/mysqltest"

	"github.com/idsql/idsql/internal/dialect"
)

// mysqlSchema creates the tables the MySQL cases use; keep in step with
// testCatalog. orders has partitions p0 and p1; MariaDB takes INSERT
// DELAYED into MyISAM tables only.
var mysqlSchema = []string{
	"CREATE TABLE orders (id BIGINT PRIMARY KEY, user_id BIGINT, total DECIMAL(12,2), note TEXT, `we\"ird (x)` TEXT) PARTITION BY KEY (id) PARTITIONS 2",
	"CREATE TABLE Items (ItemID BIGINT PRIMARY KEY, name TEXT)",
	"CREATE TABLE ledger (kind TEXT, amount INT, id BIGINT PRIMARY KEY, memo TEXT) ENGINE=MyISAM", // for INSERT DELAYED
	"CREATE TABLE events (id BIGINT AUTO_INCREMENT PRIMARY KEY, kind TEXT, note TEXT)",
	"CREATE TABLE customers (note TEXT, user_id BIGINT)",
	"CREATE TABLE `2fa_codes` (id BIGINT PRIMARY KEY, code TEXT, `2nd` TEXT)",
}

// mysqlCatalog reads columns from information_schema: the way a wrapper can
// implement Catalog for MySQL and MariaDB.
type mysqlCatalog struct {
	q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
}

func (c mysqlCatalog) Columns(ctx context.Context, schema, table string) ([]Column, error) {
	rows, err := c.q.QueryContext(ctx, `
SELECT column_name, column_default IS NOT NULL OR extra LIKE '%auto_increment%'
FROM information_schema.columns
WHERE table_schema = IF(? = '', DATABASE(), ?) AND table_name = ?
ORDER BY ordinal_position`, schema, schema, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.HasDefault); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// openMySQL returns a database holding mysqlSchema and whether the server is
// MariaDB.
func openMySQL(t *testing.T) (*sql.DB, bool) {
	t.Helper()
	db, _ := mysqltest.Open(t)
	ctx := context.Background()
	for _, stmt := range mysqlSchema {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("schema: %v", err)
		}
	}
	var version string
	if err := db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version); err != nil {
		t.Fatal(err)
	}
	t.Logf("server %s", version)
	return db, strings.Contains(version, "MariaDB")
}

// TestMySQLAccepts prepares, on a real MySQL or MariaDB, the original and
// the rewrite of every MySQL case the server's dialect and the test schema
// support, each in the sql_mode of its case, and checks that the catalog read
// from the server gives the same decisions as the test catalog.
func TestMySQLAccepts(t *testing.T) {
	db, mariadb := openMySQL(t)
	ctx := context.Background()
	conns := map[syntax]*sql.Conn{}
	conn := func(syn syntax) *sql.Conn {
		if c := conns[syn]; c != nil {
			return c
		}
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		for mode, on := range map[string]bool{"NO_BACKSLASH_ESCAPES": !syn.BackslashEscapes, "ANSI_QUOTES": !syn.DoubleQuotedStrings} {
			if on {
				if _, err := c.ExecContext(ctx, "SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',"+mode+"')"); err != nil {
					t.Fatal(err)
				}
			}
		}
		conns[syn] = c
		return c
	}
	prepare := func(c *sql.Conn, q string) error {
		st, err := c.PrepareContext(ctx, q)
		if err == nil {
			st.Close()
		}
		return err
	}

	rws := map[syntax]*Rewriter{}
	checked := 0
	for _, tc := range mysqlCases {
		if tc.noServer || mariadb && tc.notMariaDB || !mariadb && tc.notMySQL {
			continue
		}
		cfg := caseConfig(tc)
		syn := cfg.Dialect.Syntax().WithSQLMode(cfg.NoBackslashEscapes, cfg.ANSIQuotes)
		if rws[syn] == nil {
			rws[syn] = newTestConfig(t, cfg)
		}
		c := conn(syn)
		if !tc.origInvalid {
			if err := prepare(c, tc.in); err != nil {
				t.Errorf("%s: the server rejects the original %q: %v", tc.name, tc.in, err)
			}
		}
		p, err := rws[syn].Plan(ctx, tc.in, mysqlCatalog{c})
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: with the server's catalog: %v; want error %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: with the server's catalog: %v", tc.name, err)
		case tc.want == "" && !passes(p, tc.in), tc.want != "" && (p == nil || p.Query != tc.want):
			t.Errorf("%s: with the server's catalog: plan %+v; want %q", tc.name, p, tc.want)
		}
		if tc.want != "" {
			if err := prepare(c, tc.want); err != nil {
				t.Errorf("%s: the server rejects the rewrite %q: %v", tc.name, tc.want, err)
			}
			checked++
		}
	}
	t.Logf("%d rewritten statements prepared", checked)
}

// TestMySQLExecute runs filled statements of several forms with generated
// IDs on a real server and checks the rows they leave.
func TestMySQLExecute(t *testing.T) {
	db, _ := openMySQL(t)
	ctx := context.Background()
	r := newTest(t, dialect.MySQL)
	id := int64(1000)
	exec := func(q string, args ...any) {
		t.Helper()
		p, err := r.Plan(ctx, q, mysqlCatalog{db})
		if err != nil || p == nil {
			t.Fatalf("Plan(%q) = %v, %v", q, p, err)
		}
		ids := make([]int64, p.Rows)
		for i := range ids {
			id++
			ids[i] = id
		}
		named := p.Args(nil, nv(args...), ids)
		vals := make([]any, len(named))
		for i, a := range named {
			vals[i] = a.Value
		}
		if _, err := db.ExecContext(ctx, p.Query, vals...); err != nil {
			t.Fatalf("%q -> %q with %v: %v", q, p.Query, vals, err)
		}
	}
	exec(`INSERT INTO orders (user_id, note) VALUES (?, 'a\'), ('), (?, "b\"") ON DUPLICATE KEY UPDATE note = ?`, 1, 2, "dup")
	exec(`INSERT INTO orders SET note = ?, user_id = ? # ?`, "s", 3)
	exec(`INSERT INTO orders VALUES (), ()`)
	exec(`REPLACE INTO orders (user_id) VALUE (?)`, 4)
	exec(`INSERT /*! IGNORE */ INTO orders (user_id /*!, note */) VALUES (?, ? /*!*/) -- ?`, 5, "c")
	id = 1000 // the same IDs again: the update of the first statement runs
	exec(`INSERT INTO orders (user_id, note) VALUES (?, 'x'), (?, 'y') ON DUPLICATE KEY UPDATE note = CONCAT(note, ?)`, 6, 7, "+")

	rows, err := db.QueryContext(ctx, `SELECT id, COALESCE(user_id, 0), COALESCE(note, '') FROM orders ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		ID, User int64
		Note     string
	}
	var got []row
	for rows.Next() {
		var w row
		if err := rows.Scan(&w.ID, &w.User, &w.Note); err != nil {
			t.Fatal(err)
		}
		got = append(got, w)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []row{{1001, 1, "a'), (+"}, {1002, 2, `b"+`}, {1003, 3, "s"}, {1004, 0, ""}, {1005, 0, ""}, {1006, 4, ""}, {1007, 5, "c"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("rows\n got %v\nwant %v", got, want)
	}
}
