package pgxid_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/url"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jmoiron/sqlx"
	"github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// The front-door conformance suite: the same cases run through every
// front door on every database it serves, so that a row gets the same key
// decision whichever door it came through (the one fill path,
// idsql/internal/engine). The doors: database/sql (idsql.Open) over lib/pq,
// pgx's stdlib, go-sql-driver/mysql on MariaDB (with and without
// interpolateParams) and SQLite, and pgxid over a *pgx.Conn, a
// *pgxpool.Pool and a pgx.Tx. What a door cannot do is an asserted
// refusal in the case, never a skipped difference. On the pgx.Tx door
// each statement runs in a savepoint, so that a case goes on after the
// server's error it expects. The cases "no key column", "table created
// after first use", "narrow key column", "batch limit" and "shard bits of
// rows of several shards" are the five places where the two fill paths
// of issue #32 disagreed.

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
	// fronts are the door's own types (its DB, and the Tx it begins): a
	// case that needs a method the door lacks asserts on them that it
	// has none (namedExec, sendBatch).
	fronts []any
	// batch sends b through the door's SendBatch (pgxid); nil for a door
	// without one (database/sql).
	batch func(ctx context.Context, b *pgx.Batch) error
	// copy copies rows into table's columns through the door's CopyFrom
	// (pgxid); nil for a door without one (database/sql).
	copy func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error)
	// pairs runs a query of two integer columns outside the door (on the
	// raw handle, or in the door's transaction) to check what was written.
	pairs func(ctx context.Context, q string) ([][2]sql.NullInt64, error)
	// texts runs a query of a text column and an integer column outside
	// the door, as pairs does (a uuid7 table's keys, as text).
	texts func(ctx context.Context, q string) ([]textRow, error)
	// raw runs a statement outside the door: on the raw handle, or in the
	// door's transaction (DDL on another connection would wait for the
	// locks it holds).
	raw func(ctx context.Context, q string) error
	// begin begins a transaction through the door.
	begin func(ctx context.Context) (*doorTx, error)
	// keySet is the door's key set.
	keySet *keyset.Keys
	// schema is the schema (MySQL: database) of the door's tables; {S} in
	// a case's statement.
	schema string
	// twin runs a statement through a second front door on the same
	// database sharing keySet: pgxid for database/sql over PostgreSQL,
	// database/sql over pgx's stdlib for pgxid, another database/sql DB
	// on MySQL and SQLite.
	twin func(ctx context.Context, q string, args ...any) (outcome, error)
}

// doorTx is a transaction begun through a door: a pgxid door's is a
// savepoint when the door wraps a pgx.Tx.
type doorTx struct {
	exec             func(ctx context.Context, q string, args ...any) (outcome, error)
	commit, rollback func() error
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
	s = strings.ReplaceAll(s, "{S}", d.schema)
	if d.dialect != "postgres" {
		return s
	}
	return sqlx.Rebind(sqlx.DOLLAR, s)
}

// keys returns the keys of table's rows by their v. It fails the test
// unless table holds exactly n rows, no two of them have the same v (a row
// written twice, which a map by v would hide) and no two the same key.
func (d *door) keys(t *testing.T, table, key string, n int) map[int64]int64 {
	t.Helper()
	pairs, err := d.pairs(context.Background(), d.q("SELECT "+key+", v FROM "+table))
	if err != nil {
		t.Fatalf("%s: read %s: %v", d.name, table, err)
	}
	if len(pairs) != n {
		t.Errorf("%s: %d rows %v, want %d", table, len(pairs), pairs, n)
	}
	got := make(map[int64]int64, len(pairs))
	byKey := make(map[int64]int64, len(pairs))
	for _, p := range pairs {
		v, k := p[1].Int64, p[0].Int64
		if old, ok := got[v]; ok {
			t.Errorf("%s: row %d written twice, with keys %d and %d", table, v, old, k)
		}
		if !p[0].Valid {
			t.Errorf("%s: row %d has no key", table, v)
		} else if w, ok := byKey[k]; ok {
			t.Errorf("%s: key %d held by rows %d and %d", table, k, w, v)
		}
		got[v], byKey[k] = k, v
	}
	return got
}

// uuidKeys is the UUID codec of the uuids table (the configuration's
// layout, leaf).
var uuidKeys = func() keyform.UUIDKeys {
	u, err := keyform.NewUUIDKeys(snowflake.Leaf)
	if err != nil {
		panic(err)
	}
	return u
}()

// uuids returns the keys of the uuids table's rows by their v, as
// keys does: it fails the test unless the table holds exactly n rows, no
// two with the same v or the same key.
func (d *door) uuids(t *testing.T, n int) map[int64][16]byte {
	t.Helper()
	text := map[string]string{"postgres": "id::text", "mysql": "CAST(id AS CHAR)", "sqlite": "lower(hex(id))"}[d.dialect]
	rows, err := d.texts(context.Background(), "SELECT "+text+", v FROM uuids")
	if err != nil {
		t.Fatalf("%s: read uuids: %v", d.name, err)
	}
	if len(rows) != n {
		t.Errorf("uuids: %d rows %v, want %d", len(rows), rows, n)
	}
	got := make(map[int64][16]byte, len(rows))
	byKey := make(map[[16]byte]int64, len(rows))
	for _, r := range rows {
		b, err := keyform.ParseUUID(r.s.String)
		if err != nil {
			t.Fatalf("uuids row %d: %v", r.v, err)
		}
		if _, ok := got[r.v]; ok {
			t.Errorf("uuids: row %d written twice", r.v)
		}
		if w, ok := byKey[b]; ok {
			t.Errorf("uuids: key %s held by rows %d and %d", r.s.String, w, r.v)
		}
		got[r.v], byKey[b] = b, r.v
	}
	return got
}

// issued fails the test unless b is a UUIDv7 idsql issued for the uuids
// table (google/uuid reads version 7 of the RFC variant, and it reads back
// as a key).
func issued(t *testing.T, what string, b [16]byte) {
	t.Helper()
	if g := uuid.UUID(b); g.Version() != 7 || g.Variant() != uuid.RFC4122 {
		t.Errorf("%s: key %s is version %d, variant %s; want an idsql UUIDv7", what, g, g.Version(), g.Variant())
	} else if _, err := uuidKeys.Key(b); err != nil {
		t.Errorf("%s: key %s: %v", what, g, err)
	}
}

// ownUUID is a key of the caller's for the uuids table, as the door's
// database takes it: text, or SQLite's 16 bytes.
func (d *door) ownUUID(b uuid.UUID) any {
	if d.dialect == "sqlite" {
		return b[:]
	}
	return b.String()
}

// namedExec returns the door's NamedExec (sqlx's, with key write-back).
// A door without one returns nil, after asserting that none of its types
// has a NamedExec: pgxid has none (pgx binds pgx.NamedArgs instead; see
// "pgx named arguments"), and one added to it fails here until the door
// runs the NamedExec cases through it.
func (d *door) namedExec(t *testing.T) func(q string, arg any) (sql.Result, error) {
	t.Helper()
	if d.db != nil {
		return d.db.NamedExec
	}
	lacks(t, d, "NamedExec", "NamedExecContext")
	return nil
}

// sendBatch returns the door's SendBatch. A door without one returns nil,
// after asserting that none of its types has a SendBatch: database/sql
// sends one statement at a time.
func (d *door) sendBatch(t *testing.T) func(ctx context.Context, b *pgx.Batch) error {
	t.Helper()
	if d.batch != nil {
		return d.batch
	}
	lacks(t, d, "SendBatch")
	return nil
}

// copyFrom returns the door's CopyFrom. A door without one returns nil,
// after asserting that none of its types has a CopyFrom: database/sql has
// no COPY.
func (d *door) copyFrom(t *testing.T) func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	t.Helper()
	if d.copy != nil {
		return d.copy
	}
	lacks(t, d, "CopyFrom")
	return nil
}

// lacks asserts that no type of the door has one of methods, and says so
// in the test's log: the door's refusal of what the case does with them.
func lacks(t *testing.T, d *door, methods ...string) {
	t.Helper()
	if len(d.fronts) == 0 {
		t.Fatalf("%s: the door names no types to check for %s", d.name, methods)
	}
	for _, f := range d.fronts {
		for _, m := range methods {
			if _, ok := reflect.TypeOf(f).MethodByName(m); ok {
				t.Fatalf("%s: %T has %s, which the door does not run: give the door its %s", d.name, f, m, m)
			}
		}
	}
	var types []string
	for _, f := range d.fronts {
		types = append(types, fmt.Sprintf("%T", f))
	}
	t.Logf("%s: refused: no %s on %s", d.name, methods[0], strings.Join(types, " or "))
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

// mustRaw runs q outside the door (door.raw).
func (d *door) mustRaw(t *testing.T, q string) {
	t.Helper()
	if err := d.raw(context.Background(), d.q(q)); err != nil {
		t.Fatalf("%s: %s: %v", d.name, q, err)
	}
}

// count returns the number of rows of table.
func (d *door) count(t *testing.T, table string) int64 {
	t.Helper()
	p, err := d.pairs(context.Background(), d.q("SELECT count(*), 0 FROM "+table))
	if err != nil || len(p) != 1 {
		t.Fatalf("%s: count %s: %v, %v", d.name, table, p, err)
	}
	return p[0][0].Int64
}

// repeatRows returns n copies of row, separated by commas.
func repeatRows(row string, n int) string {
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// duplicate reports whether err is the door's driver's error for a key
// that is taken, as the driver reports it.
func duplicate(d *door, err error) bool {
	var pqe *pq.Error
	var pge *pgconn.PgError
	var mye *mysql.MySQLError
	switch {
	case strings.Contains(d.name, "lib/pq"):
		return errors.As(err, &pqe) && pqe.Code == "23505"
	case d.dialect == "postgres":
		return errors.As(err, &pge) && pge.Code == "23505"
	case d.dialect == "mysql":
		return errors.As(err, &mye) && mye.Number == 1062
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
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

// refusedEverywhere sends an INSERT of n rows into table, which has fewer
// than n keys left below its max_id, through every way the door has of
// sending one, and through the Keys it draws from: each is refused with
// ErrKeySpaceExhausted and writes nothing (table keeps its have rows).
// users, for a sharded table, are the rows' user_id (n of them); nil for
// another. Whether a refusal cost a key is for the caller to see, in the
// key the next row takes.
func refusedEverywhere(t *testing.T, d *door, table string, n int, users []int64, have int) {
	t.Helper()
	ctx := context.Background()
	type row struct {
		ID     int64 `db:"id"`
		UserID int64 `db:"user_id"`
		V      int64 `db:"v"`
	}
	rows := make([]row, n)
	cols, one, placeholders := "(v)", "(?)", "(:v)"
	var args []any
	for i := range rows {
		rows[i].V = int64(100 + i)
		if users != nil {
			rows[i].UserID = users[i]
			args = append(args, users[i])
		}
		args = append(args, rows[i].V)
	}
	if users != nil {
		cols, one, placeholders = "(user_id, v)", "(?, ?)", "(:user_id, :v)"
	}
	insert := "INSERT INTO " + table + " " + cols + " VALUES "
	q := d.q(insert + repeatRows(one, n))
	check := func(way string, err error) {
		t.Helper()
		if !errors.Is(err, keyset.ErrKeySpaceExhausted) {
			t.Errorf("%d rows by %s: %v, want ErrKeySpaceExhausted", n, way, err)
		}
		if c := d.count(t, table); c != int64(have) {
			t.Errorf("%d rows by %s: %d rows in %s, want %d", n, way, c, table, have)
		}
	}
	_, err := d.exec(ctx, q, args...)
	check("Exec", err)
	_, err = d.ints(ctx, q+" RETURNING id", args...)
	check("INSERT ... RETURNING", err)
	run, err := d.prepare(ctx, q)
	if err != nil {
		t.Fatalf("prepare %s: %v", q, err)
	}
	_, err = run(args...)
	check("a prepared statement", err)
	tx, err := d.begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.exec(ctx, q, args...)
	if rerr := tx.rollback(); rerr != nil {
		t.Fatalf("rollback: %v", rerr)
	}
	check("a transaction", err)
	_, err = d.twin(ctx, q, args...)
	check("a second door on the same Keys", err)
	if named := d.namedExec(t); named != nil {
		_, err = named(insert+placeholders, rows)
		check("NamedExec", err)
		for _, r := range rows {
			if r.ID != 0 {
				t.Errorf("refused NamedExec wrote back key %d", r.ID)
			}
		}
	}
	if send := d.sendBatch(t); send != nil {
		// n INSERTs of one row each: the first fit on their own.
		b := &pgx.Batch{}
		per := len(args) / n
		for i := range n {
			b.Queue(d.q(insert+one), args[i*per:(i+1)*per]...)
		}
		check("a batch of one-row INSERTs", send(ctx, b))
	}
	if users == nil {
		_, err = d.keySet.NextIDs(ctx, table, n)
		check("Keys.NextIDs", err)
		return
	}
	shards := make([]int, n)
	for i, u := range users {
		if shards[i], err = keyset.ShardOf(u, frontDoorConfig().Tables[table].Shard.Bits); err != nil {
			t.Fatal(err)
		}
	}
	_, err = d.keySet.AppendShardIDs(ctx, nil, table, shards)
	check("Keys.AppendShardIDs", err)
}

// frontDoorCases are the cases every door runs, each on empty tables.
var frontDoorCases = []struct {
	name string
	run  func(t *testing.T, d *door)
}{
	{"key left out", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES (?)", 1)
		generated(t, "row 1", d.keys(t, "orders", "id", 1)[1], &o)
	}},
	{"ORM zero, NULL and DEFAULT keys", func(t *testing.T, d *door) {
		outs := []outcome{
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 0, 1),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", nil, 2),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (DEFAULT, ?)", 3),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (0, ?)", 4),
			d.mustExec(t, "INSERT INTO orders (id, v) VALUES (NULL, ?)", 5),
		}
		keys := d.keys(t, "orders", "id", len(outs))
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
		if k := d.keys(t, "orders", "id", 1)[1]; k != 4242 {
			t.Errorf("key %d, want the caller's 4242", k)
		}
	}},
	{"multi-row", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (DEFAULT, ?)", 0, 1, 777, 2, 3)
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES (?), (?)", 4, 5)
		keys := d.keys(t, "orders", "id", 5)
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
		keys := d.keys(t, "orders", "id", 4)
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
		keys := d.keys(t, "keepz", "id", 2)
		if keys[1] != 0 {
			t.Errorf("key %d, want the caller's 0 (fill_zero: false)", keys[1])
		}
		generated(t, "row 2", keys[2], &o)
	}},
	{"quoted names", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO {Q}Audit{Q} ({Q}Key{Q}, v) VALUES (?, ?)", 0, 1)
		o := d.mustExec(t, "INSERT INTO {Q}Audit{Q} (v) VALUES (?)", 2)
		keys := d.keys(t, "{Q}Audit{Q}", "{Q}Key{Q}", 2)
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 2", keys[2], &o)
	}},
	{"RETURNING", func(t *testing.T, d *door) {
		got, err := d.ints(context.Background(), d.q("INSERT INTO orders (id, v) VALUES (?, ?), (DEFAULT, ?) RETURNING id"), 0, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id", 2)
		if want := []int64{keys[1], keys[2]}; !slices.Equal(got, want) {
			t.Errorf("RETURNING %v, want the rows' keys %v", got, want)
		}
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 2", keys[2], nil)
	}},
	{"upsert tells the truth", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO users (name, v) VALUES (?, ?)", "a", 1)
		first := d.keys(t, "users", "id", 1)[1]
		// Updates the row, which keeps its key.
		o := d.mustExec(t, upsert(d, false), "a", 2)
		keys := d.keys(t, "users", "id", 1)
		if keys[2] != first {
			t.Fatalf("keys %v: want the one row, keeping key %d", keys, first)
		}
		if o.hasLast && o.last != 0 && o.last != first {
			t.Errorf("upsert that updated: LastInsertId %d names no row (the row's key is %d)", o.last, first)
		}
		// Inserts a row: MySQL tells it from an update; PostgreSQL and
		// SQLite do not, and answer 0.
		o = d.mustExec(t, upsert(d, false), "b", 3)
		keys = d.keys(t, "users", "id", 2)
		generated(t, "row 3", keys[3], nil)
		if want := map[bool]int64{true: keys[3], false: 0}[d.dialect == "mysql"]; o.hasLast && o.last != want {
			t.Errorf("upsert that inserted: LastInsertId %d, want %d", o.last, want)
		}
		// Several rows, one updated: no key is known.
		o = d.mustExec(t, upsert(d, true), "c", 4, "a", 5)
		keys = d.keys(t, "users", "id", 3)
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
		if n := d.count(t, "users"); n != 3 {
			t.Errorf("insert of nothing: %d rows, want 3", n)
		}
		named := d.namedExec(t)
		if named == nil {
			return // refused: asserted by namedExec
		}
		// NamedExec writes back only keys known to be written.
		type user struct {
			ID   int64  `db:"id"`
			Name string `db:"name"`
			V    int64  `db:"v"`
		}
		up := strings.NewReplacer("(?, ?)", "(:name, :v)").Replace(upsert(d, false))
		u := user{Name: "a", V: 7}
		if _, err := named(up, &u); err != nil {
			t.Fatal(err)
		}
		if u.ID != 0 {
			t.Errorf("NamedExec upsert that updated wrote back key %d; the row's key is %d", u.ID, first)
		}
		if keys = d.keys(t, "users", "id", 3); keys[7] != first {
			t.Errorf("keys %v: the updated row changed key", keys)
		}
		u = user{Name: "d", V: 8}
		if _, err := named(up, &u); err != nil {
			t.Fatal(err)
		}
		keys = d.keys(t, "users", "id", 4)
		if want := map[bool]int64{true: keys[8], false: 0}[d.dialect == "mysql"]; u.ID != want {
			t.Errorf("NamedExec upsert that inserted wrote back %d, want %d", u.ID, want)
		}
		u = user{Name: "e", V: 9}
		if _, err := named("INSERT INTO users (name, v) VALUES (:name, :v)", &u); err != nil {
			t.Fatal(err)
		}
		if keys = d.keys(t, "users", "id", 5); u.ID != keys[9] {
			t.Errorf("NamedExec wrote back %d, want the row's key %d", u.ID, keys[9])
		}
	}},
	{"shards", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO accounts (user_id, v) VALUES (?, ?), (?, ?), (6, ?)", 5, 1, 2, 2, 3)
		keys := d.keys(t, "accounts", "id", 3)
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
		if k := d.keys(t, "accounts", "id", 4)[4]; k != 0 {
			t.Errorf("listed key %d, want the caller's 0", k)
		}
		ctx := context.Background()
		if _, err := d.exec(ctx, d.q("INSERT INTO accounts (user_id, v) VALUES (? + 1, ?)"), 1, 5); err == nil || !strings.Contains(err.Error(), "user_id") {
			t.Errorf("shard value an expression: %v, want a refusal naming user_id", err)
		}
		if _, err := d.exec(ctx, d.q("INSERT INTO accounts (user_id, v) VALUES (?, ?)"), nil, 6); !errors.Is(err, keyset.ErrShardValue) {
			t.Errorf("shard value NULL: %v, want ErrShardValue", err)
		}
		if n := d.count(t, "accounts"); n != 4 {
			t.Errorf("%d rows after the refusals, want 4", n)
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
			generated(t, "row 1", d.keys(t, "orders", "id", 1)[1], nil)
			return
		case err == nil:
			t.Fatalf("pgx.NamedArgs through database/sql: accepted")
		case strings.HasSuffix(d.name, "pgx stdlib") && !strings.Contains(err.Error(), "idsql/pgxid"):
			t.Errorf("pgx.NamedArgs through pgx's stdlib: %v, want idsql's refusal pointing to pgxid", err)
		}
		d.keys(t, "orders", "id", 0)
	}},
	{"statements that pass through", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO plain (v) VALUES (?)", 1)
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 5, 1)
		o := d.mustExec(t, "UPDATE orders SET v = ? WHERE id = ?", 2, 5)
		if o.affected != 1 {
			t.Errorf("UPDATE: %d rows, want 1", o.affected)
		}
		if k := d.keys(t, "plain", "id", 1)[1]; k != 1 {
			t.Errorf("plain: key %d, want the database's own 1", k)
		}
		if k := d.keys(t, "orders", "id", 1)[2]; k != 5 {
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
		if _, err := d.exec(ctx, d.q("INSERT INTO capped (v) VALUES (?)"), 1); !errors.Is(err, keyset.ErrKeySpaceExhausted) {
			t.Errorf("max_id: %v, want ErrKeySpaceExhausted", err)
		}
		d.keys(t, "capped", "id", 0)
		if n := d.count(t, "orders"); n != 0 {
			t.Errorf("orders: %d rows written", n)
		}
	}},
	{"no key column", func(t *testing.T, d *door) {
		// nokey has no column id, its configured key column: an INSERT
		// that needs a key is refused on every door, and nothing is sent.
		ctx := context.Background()
		d.mustRaw(t, "DROP TABLE IF EXISTS nokey")
		d.mustRaw(t, "CREATE TABLE nokey (k BIGINT, v INT)")
		for _, q := range []string{"INSERT INTO nokey (v) VALUES (?)", "INSERT INTO nokey (k, v) VALUES (?, 1)"} {
			if _, err := d.exec(ctx, d.q(q), 5); !errors.Is(err, idsql.ErrNoKeyColumn) {
				t.Errorf("%s: %v, want ErrNoKeyColumn", q, err)
			}
		}
		if n := d.count(t, "nokey"); n != 0 {
			t.Errorf("%d rows written", n)
		}
	}},
	{"table created after first use", func(t *testing.T, d *door) {
		// What the catalog said before the table existed is not kept:
		// the table made without its key column is refused, and the one
		// made with it gets keys.
		ctx := context.Background()
		ins := d.q("INSERT INTO late (v) VALUES (?)")
		d.mustRaw(t, "DROP TABLE IF EXISTS late")
		if _, err := d.exec(ctx, ins, 1); err == nil || errors.Is(err, idsql.ErrNoKeyColumn) || !strings.Contains(err.Error(), "late") {
			t.Errorf("no table late: %v, want the server's error naming late", err)
		}
		d.mustRaw(t, "CREATE TABLE late (k BIGINT, v INT)")
		if _, err := d.exec(ctx, ins, 2); !errors.Is(err, idsql.ErrNoKeyColumn) {
			t.Errorf("late without its key column: %v, want ErrNoKeyColumn", err)
		}
		if n := d.count(t, "late"); n != 0 {
			t.Errorf("late without its key column: %d rows written", n)
		}
		d.mustRaw(t, "DROP TABLE late")
		d.mustRaw(t, "CREATE TABLE late (id BIGINT NOT NULL PRIMARY KEY, v INT)")
		o, err := d.exec(ctx, ins, 3)
		if err != nil {
			t.Fatalf("late with its key column: %v", err)
		}
		generated(t, "row 3", d.keys(t, "late", "id", 1)[3], &o)
	}},
	{"narrow key column", func(t *testing.T, d *door) {
		// narrow's key is a 32-bit INTEGER: rows that give their keys are
		// written; a row that needs one is refused, until the column is
		// made BIGINT: then the same statements get keys.
		ctx := context.Background()
		d.mustRaw(t, "DROP TABLE IF EXISTS narrow")
		d.mustRaw(t, "CREATE TABLE narrow (id INTEGER NOT NULL PRIMARY KEY, v INT)")
		// Its own text: pgx's statement cache would keep the int4
		// parameter of a text prepared before the ALTER (its encoding of
		// a key then fails, outside idsql).
		own := "INSERT INTO narrow (id, v) VALUES (?, ?), (?, ?)"
		needs := []struct {
			q    string
			args []any
		}{
			{"INSERT INTO narrow (id, v) VALUES (?, ?)", []any{0}},
			{"INSERT INTO narrow (id, v) VALUES (?, ?)", []any{nil}},
			{"INSERT INTO narrow (id, v) VALUES (DEFAULT, ?)", nil},
			{"INSERT INTO narrow (v) VALUES (?)", nil},
		}
		d.mustExec(t, own, 5, 1, 7, 3)
		if d.dialect != "sqlite" { // every SQLite integer is 64-bit
			for i, n := range needs {
				if _, err := d.exec(ctx, d.q(n.q), append(n.args, 10+i)...); !errors.Is(err, idsql.ErrNarrowKey) {
					t.Errorf("%s: %v, want ErrNarrowKey", n.q, err)
				}
			}
			if keys := d.keys(t, "narrow", "id", 2); keys[1] != 5 || keys[3] != 7 {
				t.Fatalf("rows %v, want only rows 1 and 3, with their keys 5 and 7", keys)
			}
			alter := "ALTER TABLE narrow ALTER COLUMN id TYPE bigint"
			if d.dialect == "mysql" {
				alter = "ALTER TABLE narrow MODIFY id BIGINT NOT NULL"
			}
			d.mustRaw(t, alter)
		}
		outs := make([]outcome, len(needs))
		for i, n := range needs {
			outs[i] = d.mustExec(t, n.q, append(n.args, 20+i)...)
		}
		d.mustExec(t, own, 6, 2, 8, 4)
		// A text of its own again: the pgx.Tx door's cached plan of the
		// first read would refuse the changed result type.
		keys := d.keys(t, "narrow AS n", "n.id", 4+len(needs))
		for i := range needs {
			generated(t, fmt.Sprintf("row %d", 20+i), keys[int64(20+i)], &outs[i])
		}
		if keys[1] != 5 || keys[2] != 6 || keys[3] != 7 || keys[4] != 8 || len(keys) != 4+len(needs) {
			t.Errorf("rows %v, want rows 1 to 4 with keys 5 to 8 and every other with a generated key", keys)
		}
	}},
	{"batch limit", func(t *testing.T, d *door) {
		// More rows needing keys than one call gives (MaxBatch): refused
		// alike on every door, naming the limit, and nothing is sent.
		ctx := context.Background()
		n := keyset.MaxBatch + 1
		for _, c := range []struct{ table, q string }{
			{"orders", "INSERT INTO orders (v) VALUES " + repeatRows("(1)", n)},
			{"orders", "INSERT INTO orders (id, v) VALUES " + repeatRows("(0, 1)", n)},
			{"accounts", "INSERT INTO accounts (user_id, v) VALUES " + repeatRows("(7, 1)", n)},
		} {
			_, err := d.exec(ctx, c.q)
			if !errors.Is(err, keyset.ErrBatch) || !strings.Contains(err.Error(), c.table) || !strings.Contains(err.Error(), strconv.Itoa(n)) ||
				!strings.Contains(err.Error(), strconv.Itoa(keyset.MaxBatch)) {
				t.Errorf("%d rows into %s: %v, want ErrBatch naming the table, %d and the limit %d", n, c.table, err, n, keyset.MaxBatch)
			}
		}
		if n := d.count(t, "orders") + d.count(t, "accounts"); n != 0 {
			t.Errorf("%d rows written", n)
		}
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES (?)", 2)
		generated(t, "row 2", d.keys(t, "orders", "id", 1)[2], &o)
	}},
	{"shard bits of rows of several shards", func(t *testing.T, d *door) {
		// Each row's key carries its own row's shard (the table's
		// layout), in one statement and in a prepared one run again, and
		// each shard's keys count up in row order.
		ctx := context.Background()
		tc := frontDoorConfig().Tables["accounts"]
		users := map[int64]int64{} // v -> user_id
		var args []any
		for i, u := range []int64{5, 2, 6, 3, 8, 1, 7, 4, 9} {
			v := int64(i + 1)
			users[v] = u
			args = append(args, u, v)
		}
		o := d.mustExec(t, "INSERT INTO accounts (user_id, v) VALUES "+repeatRows("(?, ?)", len(users)), args...)
		run, err := d.prepare(ctx, d.q("INSERT INTO accounts (user_id, v) VALUES (?, ?), (?, ?)"))
		if err != nil {
			t.Fatal(err)
		}
		for i := int64(0); i < 6; i++ {
			a, b := 100+2*i, 101+2*i
			users[a], users[b] = i, i+3
			if _, err := run(i, a, i+3, b); err != nil {
				t.Fatalf("execution %d: %v", i+1, err)
			}
		}
		keys := d.keys(t, "accounts", "id", len(users))
		vs := slices.Sorted(maps.Keys(users))
		last := map[int]int64{} // shard -> index of its last key
		seen := map[int64]bool{}
		for _, v := range vs {
			k := keys[v]
			shard, err := keyset.ShardOf(users[v], tc.Shard.Bits)
			if err != nil {
				t.Fatal(err)
			}
			p := tc.Gene().Decompose(k)
			if k <= 0 || p.Shard != shard || p.Index <= last[shard] || seen[k] {
				t.Errorf("row %d (user %d): key %d (%+v), want a new key of shard %d after index %d", v, users[v], k, p, shard, last[shard])
			}
			last[shard], seen[k] = p.Index, true
		}
		if o.hasLast && o.last != keys[1] {
			t.Errorf("LastInsertId %d, want the first row's key %d", o.last, keys[1])
		}
	}},
	{"INSERT ... SELECT", func(t *testing.T, d *door) {
		// The rows of INSERT ... SELECT cannot be given keys: one that
		// lists the key column gives them itself and passes; into a
		// table not configured it passes; one that needs keys is refused
		// (see "refused before sending").
		d.mustExec(t, "INSERT INTO orders (id, v) SELECT ?, ?", 7, 1)
		d.mustExec(t, "INSERT INTO orders (id, v) SELECT id + 1, v + 1 FROM orders")
		d.mustExec(t, "INSERT INTO plain (v) SELECT v FROM orders")
		if keys := d.keys(t, "orders", "id", 2); keys[1] != 7 || keys[2] != 8 {
			t.Errorf("orders %v, want keys 7 and 8", keys)
		}
		if keys := d.keys(t, "plain", "id", 2); keys[1] < 1 || keys[1] >= 1<<40 || keys[2] < 1 || keys[2] >= 1<<40 {
			t.Errorf("plain %v, want two rows with the database's own keys", keys)
		}
		_, err := d.exec(context.Background(), d.q("INSERT INTO orders (v) SELECT v FROM plain"))
		var re *rewrite.Error
		if !errors.As(err, &re) || re.Table != "orders" {
			t.Errorf("INSERT ... SELECT needing keys: %v, want a *rewrite.Error", err)
		}
		if n := d.count(t, "orders"); n != 2 {
			t.Errorf("%d rows, want 2", n)
		}
	}},
	{"INSERT without a column list", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO orders VALUES (?, ?)", 0, 1)
		d.mustExec(t, "INSERT INTO orders VALUES (?, ?)", 55, 2)
		o3 := d.mustExec(t, "INSERT INTO orders VALUES (NULL, ?), (?, ?)", 3, nil, 4)
		keys := d.keys(t, "orders", "id", 4)
		generated(t, "row 1", keys[1], &o)
		generated(t, "row 3", keys[3], &o3)
		generated(t, "row 4", keys[4], nil)
		if keys[2] != 55 || keys[1] == keys[3] || keys[3] == keys[4] {
			t.Errorf("keys %v: want row 2 the caller's 55 and distinct generated keys", keys)
		}
	}},
	{"multi-row of own, zero, NULL and DEFAULT keys", func(t *testing.T, d *door) {
		o := d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (?, ?), (DEFAULT, ?), (?, ?), (12, ?), (0, ?)",
			0, 1, 11, 2, nil, 3, 4, 0, 5, 6, 7)
		keys := d.keys(t, "orders", "id", 7)
		generated(t, "row 1", keys[1], &o)
		seen := map[int64]bool{}
		for _, v := range []int64{1, 3, 4, 5, 7} {
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
			if seen[keys[v]] {
				t.Errorf("key %d given twice", keys[v])
			}
			seen[keys[v]] = true
		}
		if keys[2] != 11 || keys[6] != 12 {
			t.Errorf("keys %v: want rows 2 and 6 the caller's 11 and 12", keys)
		}
		if o.affected != 7 {
			t.Errorf("%d rows affected, want 7", o.affected)
		}
	}},
	{"own keys of any value kept", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (-7, ?), (?, ?)", -1, 1, int64(math.MaxInt64), 2, 3, 1, 4)
		want := map[int64]int64{1: -1, 2: math.MaxInt64, 3: -7, 4: 1}
		if keys := d.keys(t, "orders", "id", len(want)); !maps.Equal(keys, want) {
			t.Errorf("keys %v, want %v", keys, want)
		}
	}},
	{"prepared statement run 30 times", func(t *testing.T, d *door) {
		run, err := d.prepare(context.Background(), d.q("INSERT INTO orders (id, v) VALUES (?, ?)"))
		if err != nil {
			t.Fatal(err)
		}
		outs := map[int64]outcome{}
		for i := int64(1); i <= 30; i++ {
			key := []any{0, nil, 1000 + i}[i%3]
			if outs[i], err = run(key, i); err != nil {
				t.Fatalf("execution %d: %v", i, err)
			}
		}
		keys := d.keys(t, "orders", "id", 30)
		seen := map[int64]bool{}
		for i := int64(1); i <= 30; i++ {
			k := keys[i]
			if i%3 == 2 {
				if k != 1000+i {
					t.Errorf("row %d: key %d, want the caller's %d", i, k, 1000+i)
				}
				continue
			}
			o := outs[i]
			generated(t, fmt.Sprintf("row %d", i), k, &o)
			if seen[k] {
				t.Errorf("key %d given twice", k)
			}
			seen[k] = true
		}
	}},
	{"transaction rolled back, then committed", func(t *testing.T, d *door) {
		ctx := context.Background()
		tx, err := d.begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []struct {
			q    string
			args []any
		}{{"INSERT INTO orders (v) VALUES (?)", []any{1}}, {"INSERT INTO orders (id, v) VALUES (?, ?)", []any{0, 2}}} {
			if o, err := tx.exec(ctx, d.q(s.q), s.args...); err != nil || o.affected != 1 {
				t.Fatalf("%s in a transaction: %+v, %v", s.q, o, err)
			}
		}
		if err := tx.rollback(); err != nil {
			t.Fatal(err)
		}
		if n := d.count(t, "orders"); n != 0 {
			t.Fatalf("%d rows after the rollback", n)
		}
		if tx, err = d.begin(ctx); err != nil {
			t.Fatal(err)
		}
		o3, err := tx.exec(ctx, d.q("INSERT INTO orders (v) VALUES (?)"), 3)
		if err != nil {
			t.Fatal(err)
		}
		if err := tx.commit(); err != nil {
			t.Fatal(err)
		}
		o4 := d.mustExec(t, "INSERT INTO orders (v) VALUES (?)", 4)
		keys := d.keys(t, "orders", "id", 2)
		generated(t, "row 3", keys[3], &o3)
		generated(t, "row 4", keys[4], &o4)
		if keys[3] == keys[4] {
			t.Errorf("keys %v: want rows 3 and 4 with distinct keys", keys)
		}
	}},
	{"RETURNING of several rows", func(t *testing.T, d *door) {
		ctx := context.Background()
		got, err := d.ints(ctx, d.q("INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (?, ?), (DEFAULT, ?) RETURNING id"), 0, 1, 31, 2, nil, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		got2, err := d.ints(ctx, d.q("INSERT INTO orders (v) VALUES (?), (?) RETURNING id"), 5, 6)
		if err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id", 6)
		if want := []int64{keys[1], 31, keys[3], keys[4], keys[5], keys[6]}; !slices.Equal(append(got, got2...), want) {
			t.Errorf("RETURNING %v then %v, want the rows' keys %v", got, got2, want)
		}
		for _, v := range []int64{1, 3, 4, 5, 6} {
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
		}
	}},
	{"upsert that ignores rows", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO users (name, v) VALUES (?, ?)", "a", 1)
		first := d.keys(t, "users", "id", 1)[1]
		q := "INSERT INTO users (name, v) VALUES (?, ?), (?, ?) ON CONFLICT (name) DO NOTHING"
		if d.dialect == "mysql" {
			q = "INSERT IGNORE INTO users (name, v) VALUES (?, ?), (?, ?)"
		}
		// The first row is ignored: its drawn key is not the statement's.
		o := d.mustExec(t, q, "a", 2, "b", 3)
		keys := d.keys(t, "users", "id", 2)
		generated(t, "row 3", keys[3], nil)
		if o.affected != 1 || keys[1] != first || o.hasLast && o.last != 0 && o.last != keys[3] {
			t.Errorf("%+v, keys %v: want one row written, a's key %d kept, and LastInsertId 0 or b's key", o, keys, first)
		}
		one := strings.Replace(q, ", (?, ?)", "", 1)
		o = d.mustExec(t, one, "b", 4)
		if o.affected != 0 || o.hasLast && o.last != 0 {
			t.Errorf("ignored row: %+v, want no row and LastInsertId 0", o)
		}
		if n := d.count(t, "users"); n != 2 {
			t.Errorf("%d rows, want 2", n)
		}
		named := d.namedExec(t)
		if named == nil {
			return // refused: asserted by namedExec
		}
		// NamedExec writes back no key to the ignored row, and to the
		// written one only its own.
		type user struct {
			ID   int64  `db:"id"`
			Name string `db:"name"`
			V    int64  `db:"v"`
		}
		us := []user{{Name: "a", V: 5}, {Name: "c", V: 6}}
		if _, err := named(strings.NewReplacer("(?, ?), (?, ?)", "(:name, :v)").Replace(q), us); err != nil {
			t.Fatal(err)
		}
		keys = d.keys(t, "users", "id", 3)
		generated(t, "row 6", keys[6], nil)
		if us[0].ID != 0 || us[1].ID != 0 && us[1].ID != keys[6] {
			t.Errorf("NamedExec wrote back %d and %d, want 0 for the ignored row and 0 or %d", us[0].ID, us[1].ID, keys[6])
		}
	}},
	{"INSERT into a table not configured passes unchanged", func(t *testing.T, d *door) {
		// A zero key is the caller's (MySQL's AUTO_INCREMENT takes 0 for
		// "the next one"), and a key left out is the database's own.
		o1 := d.mustExec(t, "INSERT INTO plain (id, v) VALUES (?, ?)", 0, 1)
		o2 := d.mustExec(t, "INSERT INTO plain (v) VALUES (?), (?)", 2, 3)
		keys := d.keys(t, "plain", "id", 3)
		want0 := int64(0)
		if d.dialect == "mysql" {
			want0 = o1.last // AUTO_INCREMENT's next
		}
		if keys[1] != want0 || keys[2] < 1 || keys[2] >= 1<<40 || keys[3] != keys[2]+1 {
			t.Errorf("keys %v: want row 1's key %d and the database's own for rows 2 and 3", keys, want0)
		}
		if d.dialect != "postgres" && (!o1.hasLast || !o2.hasLast || o1.last != keys[1] || o2.last != keys[map[bool]int64{true: 2, false: 3}[d.dialect == "mysql"]]) {
			t.Errorf("LastInsertId %+v, %+v: want the database's own answer", o1, o2)
		}
	}},
	{"SELECT, UPDATE and DELETE pass through", func(t *testing.T, d *door) {
		ctx := context.Background()
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?)", 21, 1, 22, 2)
		got, err := d.ints(ctx, d.q("SELECT id FROM orders WHERE v >= ? ORDER BY id"), 1)
		if err != nil || !slices.Equal(got, []int64{21, 22}) {
			t.Errorf("SELECT: %v, %v, want [21 22]", got, err)
		}
		got, err = d.ints(ctx, "SELECT count(*) FROM orders WHERE 'INSERT INTO orders (v) VALUES (1)' <> ''")
		if err != nil || !slices.Equal(got, []int64{2}) {
			t.Errorf("SELECT naming an INSERT: %v, %v, want [2]", got, err)
		}
		if o := d.mustExec(t, "UPDATE orders SET v = v + 10 WHERE id = ?", 21); o.affected != 1 {
			t.Errorf("UPDATE: %d rows, want 1", o.affected)
		}
		if o := d.mustExec(t, "DELETE FROM orders WHERE id = ?", 22); o.affected != 1 {
			t.Errorf("DELETE: %d rows, want 1", o.affected)
		}
		if keys := d.keys(t, "orders", "id", 1); !maps.Equal(keys, map[int64]int64{11: 21}) {
			t.Errorf("rows %v, want row 11 with key 21", keys)
		}
	}},
	{"DDL holding an INSERT passes unchanged", func(t *testing.T, d *door) {
		// Bodies that insert into orders without its key: filled, they
		// would take a bind parameter the DDL cannot have.
		ddl := map[string][]string{
			"postgres": {
				"CREATE RULE door_rule AS ON INSERT TO plain DO ALSO INSERT INTO orders (v) VALUES (NEW.v)",
				"CREATE FUNCTION door_f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN INSERT INTO orders (v) VALUES (NEW.v); RETURN NEW; END$$",
			},
			"mysql":  {"CREATE TRIGGER door_trig AFTER INSERT ON plain FOR EACH ROW INSERT INTO orders (v) VALUES (NEW.v)"},
			"sqlite": {"CREATE TRIGGER door_trig AFTER INSERT ON plain BEGIN INSERT INTO orders (v) VALUES (NEW.v); END"},
		}[d.dialect]
		check := map[string]string{
			"postgres": "SELECT (SELECT count(*) FROM pg_rules WHERE rulename = 'door_rule' AND schemaname = current_schema()), (SELECT count(*) FROM pg_proc WHERE proname = 'door_f')",
			"mysql":    "SELECT count(*), 1 FROM information_schema.triggers WHERE trigger_name = 'door_trig' AND trigger_schema = DATABASE()",
			"sqlite":   "SELECT count(*), 1 FROM sqlite_master WHERE name = 'door_trig'",
		}[d.dialect]
		drop := map[string][]string{
			"postgres": {"DROP RULE door_rule ON plain", "DROP FUNCTION door_f()"},
			"mysql":    {"DROP TRIGGER door_trig"},
			"sqlite":   {"DROP TRIGGER door_trig"},
		}[d.dialect]
		for _, s := range ddl {
			d.mustExec(t, s)
		}
		if p, err := d.pairs(context.Background(), check); err != nil || len(p) != 1 || p[0][0].Int64 != 1 || p[0][1].Int64 < 1 {
			t.Errorf("DDL not made: %v, %v", p, err)
		}
		for _, s := range drop {
			d.mustExec(t, s)
		}
		if n := d.count(t, "orders"); n != 0 {
			t.Errorf("%d rows in orders", n)
		}
	}},
	{"comments and literals naming an INSERT", func(t *testing.T, d *door) {
		o := d.mustExec(t, "/* INSERT INTO plain (v) VALUES (1) */ INSERT INTO orders (v) VALUES (?) -- INSERT INTO plain (v) VALUES (2)\n", 1)
		d.mustExec(t, "INSERT INTO plain (v) VALUES (?) /* INSERT INTO orders (v) VALUES (2) */", 2)
		d.mustExec(t, "INSERT INTO users (name, v) VALUES ('INSERT INTO orders', ?), ('it''s (v) VALUES (', ?)", 3, 4)
		keys := d.keys(t, "orders", "id", 1)
		generated(t, "orders row 1", keys[1], &o)
		if k, ok := d.keys(t, "plain", "id", 1)[2]; !ok || k < 1 || k >= 1<<40 {
			t.Errorf("plain: row 2's key %d (%t), want the database's own", k, ok)
		}
		users := d.keys(t, "users", "id", 2)
		generated(t, "users row 3", users[3], nil)
		generated(t, "users row 4", users[4], nil)
	}},
	{"quoted names: own key, DEFAULT and RETURNING", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO {Q}Audit{Q} ({Q}Key{Q}, v) VALUES (?, ?)", 77, 1)
		o := d.mustExec(t, "INSERT INTO {Q}Audit{Q} ({Q}Key{Q}, v) VALUES (DEFAULT, ?)", 2)
		got, err := d.ints(context.Background(), d.q("INSERT INTO {Q}Audit{Q} (v) VALUES (?), (?) RETURNING {Q}Key{Q}"), 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "{Q}Audit{Q}", "{Q}Key{Q}", 4)
		generated(t, "row 2", keys[2], &o)
		if keys[1] != 77 || !slices.Equal(got, []int64{keys[3], keys[4]}) {
			t.Errorf("keys %v, RETURNING %v: want row 1 the caller's 77 and RETURNING rows 3 and 4", keys, got)
		}
		generated(t, "row 3", keys[3], nil)
	}},
	{"schema-qualified names", func(t *testing.T, d *door) {
		o1 := d.mustExec(t, "INSERT INTO {S}.orders (v) VALUES (?)", 1)
		o2 := d.mustExec(t, "INSERT INTO {Q}{S}{Q}.{Q}orders{Q} (id, v) VALUES (?, ?)", 0, 2)
		d.mustExec(t, "INSERT INTO {S}.orders (id, v) VALUES (?, ?)", 3, 3)
		keys := d.keys(t, "orders", "id", 3)
		generated(t, "row 1", keys[1], &o1)
		generated(t, "row 2", keys[2], &o2)
		if keys[1] == keys[2] || keys[3] != 3 {
			t.Errorf("keys %v: want distinct generated keys and row 3 the caller's 3", keys)
		}
	}},
	{"max_id of a segment table", func(t *testing.T, d *door) {
		// The keys of cappedseg and cappedover end at 3 (max_id). A
		// statement needing more keys than are left is refused whole,
		// through every way the door has of sending it, writes nothing,
		// and costs no key (promise 11): the next key drawn is the one
		// that would have come without it. So the rows that fit take
		// keys 1, 2 and 3, whatever was refused in between. cappedseg's
		// first statement fits, so its refusals come before any key is
		// drawn; cappedover's first statement crosses max_id, and the
		// keys up to it drawn for it are kept for the next statements.
		for _, table := range []string{"cappedseg", "cappedover"} {
			t.Run(table, func(t *testing.T) {
				want := map[int64]int64{} // the rows written: key by v
				fits := func(n int) {
					t.Helper()
					var args []any
					for range n {
						v := int64(len(want) + 1)
						args, want[v] = append(args, v), v
					}
					if _, err := d.exec(context.Background(), d.q("INSERT INTO "+table+" (v) VALUES "+repeatRows("(?)", n)), args...); err != nil {
						t.Fatalf("%d rows to take keys up to %d: %v", n, len(want), err)
					}
					if keys := d.keys(t, table, "id", len(want)); !maps.Equal(keys, want) {
						t.Fatalf("keys by row %v, want %v: each row the key after the last row's", keys, want)
					}
				}
				if table == "cappedover" {
					refusedEverywhere(t, d, table, 4, nil, 0)
				}
				fits(2)
				refusedEverywhere(t, d, table, 2, nil, 2)
				fits(1)
				refusedEverywhere(t, d, table, 1, nil, 3)
				// A row giving its own key is the caller's.
				d.mustExec(t, "INSERT INTO "+table+" (id, v) VALUES (?, ?)", 9, 9)
				want[9] = 9
				if keys := d.keys(t, table, "id", len(want)); !maps.Equal(keys, want) {
					t.Errorf("keys by row %v, want %v", keys, want)
				}
			})
		}
		// cappedshards' keys carry their row's shard (user_id's low 2
		// bits): n<<2 | shard, at most 13, so shard 0's are 4, 8 and 12
		// and shard 3's 7 and 11. A statement with rows of both shards,
		// when shard 3's keys are used up and shard 0 has one left, is
		// refused whole and costs shard 0 nothing: its last key, 12, is
		// the next row's.
		t.Run("cappedshards", func(t *testing.T) {
			ins := "INSERT INTO cappedshards (user_id, v) VALUES (?, ?), (?, ?)"
			d.mustExec(t, ins, 0, 1, 3, 2)
			d.mustExec(t, ins, 0, 3, 3, 4)
			refusedEverywhere(t, d, "cappedshards", 2, []int64{0, 3}, 4)
			if _, err := d.exec(context.Background(), d.q("INSERT INTO cappedshards (user_id, v) VALUES (?, ?)"), 0, 5); err != nil {
				t.Errorf("shard 0's last key: %v", err)
			}
			refusedEverywhere(t, d, "cappedshards", 1, []int64{0}, 5)
			refusedEverywhere(t, d, "cappedshards", 1, []int64{3}, 5)
			want := map[int64]int64{1: 4, 2: 7, 3: 8, 4: 11, 5: 12}
			if keys := d.keys(t, "cappedshards", "id", len(want)); !maps.Equal(keys, want) {
				t.Errorf("keys by row %v, want %v", keys, want)
			}
		})
	}},
	{"a refused batch draws no key", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO seq (v) VALUES (?)", 1)
		_, err := d.exec(context.Background(), "INSERT INTO seq (v) VALUES "+repeatRows("(2)", keyset.MaxBatch+1))
		if !errors.Is(err, keyset.ErrBatch) {
			t.Errorf("oversized batch: %v, want ErrBatch", err)
		}
		d.mustExec(t, "INSERT INTO seq (v) VALUES (?)", 3)
		if keys := d.keys(t, "seq", "id", 2); keys[3] != keys[1]+1 {
			t.Errorf("keys %v: want row 3 the key after row 1's", keys)
		}
	}},
	{"malformed statements", func(t *testing.T, d *door) {
		for _, q := range []string{
			"INSERT INTO orders (v VALUES (1)",
			"INSERT INTO orders (v) VALUES ((1)",
			"INSERT INTO orders (v) VALUES (1); INSERT INTO orders (v) VALUES (2)",
		} {
			_, err := d.exec(context.Background(), q)
			var re *rewrite.Error
			if !errors.As(err, &re) || re.Table != "orders" {
				t.Errorf("%s: %v, want a *rewrite.Error about orders", q, err)
			}
		}
		if n := d.count(t, "orders"); n != 0 {
			t.Errorf("%d rows written", n)
		}
	}},
	{"unknown column: the server's error", func(t *testing.T, d *door) {
		_, err := d.exec(context.Background(), d.q("INSERT INTO orders (nosuch, v) VALUES (?, ?)"), 1, 2)
		var re *rewrite.Error
		if err == nil || !strings.Contains(err.Error(), "nosuch") || errors.As(err, &re) {
			t.Errorf("%v, want the server's error naming nosuch", err)
		}
		if n := d.count(t, "orders"); n != 0 {
			t.Errorf("%d rows written", n)
		}
	}},
	{"duplicate own key: the server's error", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 5, 1)
		for _, q := range []string{"INSERT INTO orders (id, v) VALUES (?, ?)", "INSERT INTO orders (id, v) VALUES (0, 3), (?, ?)"} {
			_, err := d.exec(context.Background(), d.q(q), 5, 2)
			if !duplicate(d, err) {
				t.Errorf("%s: %v, want the driver's duplicate key error", q, err)
			}
		}
		if keys := d.keys(t, "orders", "id", 1); !maps.Equal(keys, map[int64]int64{1: 5}) {
			t.Errorf("rows %v, want row 1 only", keys)
		}
	}},
	{"LastInsertId names the first row's key", func(t *testing.T, d *door) {
		o1 := d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?), (?, ?), (?, ?)", 0, 1, 0, 2, 0, 3)
		o2 := d.mustExec(t, "INSERT INTO orders (v) VALUES (?), (?), (?)", 4, 5, 6)
		keys := d.keys(t, "orders", "id", 6)
		generated(t, "row 1", keys[1], &o1)
		generated(t, "row 4", keys[4], &o2)
		if d.db != nil && (!o1.hasLast || !o2.hasLast) {
			t.Errorf("database/sql: no LastInsertId: %+v, %+v", o1, o2)
		}
		if o1.affected != 3 || o2.affected != 3 {
			t.Errorf("rows affected %d, %d, want 3", o1.affected, o2.affected)
		}
	}},
	{"COPY gives every row a key", func(t *testing.T, d *door) {
		copyFrom := d.copyFrom(t)
		if copyFrom == nil {
			return // refused: asserted by copyFrom
		}
		ctx := context.Background()
		// The key column left out: every row gets one.
		if n, err := copyFrom(ctx, "orders", []string{"v"}, [][]any{{1}, {2}, {3}}); err != nil || n != 3 {
			t.Fatalf("copy without the key column: %d rows, %v", n, err)
		}
		// Listed: 0 and NULL get one, the caller's key is kept.
		if n, err := copyFrom(ctx, "orders", []string{"id", "v"}, [][]any{{0, 4}, {nil, 5}, {777, 6}}); err != nil || n != 3 {
			t.Fatalf("copy with the key column: %d rows, %v", n, err)
		}
		keys := d.keys(t, "orders", "id", 6)
		for _, v := range []int64{1, 2, 3, 4, 5} {
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
		}
		if keys[6] != 777 {
			t.Errorf("row 6: key %d, want the caller's 777", keys[6])
		}
		// fill_zero: false keeps a listed 0.
		if _, err := copyFrom(ctx, "keepz", []string{"id", "v"}, [][]any{{0, 1}}); err != nil {
			t.Fatal(err)
		}
		if k := d.keys(t, "keepz", "id", 1)[1]; k != 0 {
			t.Errorf("keepz: key %d, want the caller's 0 (fill_zero: false)", k)
		}
		// A sharded table: each key in its row's shard; a copy without
		// the shard column is refused before it writes.
		if _, err := copyFrom(ctx, "accounts", []string{"user_id", "v"}, [][]any{{5, 1}, {2, 2}, {6, 3}}); err != nil {
			t.Fatal(err)
		}
		for v, user := range map[int64]int64{1: 5, 2: 2, 3: 6} {
			if k := d.keys(t, "accounts", "id", 3)[v]; k <= 0 || k&3 != user&3 {
				t.Errorf("accounts row %d: key %d, want a key in user %d's shard %d", v, k, user, user&3)
			}
		}
		if _, err := copyFrom(ctx, "accounts", []string{"v"}, [][]any{{4}}); err == nil || !strings.Contains(err.Error(), "user_id") {
			t.Errorf("copy without the shard column: %v, want a refusal naming user_id", err)
		}
		if n := d.count(t, "accounts"); n != 3 {
			t.Errorf("%d accounts rows after the refusal, want 3", n)
		}
	}},
	{"uuid7: left out, nil UUID, NULL, DEFAULT and own keys", func(t *testing.T, d *door) {
		o := d.mustExec(t, d.q("INSERT INTO uuids (v) VALUES (?)"), 1)
		if o.hasLast && o.last != 0 {
			t.Errorf("LastInsertId %d for a UUID key; want 0 (no int64 names it)", o.last)
		}
		mine := uuid.New()
		d.mustExec(t, d.q("INSERT INTO uuids (id, v) VALUES (?, ?), (?, ?), (NULL, ?), (DEFAULT, ?), (?, ?)"),
			uuid.Nil.String(), 2, d.ownUUID(uuid.Nil), 3, 4, 5, d.ownUUID(mine), 6)
		keys := d.uuids(t, 6)
		for v := range int64(5) {
			issued(t, fmt.Sprintf("row %d", v+1), keys[v+1])
		}
		if keys[6] != mine {
			t.Errorf("row 6: key %s, want the caller's %s", uuid.UUID(keys[6]), mine)
		}
		p, err := d.prepare(context.Background(), d.q("INSERT INTO uuids (v) VALUES (?)"))
		if err != nil {
			t.Fatal(err)
		}
		for v := range int64(3) {
			if _, err := p(10 + v); err != nil {
				t.Fatal(err)
			}
		}
		keys = d.uuids(t, 9)
		for v := range int64(3) {
			issued(t, fmt.Sprintf("prepared row %d", 10+v), keys[10+v])
		}
	}},
	{"uuid7: SendBatch, COPY and NamedExec", func(t *testing.T, d *door) {
		ctx := context.Background()
		n := 0
		if send := d.sendBatch(t); send != nil {
			b := &pgx.Batch{}
			b.Queue(d.q("INSERT INTO uuids (v) VALUES (?), (?)"), 1, 2)
			b.Queue(d.q("INSERT INTO uuids (id, v) VALUES (?, ?)"), nil, 3)
			if err := send(ctx, b); err != nil {
				t.Fatal(err)
			}
			n = 3
		}
		if copyFrom := d.copyFrom(t); copyFrom != nil {
			_, err := copyFrom(ctx, "uuids", []string{"v"}, [][]any{{4}})
			if err == nil || !strings.Contains(err.Error(), "UUID keys") {
				t.Errorf("COPY into a uuid7 table: %v; want a refusal saying it has UUID keys", err)
			}
		}
		if named := d.namedExec(t); named != nil {
			type row struct {
				ID uuid.UUID `db:"id"`
				V  int64     `db:"v"`
			}
			rows := []row{{V: 5}, {V: 6}}
			if _, err := named(d.q("INSERT INTO uuids (v) VALUES (:v)"), rows); err != nil {
				t.Fatal(err)
			}
			keys := d.uuids(t, n+2)
			for _, r := range rows {
				if r.ID != keys[r.V] {
					t.Errorf("NamedExec wrote back %s for row %d, which holds %s", r.ID, r.V, uuid.UUID(keys[r.V]))
				}
			}
			n += 2
		}
		keys := d.uuids(t, n)
		for v, k := range keys {
			issued(t, fmt.Sprintf("row %d", v), k)
		}
	}},
	{"SendBatch fills each queued INSERT", func(t *testing.T, d *door) {
		send := d.sendBatch(t)
		if send == nil {
			return // refused: asserted by sendBatch
		}
		b := &pgx.Batch{}
		b.Queue(d.q("INSERT INTO orders (v) VALUES (?), (?)"), 1, 2)
		b.Queue(d.q("INSERT INTO orders (id, v) VALUES (?, ?), (DEFAULT, ?)"), 0, 3, 4)
		b.Queue(d.q("INSERT INTO orders (id, v) VALUES (?, ?)"), 888, 5)
		b.Queue(d.q("INSERT INTO seq (v) VALUES (?)"), 6)
		if err := send(context.Background(), b); err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id", 5)
		for _, v := range []int64{1, 2, 3, 4} {
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
		}
		if keys[5] != 888 {
			t.Errorf("row 5: key %d, want the caller's 888", keys[5])
		}
		if k := d.keys(t, "seq", "id", 1)[6]; k <= 0 {
			t.Errorf("seq row 6: key %d, want a segment key", k)
		}
	}},
	{"NamedExec writes back a slice of structs", func(t *testing.T, d *door) {
		named := d.namedExec(t)
		if named == nil {
			return // refused: asserted by namedExec
		}
		type order struct {
			ID int64 `db:"id"`
			V  int64 `db:"v"`
		}
		rows := []order{{V: 1}, {V: 2}, {ID: 55, V: 3}}
		if _, err := named("INSERT INTO orders (v) VALUES (:v)", rows); err != nil {
			t.Fatal(err)
		}
		listed := []*order{{V: 4}, {ID: 66, V: 5}}
		if _, err := named("INSERT INTO orders (id, v) VALUES (:id, :v)", listed); err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id", 5)
		for _, r := range append([]*order{&rows[0], &rows[1], &rows[2]}, listed...) {
			if r.ID != keys[r.V] {
				t.Errorf("row %d: written back %d, want the row's key %d", r.V, r.ID, keys[r.V])
			}
		}
		generated(t, "row 1", keys[1], nil)
		generated(t, "row 2", keys[2], nil)
		generated(t, "row 4", keys[4], nil)
		if keys[3] != 55 || keys[5] != 66 || keys[1] == keys[2] {
			t.Errorf("keys %v: want the callers' 55 and 66 and distinct generated keys", keys)
		}
	}},
	{"NamedExec writes back maps", func(t *testing.T, d *door) {
		named := d.namedExec(t)
		if named == nil {
			return // refused: asserted by namedExec
		}
		m := map[string]any{"v": int64(1)}
		if _, err := named("INSERT INTO orders (v) VALUES (:v)", m); err != nil {
			t.Fatal(err)
		}
		ms := []map[string]any{{"v": int64(2)}, {"v": int64(3)}}
		if _, err := named("INSERT INTO orders (v) VALUES (:v)", ms); err != nil {
			t.Fatal(err)
		}
		keys := d.keys(t, "orders", "id", 3)
		for _, m := range append(ms, m) {
			v := m["v"].(int64)
			generated(t, fmt.Sprintf("row %d", v), keys[v], nil)
			if m["id"] != keys[v] {
				t.Errorf("row %d: written back %v, want the row's key %d", v, m["id"], keys[v])
			}
		}
	}},
	{"NamedExec that fails writes nothing back", func(t *testing.T, d *door) {
		named := d.namedExec(t)
		if named == nil {
			return // refused: asserted by namedExec
		}
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES (?, ?)", 5, 9)
		type order struct {
			ID int64 `db:"id"`
			V  int64 `db:"v"`
		}
		for _, q := range []string{"INSERT INTO orders (v) VALUES (:v)", "INSERT INTO orders (id, v) VALUES (:id, :v)"} {
			rows := []order{{V: 1}, {ID: 5, V: 2}} // the second row's key is taken
			if _, err := named(q, rows); !duplicate(d, err) {
				t.Errorf("%s: %v, want the driver's duplicate key error", q, err)
			}
			if rows[0].ID != 0 || rows[1].ID != 5 {
				t.Errorf("%s: rows %+v, want their keys as they were", q, rows)
			}
			ms := []map[string]any{{"v": int64(1)}, {"v": int64(2), "id": int64(5)}}
			if strings.Contains(q, ":id") {
				ms[0]["id"] = int64(0) // named, so there
			}
			if _, err := named(q, ms); !duplicate(d, err) {
				t.Errorf("%s: %v, want the driver's duplicate key error", q, err)
			}
			if id, ok := ms[0]["id"]; ok && id != int64(0) || ms[1]["id"] != int64(5) {
				t.Errorf("%s: maps %v, want their keys as they were", q, ms)
			}
		}
		if keys := d.keys(t, "orders", "id", 1); !maps.Equal(keys, map[int64]int64{9: 5}) {
			t.Errorf("rows %v, want row 9 only", keys)
		}
	}},
	{"context cancelled before the statement", func(t *testing.T, d *door) {
		d.mustExec(t, "INSERT INTO seq (v) VALUES (?)", 1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if _, err := d.exec(ctx, d.q("INSERT INTO seq (v) VALUES (?)"), 2); !errors.Is(err, context.Canceled) {
			t.Errorf("%v, want context.Canceled", err)
		}
		d.mustExec(t, "INSERT INTO seq (v) VALUES (?)", 3)
		if keys := d.keys(t, "seq", "id", 2); keys[3] != keys[1]+1 {
			t.Errorf("keys %v: want no row 2, and row 3 the key after row 1's (no key drawn)", keys)
		}
	}},
	{"1,000 rows in one statement", func(t *testing.T, d *door) {
		const n = 1000
		var args, listed []any
		for v := 1; v <= n; v++ {
			args = append(args, v)
			listed = append(listed, []any{0, nil}[v%2], n+v)
		}
		o := d.mustExec(t, "INSERT INTO orders (v) VALUES "+repeatRows("(?)", n), args...)
		d.mustExec(t, "INSERT INTO orders (id, v) VALUES "+repeatRows("(?, ?)", n), listed...)
		keys := d.keys(t, "orders", "id", 2*n)
		generated(t, "row 1", keys[1], &o)
		seen := map[int64]bool{}
		for v, k := range keys {
			generated(t, fmt.Sprintf("row %d", v), k, nil)
			seen[k] = true
		}
		if len(keys) != 2*n || len(seen) != 2*n || o.affected != n {
			t.Errorf("%d rows, %d distinct keys, %d affected: want %d, %d, %d", len(keys), len(seen), o.affected, 2*n, 2*n, n)
		}
	}},
	{"DEFAULT VALUES", func(t *testing.T, d *door) {
		// MySQL has no DEFAULT VALUES: refused, and () VALUES () is its
		// row of defaults.
		q := "INSERT INTO orders DEFAULT VALUES"
		if d.dialect == "mysql" {
			var re *rewrite.Error
			if _, err := d.exec(context.Background(), q); !errors.As(err, &re) {
				t.Errorf("DEFAULT VALUES: %v, want a *rewrite.Error", err)
			}
			q = "INSERT INTO orders () VALUES ()"
		}
		o := d.mustExec(t, q)
		generated(t, "the row", d.keys(t, "orders", "id", 1)[0], &o)
	}},
	{"keywords and names in any case", func(t *testing.T, d *door) {
		o := d.mustExec(t, "iNsErT InTo orders (V) vAlUeS (?)", 1)
		o2 := d.mustExec(t, "insert into orders (ID, v) values (?, ?)", 0, 2)
		d.mustExec(t, "INSERT INTO orders (Id, V) VALUES (?, ?)", 3, 3)
		keys := d.keys(t, "orders", "id", 3)
		generated(t, "row 1", keys[1], &o)
		generated(t, "row 2", keys[2], &o2)
		if keys[3] != 3 || keys[1] == keys[2] {
			t.Errorf("keys %v: want distinct generated keys and row 3 the caller's 3", keys)
		}
	}},
	{"two doors sharing one Keys", func(t *testing.T, d *door) {
		// Statements through the door and a second one on the same Keys,
		// alternating: distinct keys, and seq's count up by one across
		// both (one segment, shared).
		ctx := context.Background()
		for i := int64(1); i <= 20; i++ {
			exec := d.exec
			if i%2 == 0 {
				exec = d.twin
			}
			for _, s := range []struct {
				q    string
				args []any
			}{
				{"INSERT INTO orders (id, v) VALUES (?, ?)", []any{0, i}},
				{"INSERT INTO seq (v) VALUES (?)", []any{i}},
				{"INSERT INTO accounts (user_id, v) VALUES (?, ?)", []any{i, i}},
			} {
				if _, err := exec(ctx, d.q(s.q), s.args...); err != nil {
					t.Fatalf("statement %d: %s: %v", i, s.q, err)
				}
			}
		}
		orders, seq, accounts := d.keys(t, "orders", "id", 20), d.keys(t, "seq", "id", 20), d.keys(t, "accounts", "id", 20)
		seen := map[int64]bool{}
		for i := int64(1); i <= 20; i++ {
			generated(t, fmt.Sprintf("orders row %d", i), orders[i], nil)
			if seen[orders[i]] || seen[-accounts[i]] || accounts[i] <= 0 || seq[i] != seq[1]+i-1 {
				t.Errorf("row %d: orders key %d, accounts key %d, seq key %d (row 1's %d): want new keys, and seq's one after the last", i, orders[i], accounts[i], seq[i], seq[1])
			}
			seen[orders[i]], seen[-accounts[i]] = true, true
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
		"CREATE TABLE seq (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE cappedseg (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE cappedover (id BIGINT NOT NULL PRIMARY KEY, v INT)",
		"CREATE TABLE cappedshards (id BIGINT NOT NULL PRIMARY KEY, user_id BIGINT, v INT)",
		// nokey, late and narrow: made by their cases.
	}
}

func frontDoorConfig() *keyset.Config {
	off := false
	return &keyset.Config{Namespace: "doors", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Snowflake},
		"keepz":  {Strategy: keyset.Snowflake, FillZero: &off},
		"users":  {Strategy: keyset.Snowflake},
		"capped": {Strategy: keyset.Snowflake, MaxID: 1000},
		// A sharded segment table: each key carries its row's user_id's
		// shard in its low 2 bits.
		"accounts": {Strategy: keyset.Segment, Step: 10, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 2}},
		`"Audit"`:  {Strategy: keyset.Snowflake, Column: "Key"},
		// Tables whose cases make them: nokey without its key column
		// (id), late after the first INSERT, narrow with a 32-bit key.
		"nokey":  {Strategy: keyset.Snowflake},
		"late":   {Strategy: keyset.Snowflake},
		"narrow": {Strategy: keyset.Snowflake},
		// Segment keys count up by one: seq's show whether a key was
		// drawn; cappedseg's and cappedover's end at 3, cappedshards' at
		// 13 (each shard's on its own).
		"seq":          {Strategy: keyset.Segment, Step: 10},
		"cappedseg":    {Strategy: keyset.Segment, Step: 10, MaxID: 3},
		"cappedover":   {Strategy: keyset.Segment, Step: 10, MaxID: 3},
		"cappedshards": {Strategy: keyset.Segment, Step: 10, MaxID: 13, Shard: &keyset.ShardConfig{Column: "user_id", Bits: 2}},
		// UUIDv7 keys, on each database's UUID column (createTables).
		"uuids": {Strategy: keyset.UUID7},
	}}
}

// emptyTables deletes every row of the case tables.
func emptyTables(t *testing.T, d *door) {
	t.Helper()
	for _, table := range []string{"orders", "keepz", "users", "capped", "accounts", "{Q}Audit{Q}", "plain", "seq", "cappedseg", "cappedover", "cappedshards", "uuids"} {
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
	uuids := "CREATE TABLE uuids (id " + map[string]string{"postgres": "uuid", "mysql": "UUID", "sqlite": "BLOB"}[d.dialect] + " NOT NULL PRIMARY KEY, v INT)"
	for _, s := range append(frontDoorSchema(auto), uuids) {
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
	db, err := idsql.Open(driverName, dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.twin = pgxTwin(t, dsn, db.Keys())
	d.schema = schemaOf(t, raw, d.dialect)
	return sqlFront(d, db, raw)
}

// sqlFront fills in d's functions for a database/sql door.
func sqlFront(d *door, db *idsql.DB, raw *sql.DB) *door {
	d.db = db
	d.fronts = []any{db, (*idsql.Tx)(nil)}
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
	d.pairs, d.texts = rawPairs(raw), rawTexts(raw)
	d.raw = rawExec(raw)
	d.begin = func(ctx context.Context) (*doorTx, error) {
		tx, err := db.BeginTxx(ctx, nil)
		if err != nil {
			return nil, err
		}
		return &doorTx{
			exec: func(ctx context.Context, q string, args ...any) (outcome, error) {
				return sqlOutcome(tx.ExecContext(ctx, q, args...))
			},
			commit: tx.Commit, rollback: tx.Rollback,
		}, nil
	}
	d.keySet = db.Keys()
	return d
}

// rawExec runs statements on raw.
func rawExec(raw *sql.DB) func(ctx context.Context, q string) error {
	return func(ctx context.Context, q string) error {
		_, err := raw.ExecContext(ctx, q)
		return err
	}
}

// schemaOf returns the schema (MySQL: database) raw's tables are in.
func schemaOf(t *testing.T, raw *sql.DB, dialect string) string {
	t.Helper()
	q := map[string]string{"postgres": "SELECT current_schema()", "mysql": "SELECT DATABASE()", "sqlite": "SELECT 'main'"}[dialect]
	var s string
	if err := raw.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

// textRow is a row of a text and an integer (door.texts).
type textRow struct {
	s sql.NullString
	v int64
}

// rawTexts reads rows of a text and an integer on raw.
func rawTexts(raw *sql.DB) func(ctx context.Context, q string) ([]textRow, error) {
	return func(ctx context.Context, q string) ([]textRow, error) {
		rows, err := raw.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []textRow
		for rows.Next() {
			var p textRow
			if err := rows.Scan(&p.s, &p.v); err != nil {
				return nil, err
			}
			out = append(out, p)
		}
		return out, rows.Err()
	}
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
	db, err := idsql.Open("mysql", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.twin = sqlTwin(t, "mysql", dsn, db.Keys())
	d.schema = schemaOf(t, raw, d.dialect)
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
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg), SegmentStore: store}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.twin = sqlTwin(t, "sqlite", dsn, db.Keys())
	d.schema = schemaOf(t, raw, d.dialect)
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
	var tx pgx.Tx
	d.pairs, d.texts = rawPairs(raw), rawTexts(raw)
	d.raw = rawExec(raw)
	d.schema = schemaOf(t, raw, d.dialect)
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
			var err error
			if tx, err = conn.Begin(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tx.Rollback(ctx) })
			q = tx
			d.raw = func(ctx context.Context, q string) error {
				_, err := tx.Exec(ctx, q)
				return err
			}
			// The rows are in the transaction: read them there.
			d.texts = func(ctx context.Context, q string) ([]textRow, error) {
				rows, err := tx.Query(ctx, q)
				if err != nil {
					return nil, err
				}
				return pgx.CollectRows(rows, func(r pgx.CollectableRow) (textRow, error) {
					var p textRow
					err := r.Scan(&p.s, &p.v)
					return p, err
				})
			}
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
	db, err := pgxid.New(q, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	d.keySet = db.Keys()
	d.twin = sqlTwin(t, "pgx", dsn, db.Keys())
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
	d.fronts = []any{db, (*pgxid.Tx)(nil)}
	d.batch = func(ctx context.Context, b *pgx.Batch) error { return db.SendBatch(ctx, b).Close() }
	d.copy = func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
		return db.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
	}
	if tx != nil {
		copyIn := d.copy
		cp := savepoint(tx, func(ctx context.Context, table string, args ...any) (int64, error) {
			return copyIn(ctx, table, args[0].([]string), args[1].([][]any))
		})
		d.copy = func(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
			return cp(ctx, table, columns, rows)
		}
		d.exec, d.ints = savepoint(tx, d.exec), savepoint(tx, d.ints)
		send := savepoint(tx, func(ctx context.Context, _ string, args ...any) (struct{}, error) {
			return struct{}{}, db.SendBatch(ctx, args[0].(*pgx.Batch)).Close()
		})
		d.batch = func(ctx context.Context, b *pgx.Batch) error {
			_, err := send(ctx, "", b)
			return err
		}
	}
	d.begin = func(ctx context.Context) (*doorTx, error) {
		tx, err := db.Begin(ctx)
		if err != nil {
			return nil, err
		}
		return &doorTx{
			exec: func(ctx context.Context, q string, args ...any) (outcome, error) {
				tag, err := tx.Exec(ctx, q, args...)
				return outcome{affected: tag.RowsAffected()}, err
			},
			commit:   func() error { return tx.Commit(ctx) },
			rollback: func() error { return tx.Rollback(ctx) },
		}, nil
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

// savepoint runs each statement of f in a savepoint of tx, rolled back to
// when the statement fails: a failed statement aborts a PostgreSQL
// transaction, and the cases go on after the errors they expect, as an
// application using savepoints would.
func savepoint[T any](tx pgx.Tx, f func(ctx context.Context, q string, args ...any) (T, error)) func(ctx context.Context, q string, args ...any) (T, error) {
	return func(ctx context.Context, q string, args ...any) (T, error) {
		// Not under ctx: a case's cancelled context is for the statement.
		sctx := context.WithoutCancel(ctx)
		if _, err := tx.Exec(sctx, "SAVEPOINT door_statement"); err != nil {
			var zero T
			return zero, err
		}
		out, err := f(ctx, q, args...)
		end := "RELEASE SAVEPOINT door_statement"
		if err != nil {
			end = "ROLLBACK TO SAVEPOINT door_statement"
		}
		if _, err2 := tx.Exec(sctx, end); err2 != nil && err == nil {
			err = err2
		}
		return out, err
	}
}

// sqlTwin opens a database/sql door on dsn with keys (Options.Keys), and
// returns its exec.
func sqlTwin(t *testing.T, driverName, dsn string, keys *keyset.Keys) func(ctx context.Context, q string, args ...any) (outcome, error) {
	db, err := idsql.Open(driverName, dsn, frontDoorConfig(), idsql.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func(ctx context.Context, q string, args ...any) (outcome, error) {
		return sqlOutcome(db.ExecContext(ctx, q, args...))
	}
}

// pgxTwin opens pgxid over a pool on dsn with keys (Options.Keys), and
// returns its exec.
func pgxTwin(t *testing.T, dsn string, keys *keyset.Keys) func(ctx context.Context, q string, args ...any) (outcome, error) {
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	db, err := pgxid.New(pool, frontDoorConfig(), pgxid.Options{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func(ctx context.Context, q string, args ...any) (outcome, error) {
		tag, err := db.Exec(ctx, q, args...)
		return outcome{affected: tag.RowsAffected()}, err
	}
}
