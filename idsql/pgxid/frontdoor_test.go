package pgxid_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jmoiron/sqlx"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// The front-door conformance suite: the same cases run through every
// front door on every database it serves, so that a row gets the same key
// decision whichever door it came through (the one fill path,
// idsql/internal/fill). The doors: database/sql (idsql.Open) over lib/pq,
// pgx's stdlib, go-sql-driver/mysql on MariaDB (with and without
// interpolateParams) and SQLite, and pgxid over a *pgx.Conn, a
// *pgxpool.Pool and a pgx.Tx. What a door cannot do is an asserted
// refusal in the case, never a skipped difference.

// door is one front door on one database.
type door struct {
	name    string
	dialect string // "postgres", "mysql" or "sqlite"
	// exec runs a statement through the door.
	exec func(ctx context.Context, q string, args ...any) (outcome, error)
	// ints runs a statement through the door and reads its rows' first
	// column (RETURNING).
	ints func(ctx context.Context, q string, args ...any) ([]int64, error)
	// prepare prepares a statement through the door; each call of the
	// function it returns executes it once.
	prepare func(ctx context.Context, q string) (func(args ...any) (outcome, error), error)
	// db is the sqlx-level DB of a database/sql door (NamedExec), nil for
	// pgxid.
	db *idsql.DB
	// pairs runs a query of two integer columns outside the door (on the
	// raw handle, or in the door's transaction) to check what was written.
	pairs func(ctx context.Context, q string) ([][2]sql.NullInt64, error)
}

// outcome is what a statement answered.
type outcome struct {
	affected int64
	// last is LastInsertId; hasLast is false for pgxid (pgx has none).
	last    int64
	hasLast bool
}

// q writes a case's statement for the door: ? placeholders become $n on
// PostgreSQL, and {Q} quotes identifiers.
func (d *door) q(s string) string {
	quote := `"`
	if d.dialect == "mysql" {
		quote = "`"
	}
	s = strings.ReplaceAll(s, "{Q}", quote)
	if d.dialect != "postgres" {
		return s
	}
	return sqlx.Rebind(sqlx.DOLLAR, s)
}

// keys returns the keys of table's rows by their v.
func (d *door) keys(t *testing.T, table, key string) map[int64]int64 {
	t.Helper()
	got := map[int64]int64{}
	pairs, err := d.pairs(context.Background(), d.q("SELECT "+key+", v FROM "+table))
	if err != nil {
		t.Fatalf("%s: read %s: %v", d.name, table, err)
	}
	for _, p := range pairs {
		got[p[1].Int64] = p[0].Int64
	}
	return got
}

// mustExec runs q through the door.
func (d *door) mustExec(t *testing.T, q string, args ...any) outcome {
	t.Helper()
	o, err := d.exec(context.Background(), d.q(q), args...)
	if err != nil {
		t.Fatalf("%s: %s: %v", d.name, q, err)
	}
	return o
}

// generated checks that key is a key idsql generated (a snowflake key of
// now is far above any key a case gives), and that a statement's
// LastInsertId, when the door has one, names it.
func generated(t *testing.T, what string, key int64, o *outcome) {
	t.Helper()
	if key < 1<<40 {
		t.Errorf("%s: key %d, want a generated key", what, key)
	}
	if o != nil && o.hasLast && o.last != key {
		t.Errorf("%s: LastInsertId %d, want the row's key %d", what, o.last, key)
	}
}

// upsert writes the dialect's form of "insert name, or set v of the row
// that has it"; multi adds a second row.
func upsert(d *door, multi bool) string {
	rows := "(?, ?)"
	if multi {
		rows = "(?, ?), (?, ?)"
	}
	if d.dialect == "mysql" {
		return "INSERT INTO users (name, v) VALUES " + rows + " ON DUPLICATE KEY UPDATE v = VALUES(v)"
	}
	return "INSERT INTO users (name, v) VALUES " + rows + " ON CONFLICT (name) DO UPDATE SET v = excluded.v"
}

// ignore writes the dialect's form of "insert name unless it is there".
func ignore(d *door) string {
	if d.dialect == "mysql" {
		return "INSERT IGNORE INTO users (name, v) VALUES (?, ?)"
	}
	return "INSERT INTO users (name, v) VALUES (?, ?) ON CONFLICT DO NOTHING"
}

// frontDoorCases are the cases every door runs, each on empty tables.
var frontDoorCases = []struct {
	name string
	run  func(t *testing.T, d *door)
}{
	{"key left out", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES (?)", 1)
		generated(t, "row 1", d.keys(t, "orders", "id")[1], &o)
	}},
	{"ORM zero, NULL and DEFAULT keys", func(t *testing.T, d *door) {
		outs := []outcome{
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 0, 1),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", nil, 2),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (DEFAULT, ?)", 3),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (0, ?)", 4),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (NULL, ?)", 5),
		}
		keys := d.keys(t, "orders", "id")
		seen := map[int64]bool{}
		for i := range outs {
			k := keys[int64(i+1)]
			generated(t, fmt.Sprintf("row %d", i+1), k, &outs[i])
			if seen[k] {
				t.Errorf("key %d given twice", k)
			}
			seen[k] = true
		}
	}},
	{"own key kept", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 4242, 1)
		if k := d.keys(t, "orders", "id")[1]; k != 4242 {
			t.Errorf("key %d, want the caller's 4242", k)
		}
	}},
	{"multi-row", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (DEFAULT, ?)", 0, 1, 777, 2, 3)
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES (?), (?)", 4, 5)
		keys := d.keys(t, "orders", "id")
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 3", keys[3], nil)
		generated(t, "row 4", keys[4], &o)
		generated(t, "row 5", keys[5], nil)
		if keys[2] != 777 || keys[1] == keys[3] || keys[4] == keys[5] {
			t.Errorf("keys %v: want row 2 the caller's 777 and distinct generated keys", keys)
		}
	}},
	{"prepared statement re-executed", func(t *testing.T, d *door) {
		run, err := d.prepare(context.Background(), d.q("INSERT INTO orders (id, v) VALUES (?, ?)"))
		if err != nil {
			t.Fatal(err)
		}
		for i, key := range []any{0, nil, 99, 0} {
			if _, err := run(key, i+1); err != nil {
				t.Fatalf("execution %d: %v", i+1, err)
			}
		}
		keys := d.keys(t, "orders", "id")
		for _, v := range []int64{1, 2, 4} {
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
		}
		if keys[3] != 99 || keys[1] == keys[2] || keys[2] == keys[4] || keys[1] == keys[4] {
			t.Errorf("keys %v: want fresh keys at every execution and row 3 the caller's 99", keys)
		}
	}},
	{"fill_zero off keeps zero", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO keepz (id, v) VALUES (?, ?)", 0, 1)
		o := d.mustExec(t, "INSERT INTO keepz (v) VALUES (?)", 2)
		keys := d.keys(t, "keepz", "id")
		if keys[1] != 0 {
			t.Errorf("key %d, want the caller's 0 (fill_zero: false)", keys[1])
		}
		generated(t, "row 2", keys[2], &o)
	}},
	{"quoted names", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO {Q}Audit{Q} ({Q}Key{Q}, v) VALUES (?, ?)", 0, 1)
		o := d.mustExec(t, "INSERT INTO {Q}Audit{Q} (v) VALUES (?)", 2)
		keys := d.keys(t, "{Q}Audit{Q}", "{Q}Key{Q}")
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 2", keys[2], &o)
	}},
	{"RETURNING", func(t *testing.T, d *door) {
		got, err := d.ints(context.Background(), d.q("INSERT INTO orders (id, v) VALUES (?, ?), (DEFAULT, ?) RETURNING id"), 0, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id")
		if want := []int64{keys[1], keys[2]}; !slices.Equal(got, want) {
			t.Errorf("RETURNING %v, want the rows' keys %v", got, want)
		}
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 2", keys[2], nil)
	}},
	{"upsert tells the truth", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO users (name, v) VALUES (?, ?)", "a", 1)
		first := d.keys(t, "users", "id")[1]
		// Updates the row, which keeps its key.
		o := d.mustExec(t, upsert(d, false), "a", 2)
		keys := d.keys(t, "users", "id")
		if len(keys) != 1 || keys[2] != first {
			t.Fatalf("keys %v: want the one row, keeping key %d", keys, first)
		}
		if o.hasLast && o.last != 0 && o.last != first {
			t.Errorf("upsert that updated: LastInsertId %d names no row (the row's key is %d)", o.last, first)
		}
		// Inserts a row: MySQL tells it from an update; PostgreSQL and
		// SQLite do not, and answer 0.
		o = d.mustExec(t, upsert(d, false), "b", 3)
		keys = d.keys(t, "users", "id")
		generated(t, "row 3", keys[3], nil)
		if want := map[bool]int64{true: keys[3], false: 0}[d.dialect == "mysql"]; o.hasLast && o.last != want {
			t.Errorf("upsert that inserted: LastInsertId %d, want %d", o.last, want)
		}
		// Several rows, one updated: no key is known.
		o = d.mustExec(t, upsert(d, true), "c", 4, "a", 5)
		keys = d.keys(t, "users", "id")
		generated(t, "row 4", keys[4], nil)
		if keys[5] != first {
			t.Errorf("keys %v: the updated row changed key", keys)
		}
		if o.hasLast && o.last != 0 {
			t.Errorf("multi-row upsert: LastInsertId %d, want 0", o.last)
		}
		// Nothing written: 0.
		o = d.mustExec(t, ignore(d), "b", 6)
		if o.affected != 0 || o.hasLast && o.last != 0 {
			t.Errorf("insert of nothing: %+v, want no row and LastInsertId 0", o)
		}
		if d.db == nil {
			return
		}
		// NamedExec writes back only keys known to be written.
		type user struct {
			ID   int64  `db:"id"`
			Name string `db:"name"`
			V    int64  `db:"v"`
		}
		named := strings.NewReplacer("(?, ?)", "(:name, :v)").Replace(upsert(d, false))
		u := user{Name: "a", V: 7}
		if _, err := d.db.NamedExec(named, &u); err != nil {
			t.Fatal(err)
		}
		if u.ID != 0 {
			t.Errorf("NamedExec upsert that updated wrote back key %d; the row's key is %d", u.ID, first)
		}
		u = user{Name: "d", V: 8}
		if _, err := d.db.NamedExec(named, &u); err != nil {
			t.Fatal(err)
		}
		keys = d.keys(t, "users", "id")
		if want := map[bool]int64{true: keys[8], false: 0}[d.dialect == "mysql"]; u.ID != want {
			t.Errorf("NamedExec upsert that inserted wrote back %d, want %d", u.ID, want)
		}
		u = user{Name: "e", V: 9}
		if _, err := d.db.NamedExec("INSERT INTO users (name, v) VALUES (:name, :v)", &u); err != nil {
			t.Fatal(err)
		}
		if keys = d.keys(t, "users", "id"); u.ID != keys[9] {
			t.Errorf("NamedExec wrote back %d, want the row's key %d", u.ID, keys[9])
		}
	}},
	{"shards", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO accounts (user_id, v) VALUES (?, ?), (?, ?), (6, ?)", 5, 1, 2, 2, 3)
		keys := d.keys(t, "accounts", "id")
		for v, user := range map[int64]int64{1: 5, 2: 2, 3: 6} {
			if k := keys[v]; k <= 0 || k&3 != user&3 {
				t.Errorf("row %d: key %d, want a key in user %d's shard %d", v, k, user, user&3)
			}
		}
		if keys[1] == keys[2] || keys[2] == keys[3] || o.hasLast && o.last != keys[1] {
			t.Errorf("keys %v, LastInsertId %d: want distinct keys and the first row's", keys, o.last)
		}
		// fill_zero does not apply to a sharded table: a listed key is the
		// caller's, 0 included.
		d.mustExec(t, "INSERT INTO accounts (id, user_id, v) VALUES (?, ?, ?)", 0, 5, 4)
		if k := d.keys(t, "accounts", "id")[4]; k != 0 {
			t.Errorf("listed key %d, want the caller's 0", k)
		}
		ctx := context.Background()
		if _, err := d.exec(ctx, d.q("INSERT INTO accounts (user_id, v) VALUES (? + 1, ?)"), 1, 5); err == nil || !strings.Contains(err.Error(), "user_id") {
			t.Errorf("shard value an expression: %v, want a refusal naming user_id", err)
		}
		if _, err := d.exec(ctx, d.q("INSERT INTO accounts (user_id, v) VALUES (?, ?)"), nil, 6); !errors.Is(err, idsql.ErrShardValue) {
			t.Errorf("shard value NULL: %v, want ErrShardValue", err)
		}
	}},
	{"pgx named arguments", func(t *testing.T, d *door) {
		// pgxid fills the statement pgx rewrote; through database/sql
		// they are refused before anything is sent: by idsql on pgx's
		// stdlib driver (pgx would renumber the key's placeholder), by
		// database/sql's argument conversion elsewhere.
		_, err := d.exec(context.Background(), "INSERT INTO orders (v) VALUES (@v)", pgx.NamedArgs{"v": 1})
		switch {
		case d.db == nil:
			if err != nil {
				t.Fatal(err)
			}
			generated(t, "row 1", d.keys(t, "orders", "id")[1], nil)
			return
		case err == nil:
			t.Fatalf("pgx.NamedArgs through database/sql: accepted")
		case strings.HasSuffix(d.name, "pgx stdlib") && !strings.Contains(err.Error(), "idsql/pgxid"):
			t.Errorf("pgx.NamedArgs through pgx's stdlib: %v, want idsql's refusal pointing to pgxid", err)
		}
		if keys := d.keys(t, "orders", "id"); len(keys) != 0 {
			t.Errorf("rows %v written", keys)
		}
	}},
	{"statements that pass through", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO plain (v) VALUES (?)", 1)
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 5, 1)
		o := d.mustExec(t, "UPDATE orders SET v = ? WHERE id = ?", 2, 5)
		if o.affected != 1 {
			t.Errorf("UPDATE: %d rows, want 1", o.affected)
		}
		if k := d.keys(t, "plain", "id")[1]; k != 1 {
			t.Errorf("plain: key %d, want the database's own 1", k)
		}
		if k := d.keys(t, "orders", "id")[2]; k != 5 {
			t.Errorf("orders: key %d, want 5", k)
		}
	}},
	{"refused before sending", func(t *testing.T, d *door) {
		ctx := context.Background()
		// No key can be given to the rows of INSERT ... SELECT, and the
		// key column has no default: refused with the door's own prefix,
		// naming the table, the cause and the fix.
		prefix := "idsql: insert into orders: "
		if d.db == nil {
			prefix = "pgxid: insert into orders: "
		}
		_, err := d.exec(ctx, d.q("INSERT INTO orders (v) SELECT 1"))
		var re *rewrite.Error
		if err == nil || !strings.HasPrefix(err.Error(), prefix+"INSERT ... SELECT") || !strings.Contains(err.Error(), "list id in the column list") ||
			!errors.As(err, &re) || re.Table != "orders" {
			t.Errorf("INSERT ... SELECT: %v, want a *rewrite.Error beginning %q that says to list id", err, prefix)
		}
		// A malformed statement is called that, with what mends it, and
		// not answered with the key column's default.
		_, err = d.exec(ctx, "INSERT INTO orders (v) VALUES (1, 2)")
		want := prefix + "malformed statement: VALUES row 1 has 2 values for 1 listed column; give each row one value per listed column"
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "default") || !errors.As(err, &re) {
			t.Errorf("a row of 2 values for 1 column: %v, want a *rewrite.Error beginning %q", err, want)
		}
		// max_id: a key above it is refused, never wrapped.
		if _, err := d.exec(ctx, d.q("INSERT INTO capped (v) VALUES (?)"), 1); !errors.Is(err, idsql.ErrKeySpaceExhausted) {
			t.Errorf("max_id: %v, want ErrKeySpaceExhausted", err)
		}
		if keys := d.keys(t, "capped", "id"); len(keys) != 0 {
			t.Errorf("max_id: rows %v written", keys)
		}
	}},
}

// frontDoorSchema is the schema of the cases; auto is plain's own key.
func frontDoorSchema(auto string) []string {
	return []string{
		"CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE keepz (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL UNIQUE, v INT)",
		"CREATE TABLE capped (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE accounts (id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT, v INT)",
		"CREATE TABLE {Q}Audit{Q} ({Q}Key{Q} BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE plain (id " + auto + ", v INT)",
	}
}

func frontDoorConfig() *idsql.Config {
	off := false
	return &idsql.Config{Namespace: "doors", Tables: map[string]idsql.TableConfig{
		"orders": {Strategy: idsql.Snowflake},
		"keepz":  {Strategy: idsql.Snowflake, FillZero: &off},
		"users":  {Strategy: idsql.Snowflake},
		"capped": {Strategy: idsql.Snowflake, MaxID: 1000},
		// A sharded segment table: each key carries its row's user_id's
		// shard in its low 2 bits.
		"accounts": {Strategy: idsql.Segment, Step: 10, Shard: &idsql.ShardConfig{Column: "user_id", Bits: 2}},
		`"Audit"`:  {Strategy: idsql.Snowflake, Column: "Key"},
	}}
}

// emptyTables deletes every row of the case tables.
func emptyTables(t *testing.T, d *door) {
	t.Helper()
	for _, table := range []string{"orders", "keepz", "users", "capped", "accounts", "{Q}Audit{Q}", "plain"} {
		if _, err := d.exec(context.Background(), d.q("DELETE FROM "+table)); err != nil {
			t.Fatalf("%s: empty %s: %v", d.name, table, err)
		}
	}
}

func TestFrontDoors(t *testing.T) {
	doors := []struct {
		name string
		open func(t *testing.T) *door
	}{
		{"database/sql lib/pq", func(t *testing.T) *door { return sqlDoor(t, "postgres") }},
		{"database/sql pgx stdlib", func(t *testing.T) *door { return sqlDoor(t, "pgx") }},
		{"database/sql mysql", func(t *testing.T) *door { return mysqlDoor(t, false) }},
		{"database/sql mysql interpolateParams", func(t *testing.T) *door { return mysqlDoor(t, true) }},
		{"database/sql sqlite", sqliteDoor},
		{"pgxid pgx.Conn", func(t *testing.T) *door { return pgxDoor(t, "conn") }},
		{"pgxid pgxpool", func(t *testing.T) *door { return pgxDoor(t, "pool") }},
		{"pgxid pgx.Tx", func(t *testing.T) *door { return pgxDoor(t, "tx") }},
	}
	for _, dr := range doors {
		t.Run(dr.name, func(t *testing.T) {
			d := dr.open(t)
			d.name = dr.name
			for _, c := range frontDoorCases {
				t.Run(c.name, func(t *testing.T) {
					emptyTables(t, d)
					c.run(t, d)
				})
			}
		})
	}
}

// createTables runs the schema on raw.
func createTables(t *testing.T, raw *sql.DB, d *door, auto string) {
	t.Helper()
	for _, s := range frontDoorSchema(auto) {
		if _, err := raw.Exec(d.q(s)); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// sqlDoor is database/sql over a PostgreSQL driver.
func sqlDoor(t *testing.T, driverName string) *door {
	raw, dsn := pgtest.Open(t)
	cfg := frontDoorConfig()
	d := &door{dialect: "postgres"}
	createTables(t, raw, d, "BIGSERIAL PRIMARY KEY")
	if err := idsql.Migrate(context.Background(), raw, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open(driverName, dsn, cfg, idsql.Options{KeysOptions: idsql.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return sqlFront(d, db, raw)
}

// sqlFront fills in d's functions for a database/sql door.
func sqlFront(d *door, db *idsql.DB, raw *sql.DB) *door {
	d.db = db
	d.exec = func(ctx context.Context, q string, args ...any) (outcome, error) {
		res, err := db.ExecContext(ctx, q, args...)
		return sqlOutcome(res, err)
	}
	d.ints = func(ctx context.Context, q string, args ...any) ([]int64, error) {
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []int64
		for rows.Next() {
			var v int64
			if err := rows.Scan(&v); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, rows.Err()
	}
	d.prepare = func(ctx context.Context, q string) (func(...any) (outcome, error), error) {
		st, err := db.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		return func(args ...any) (outcome, error) { return sqlOutcome(st.ExecContext(ctx, args...)) }, nil
	}
	d.pairs = rawPairs(raw)
	return d
}

// rawPairs reads pairs of integers on raw.
func rawPairs(raw *sql.DB) func(ctx context.Context, q string) ([][2]sql.NullInt64, error) {
	return func(ctx context.Context, q string) ([][2]sql.NullInt64, error) {
		rows, err := raw.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out [][2]sql.NullInt64
		for rows.Next() {
			var p [2]sql.NullInt64
			if err := rows.Scan(&p[0], &p[1]); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, rows.Err()
	}
}

func sqlOutcome(res sql.Result, err error) (outcome, error) {
	if err != nil {
		return outcome{}, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return outcome{}, err
	}
	o := outcome{affected: n, hasLast: true}
	if o.last, err = res.LastInsertId(); err != nil {
		o.hasLast = false // lib/pq: not supported, for statements idsql did not fill
	}
	return o, nil
}

// mysqlDoor is database/sql over go-sql-driver/mysql on MariaDB.
func mysqlDoor(t *testing.T, interpolate bool) *door {
	mc, err := mysql.ParseDSN(mysqltest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	mc.InterpolateParams = interpolate
	dsn := mc.FormatDSN()
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	d := &door{dialect: "mysql"}
	createTables(t, raw, d, "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY")
	cfg := frontDoorConfig()
	reg := registry.New(raw, registry.Settings{AcceptLazyCommits: true})
	if err := idsql.MigrateIn(context.Background(), raw, cfg, idsql.Stores{Workers: reg, Segments: mysqlstore.New(raw)}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{KeysOptions: idsql.KeysOptions{Holder: workers(cfg), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return sqlFront(d, db, raw)
}

// sqliteDoor is database/sql over modernc.org/sqlite.
func sqliteDoor(t *testing.T) *door {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	dsn := "file:" + filepath.Join(t.TempDir(), "doors.db") + "?" + q.Encode()
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	d := &door{dialect: "sqlite"}
	createTables(t, raw, d, "INTEGER PRIMARY KEY")
	cfg := frontDoorConfig()
	// Segment keys live in a file of their own (ErrSharedSQLiteFile).
	store, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "segments.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.DB().Close() })
	if err := idsql.MigrateIn(context.Background(), raw, cfg, idsql.Stores{Segments: store}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: idsql.KeysOptions{Holder: workers(cfg), SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return sqlFront(d, db, raw)
}

// pgxDoor is pgxid over a connection, a pool or a transaction.
func pgxDoor(t *testing.T, over string) *door {
	ctx := context.Background()
	raw, dsn := pgtest.Open(t)
	cfg := frontDoorConfig()
	d := &door{dialect: "postgres"}
	createTables(t, raw, d, "BIGSERIAL PRIMARY KEY")
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	var q pgxid.Querier
	d.pairs = rawPairs(raw)
	switch over {
	case "pool":
		pool, err := pgxpool.New(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(pool.Close)
		q = pool
	default:
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close(ctx) })
		q = conn
		if over == "tx" {
			tx, err := conn.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tx.Rollback(ctx) })
			q = tx
			// The rows are in the transaction: read them there.
			d.pairs = func(ctx context.Context, q string) ([][2]sql.NullInt64, error) {
				rows, err := tx.Query(ctx, q)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]sql.NullInt64, error) {
					var p [2]sql.NullInt64
					err := r.Scan(&p[0], &p[1])
					return p, err
				})
			}
		}
	}
	db, err := pgxid.New(q, cfg, pgxid.Options{KeysOptions: idsql.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.exec = func(ctx context.Context, q string, args ...any) (outcome, error) {
		tag, err := db.Exec(ctx, q, args...)
		return outcome{affected: tag.RowsAffected()}, err
	}
	d.ints = func(ctx context.Context, q string, args ...any) ([]int64, error) {
		rows, err := db.Query(ctx, q, args...)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	n := 0
	d.prepare = func(ctx context.Context, q string) (func(...any) (outcome, error), error) {
		n++
		name := fmt.Sprintf("door%d", n)
		_, err := db.Prepare(ctx, name, q)
		if over == "pool" {
			// A pool has no one connection to prepare on: refused, and
			// pgx's statement cache prepares the text it runs again.
			if err == nil || !strings.Contains(err.Error(), "no single connection") {
				return nil, fmt.Errorf("Prepare on a pool: %v, want a refusal", err)
			}
			name = q
		} else if err != nil {
			return nil, err
		}
		return func(args ...any) (outcome, error) { return d.exec(ctx, name, args...) }, nil
	}
	return d
}
