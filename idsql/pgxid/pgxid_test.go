package pgxid_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/pgtest"
)

const schemaSQL = `
CREATE TABLE orders (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE events (kind text NOT NULL, at int, id bigint PRIMARY KEY);
CREATE TABLE with_default (id bigserial PRIMARY KEY, v int);
CREATE TABLE narrow (id integer PRIMARY KEY, v int);
CREATE TABLE plain (id bigserial PRIMARY KEY, v int);
CREATE TABLE "Audit" ("Key" bigint PRIMARY KEY, what text);
`

func testConfig() *keyset.Config {
	return &keyset.Config{
		Namespace: "shop",
		Tables: map[string]keyset.TableConfig{
			"orders":       {Strategy: keyset.Snowflake},
			"users":        {Strategy: keyset.Segment, Step: 100},
			"events":       {Strategy: keyset.Snowflake},
			"with_default": {Strategy: keyset.Snowflake},
			"narrow":       {Strategy: keyset.Snowflake},
			"Audit":        {Strategy: keyset.Snowflake, Column: "Key"},
		},
	}
}

// workers gives each configured table its own worker ID.
func workers(cfg *keyset.Config) holder.Holder {
	m := map[string]int64{}
	for i, t := range cfg.TableNames() {
		m[t] = int64(10 + i)
	}
	return holder.Static(m)
}

// setup creates the test tables and idsql's own on a fresh schema and
// returns a pgx pool on it and the DSN.
func setup(t *testing.T) (*pgxpool.Pool, string) {
	t.Helper()
	_, pool, dsn := setupWith(t, schemaSQL, testConfig())
	return pool, dsn
}

// setupWith runs ddl on a fresh schema, migrates cfg there and returns
// the schema's database/sql pool, a pgx pool on it and the DSN.
func setupWith(t *testing.T, ddl string, cfg *keyset.Config) (*sql.DB, *pgxpool.Pool, string) {
	t.Helper()
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return raw, pool, dsn
}

// wrap wraps q with keys of its own (on the default database/sql pool and
// worker table, as a user gets them).
func wrap(t *testing.T, q pgxid.Querier) *pgxid.DB {
	t.Helper()
	cfg := testConfig()
	db, err := pgxid.New(q, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// ids returns the keys of table in insertion order of its key column.
func ids(t *testing.T, q pgxid.Querier, query string) []int64 {
	t.Helper()
	rows, err := q.Query(context.Background(), query)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// distinctPositive fails unless keys holds want distinct positive keys.
func distinctPositive(t *testing.T, what string, keys []int64, want int) {
	t.Helper()
	seen := map[int64]bool{}
	for _, k := range keys {
		if k <= 0 || seen[k] {
			t.Fatalf("%s: key %d is not positive or repeats (keys %v)", what, k, keys)
		}
		seen[k] = true
	}
	if len(keys) != want {
		t.Fatalf("%s: %d keys, want %d", what, len(keys), want)
	}
}

func TestPgxPoolFillsKeys(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	tag, err := db.Exec(ctx, "INSERT INTO orders (user_id, note) VALUES ($1, $2)", 7, "one")
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("Exec: %v, %v", tag, err)
	}
	if _, err := db.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1), ($2), (3)", 1, 2); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRow(ctx, "INSERT INTO orders (user_id) VALUES ($1) RETURNING id", 9).Scan(&id); err != nil {
		t.Fatal(err)
	}
	keys := ids(t, pool, "SELECT id FROM orders")
	distinctPositive(t, "orders", keys, 5)
	if !slices.Contains(keys, id) {
		t.Fatalf("RETURNING id %d is not among the rows' keys %v", id, keys)
	}
	// Query with RETURNING, several rows.
	rows, err := db.Query(ctx, "INSERT INTO users (name) VALUES ($1), ($2) RETURNING id", "ann", "bob")
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil || !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("segment keys %v, %v; want [1 2]", got, err)
	}
	// Without a column list the catalog gives the column order.
	if _, err := db.Exec(ctx, "INSERT INTO events VALUES ($1, $2)", "click", 5); err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "events", ids(t, pool, "SELECT id FROM events WHERE kind = 'click' AND at = 5"), 1)
	// A quoted table with its own key column.
	if _, err := db.Exec(ctx, `INSERT INTO "Audit" (what) VALUES ($1)`, "x"); err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "Audit", ids(t, pool, `SELECT "Key" FROM "Audit"`), 1)
}

func TestPgxPassThrough(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	// A listed key is the caller's.
	if _, err := db.Exec(ctx, "INSERT INTO orders (id, user_id) VALUES ($1, $2)", 42, 1); err != nil {
		t.Fatal(err)
	}
	// Unconfigured tables and other statements are untouched.
	if _, err := db.Exec(ctx, "INSERT INTO plain (v) VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, "UPDATE orders SET note = $1 WHERE id = $2", "n", 42); err != nil {
		t.Fatal(err)
	}
	// INSERT ... SELECT into a table whose key has a default passes unchanged.
	if _, err := db.Exec(ctx, "INSERT INTO with_default (v) SELECT 5"); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, pool, "SELECT id FROM orders"); !slices.Equal(got, []int64{42}) {
		t.Fatalf("orders keys %v, want [42]", got)
	}
	if got := ids(t, pool, "SELECT id FROM plain"); !slices.Equal(got, []int64{1}) {
		t.Fatalf("plain keys %v, want the sequence's [1]", got)
	}
	if got := ids(t, pool, "SELECT id FROM with_default"); !slices.Equal(got, []int64{1}) {
		t.Fatalf("with_default keys %v, want the sequence's [1]", got)
	}
}

func TestPgxNamedArgs(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	if _, err := db.Exec(ctx, "INSERT INTO orders (user_id, note) VALUES (@user, @note)",
		pgx.NamedArgs{"user": 1, "note": "named"}); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := db.QueryRow(ctx, "INSERT INTO orders (user_id, note) VALUES (@user, @note) RETURNING id",
		pgx.StrictNamedArgs{"user": 2, "note": "strict"}).Scan(&id); err != nil {
		t.Fatal(err)
	}
	// With pgx's option arguments before the named ones, and no column
	// list (the catalog is read on the connection pgx runs it on).
	rows, err := db.Query(ctx, "INSERT INTO events VALUES (@kind, @at) RETURNING id",
		pgx.QueryExecModeSimpleProtocol, pgx.NamedArgs{"kind": "named", "at": 3})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "events", evs, 1)
	keys := ids(t, pool, "SELECT id FROM orders WHERE note IN ('named', 'strict')")
	distinctPositive(t, "orders", keys, 2)
	if !slices.Contains(keys, id) {
		t.Fatalf("RETURNING id %d is not among %v", id, keys)
	}
	// pgx's own error for a missing strict argument comes through.
	_, err = db.Exec(ctx, "INSERT INTO orders (user_id) VALUES (@user)", pgx.StrictNamedArgs{})
	if err == nil || !strings.Contains(err.Error(), "user") {
		t.Fatalf("missing strict named argument: %v, want pgx's error naming it", err)
	}
}

func TestPgxTx(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tx.(*pgxid.Tx); !ok {
		t.Fatalf("Begin returned %T, want *pgxid.Tx", tx)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1)", 1); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, pool, "SELECT id FROM orders"); len(got) != 0 {
		t.Fatalf("rolled-back insert left %v", got)
	}
	// pgx.BeginFunc with a savepoint inside, and named arguments.
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1)", 2); err != nil {
			return err
		}
		return pgx.BeginFunc(ctx, tx, func(sp pgx.Tx) error {
			_, err := sp.Exec(ctx, "INSERT INTO orders (user_id) VALUES (@u)", pgx.NamedArgs{"u": 3})
			return err
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "orders", ids(t, pool, "SELECT id FROM orders"), 2)
	// A transaction begun elsewhere.
	raw, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		t.Fatal(err)
	}
	wtx := db.WrapTx(raw)
	if _, err := wtx.Exec(ctx, "INSERT INTO users (name) VALUES ($1)", "tx"); err != nil {
		t.Fatal(err)
	}
	if err := wtx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "users", ids(t, pool, "SELECT id FROM users"), 1)
}

func TestPgxConnAndPrepare(t *testing.T) {
	_, dsn := setup(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	db := wrap(t, conn)
	if _, err := db.Prepare(ctx, "ins", "INSERT INTO orders (user_id) VALUES ($1)"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := db.Exec(ctx, "ins", i); err != nil {
			t.Fatal(err)
		}
	}
	// Prepared in a transaction, and run in a batch by name.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Prepare(ctx, "ins_user", "INSERT INTO users (name) VALUES ($1) RETURNING id"); err != nil {
		t.Fatal(err)
	}
	var id int64
	if err := tx.QueryRow(ctx, "ins_user", "p").Scan(&id); err != nil || id != 1 {
		t.Fatalf("prepared INSERT RETURNING: %d, %v; want the first segment key, 1", id, err)
	}
	b := &pgx.Batch{}
	b.Queue("ins", 7)
	b.Queue("ins_user", "q")
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "orders", ids(t, conn, "SELECT id FROM orders"), 4)
	if got := ids(t, conn, "SELECT id FROM users ORDER BY id"); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("users keys %v, want [1 2]", got)
	}
	// A statement that passes through is prepared as it is.
	if _, err := db.Prepare(ctx, "sel", "SELECT count(*) FROM orders WHERE user_id = $1"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.QueryRow(ctx, "sel", 7).Scan(&n); err != nil || n != 1 {
		t.Fatalf("prepared SELECT: %d, %v", n, err)
	}
}

func TestPgxBatch(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	b := &pgx.Batch{}
	b.Queue("INSERT INTO orders (user_id) VALUES ($1)", 1)
	var returned int64
	b.Queue("INSERT INTO orders (user_id) VALUES ($1) RETURNING id", 2).QueryRow(func(r pgx.Row) error {
		return r.Scan(&returned)
	})
	b.Queue("INSERT INTO orders (user_id) VALUES (@u), (@u)", pgx.NamedArgs{"u": 3})
	b.Queue("INSERT INTO plain (v) VALUES ($1)", 4)
	var count int
	b.Queue("SELECT count(*) FROM orders").QueryRow(func(r pgx.Row) error { return r.Scan(&count) })
	before := b.QueuedQueries[0].SQL
	if err := db.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if count != 4 {
		t.Fatalf("count in the batch %d, want 4", count)
	}
	keys := ids(t, pool, "SELECT id FROM orders")
	distinctPositive(t, "orders", keys, 4)
	if !slices.Contains(keys, returned) {
		t.Fatalf("RETURNING id %d in the batch is not among %v", returned, keys)
	}
	if b.QueuedQueries[0].SQL != before || len(b.QueuedQueries[0].Arguments) != 1 {
		t.Fatalf("the caller's batch was modified: %q %v", b.QueuedQueries[0].SQL, b.QueuedQueries[0].Arguments)
	}
	// A batch that begins a transaction gives a Tx that fills keys.
	b = &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue("INSERT INTO users (name) VALUES ($1)", "batch")
	br := db.SendBatch(ctx, b)
	tx := br.Tx()
	if _, ok := tx.(*pgxid.Tx); !ok {
		t.Fatalf("batch Tx is %T, want *pgxid.Tx", tx)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "INSERT INTO users (name) VALUES ($1)", "after"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := ids(t, pool, "SELECT id FROM users ORDER BY id"); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("users keys %v, want [1 2]", got)
	}
}

// rowsWithError is a CopyFromSource whose source fails after n rows.
type rowsWithError struct {
	n, i int
}

func (r *rowsWithError) Next() bool { r.i++; return r.i <= r.n+1 }
func (r *rowsWithError) Values() ([]any, error) {
	if r.i > r.n {
		return nil, errors.New("source broke")
	}
	return []any{r.i}, nil
}
func (r *rowsWithError) Err() error { return nil }

func TestPgxCopyFrom(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	const n = 3000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int32(i), fmt.Sprint("c", i)}
	}
	got, err := db.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"user_id", "note"}, pgx.CopyFromRows(rows))
	if err != nil || got != n {
		t.Fatalf("CopyFrom: %d, %v", got, err)
	}
	if len(rows[0]) != 2 {
		t.Fatalf("the caller's rows were modified: %v", rows[0])
	}
	distinctPositive(t, "orders", ids(t, pool, "SELECT id FROM orders"), n)
	// Segment keys, through a schema-qualified name.
	var schema string
	if err := pool.QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	names := pgx.CopyFromSlice(250, func(i int) ([]any, error) { return []any{fmt.Sprint("u", i)}, nil })
	if _, err := db.CopyFrom(ctx, pgx.Identifier{schema, "users"}, []string{"name"}, names); err != nil {
		t.Fatal(err)
	}
	if keys := ids(t, pool, "SELECT id FROM users ORDER BY id"); len(keys) != 250 || keys[0] != 1 || keys[249] != 250 {
		t.Fatalf("segment keys from COPY: %d keys from %v", len(keys), keys[:min(3, len(keys))])
	}
	// Keys listed by the caller are kept; unconfigured tables pass.
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"id", "user_id"}, pgx.CopyFromRows([][]any{{int64(-5), int32(1)}})); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"plain"}, []string{"v"}, pgx.CopyFromRows([][]any{{int32(1)}})); err != nil {
		t.Fatal(err)
	}
	var k int64
	if err := pool.QueryRow(ctx, "SELECT id FROM orders WHERE id < 0").Scan(&k); err != nil || k != -5 {
		t.Fatalf("caller's key: %d, %v", k, err)
	}
	// A source that fails writes nothing.
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"at"}, &rowsWithError{n: 40}); err == nil || !strings.Contains(err.Error(), "source broke") {
		t.Fatalf("failing source: %v", err)
	}
	if got := ids(t, pool, "SELECT id FROM events"); len(got) != 0 {
		t.Fatalf("a failed copy left %d rows", len(got))
	}
	// In a transaction.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"events"}, []string{"kind"}, pgx.CopyFromRows([][]any{{"a"}, {"b"}})); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	distinctPositive(t, "events", ids(t, pool, "SELECT id FROM events"), 2)
}

func TestPgxErrors(t *testing.T) {
	pool, _ := setup(t)
	db := wrap(t, pool)
	ctx := context.Background()
	// A statement the rewriter cannot fill, into a table without a default.
	_, err := db.Exec(ctx, "INSERT INTO orders (user_id) SELECT 1")
	if err == nil || !strings.Contains(err.Error(), "insert into orders") {
		t.Fatalf("INSERT ... SELECT: %v, want an error naming orders", err)
	}
	var n int
	if err := db.QueryRow(ctx, "INSERT INTO orders (user_id) SELECT 1 RETURNING id").Scan(&n); err == nil || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("QueryRow INSERT ... SELECT: %v, want an error naming orders", err)
	}
	rows, err := db.Query(ctx, "INSERT INTO orders (user_id) SELECT 1 RETURNING id")
	if err == nil || rows == nil || rows.Err() == nil || rows.Next() {
		t.Fatalf("Query INSERT ... SELECT: rows %v, %v", rows, err)
	}
	rows.Close()
	// A key column that cannot hold the keys, in every path.
	_, err = db.Exec(ctx, "INSERT INTO narrow (v) VALUES (1)")
	if !errors.Is(err, idsql.ErrNarrowKey) || !strings.Contains(err.Error(), "narrow") || !strings.Contains(err.Error(), "ALTER TABLE") {
		t.Fatalf("narrow key: %v, want ErrNarrowKey naming the table and the fix", err)
	}
	_, err = db.CopyFrom(ctx, pgx.Identifier{"narrow"}, []string{"v"}, pgx.CopyFromRows([][]any{{int32(1)}}))
	if !errors.Is(err, idsql.ErrNarrowKey) {
		t.Fatalf("narrow key COPY: %v, want ErrNarrowKey", err)
	}
	// A batch with one bad query sends nothing, and says which query.
	b := &pgx.Batch{}
	b.Queue("INSERT INTO orders (user_id) VALUES (1)")
	b.Queue("INSERT INTO orders (user_id) SELECT 2")
	err = db.SendBatch(ctx, b).Close()
	if err == nil || !strings.Contains(err.Error(), "batch query 1") || !strings.Contains(err.Error(), "orders") {
		t.Fatalf("bad batch: %v, want an error naming query 1 and orders", err)
	}
	if got := ids(t, pool, "SELECT id FROM orders"); len(got) != 0 {
		t.Fatalf("a refused batch wrote %v", got)
	}
	// The server's errors come through as pgx's.
	if _, err := db.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1)", nil); err == nil {
		t.Fatal("NULL user_id accepted")
	} else if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || pe.Code != "23502" {
		t.Fatalf("NOT NULL violation: %v, want a *pgconn.PgError 23502", err)
	}
	// Configuration mistakes.
	cfg := testConfig()
	cfg.Dialect = "mysql"
	if _, err := pgxid.New(pool, cfg, pgxid.Options{}); err == nil || !strings.Contains(err.Error(), "dialect: mysql") {
		t.Fatalf("mysql dialect: %v", err)
	}
	if _, err := pgxid.New(db, testConfig(), pgxid.Options{Keys: db.Keys()}); err == nil || !strings.Contains(err.Error(), "already fills keys") {
		t.Fatalf("wrapping twice: %v", err)
	}
	if _, err := pgxid.New(nil, testConfig(), pgxid.Options{}); err == nil {
		t.Fatal("nil querier accepted")
	}
	if _, err := db.Prepare(ctx, "x", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "pgxpool.Pool") {
		t.Fatalf("Prepare on a pool: %v, want an error naming the pool", err)
	}
}
