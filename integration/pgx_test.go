package integration

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/pgtest"
)

// The code from here to the tests has the shape sqlc (v1.2x) generates
// for sql_package: pgx/v5 from queries such as
//
//	-- name: CreateOrder :one
//	INSERT INTO orders (user_id, note) VALUES ($1, $2) RETURNING id, user_id, note;
//	-- name: CreateOrders :copyfrom
//	INSERT INTO orders (user_id, note) VALUES ($1, $2);
//	-- name: AddUser :exec
//	INSERT INTO users (name) VALUES (@name);
//	-- name: AddUsers :batchexec
//	INSERT INTO users (name) VALUES ($1);
//	-- name: ListOrders :many
//	SELECT id, user_id, note FROM orders ORDER BY id;
//
// (sqlc turns @name into $1 itself): the query text with its "-- name:"
// comment, a DBTX interface, Queries with WithTx(pgx.Tx), and pgtype
// fields for nullable columns. sqlc is not run here: it is a separate
// tool, and what matters is the calls its code makes.

type sqlcDBTX interface {
	Exec(context.Context, string, ...interface{}) (pgconn.CommandTag, error)
	Query(context.Context, string, ...interface{}) (pgx.Rows, error)
	QueryRow(context.Context, string, ...interface{}) pgx.Row
	CopyFrom(ctx context.Context, tableName pgx.Identifier, columnNames []string, rowSrc pgx.CopyFromSource) (int64, error)
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

func sqlcNew(db sqlcDBTX) *sqlcQueries { return &sqlcQueries{db: db} }

type sqlcQueries struct{ db sqlcDBTX }

func (q *sqlcQueries) WithTx(tx pgx.Tx) *sqlcQueries { return &sqlcQueries{db: tx} }

type sqlcOrder struct {
	ID     int64
	UserID int32
	Note   pgtype.Text
}

const createOrder = `-- name: CreateOrder :one
INSERT INTO orders (user_id, note) VALUES ($1, $2) RETURNING id, user_id, note
`

type CreateOrderParams struct {
	UserID int32
	Note   pgtype.Text
}

func (q *sqlcQueries) CreateOrder(ctx context.Context, arg CreateOrderParams) (sqlcOrder, error) {
	row := q.db.QueryRow(ctx, createOrder, arg.UserID, arg.Note)
	var i sqlcOrder
	err := row.Scan(&i.ID, &i.UserID, &i.Note)
	return i, err
}

type CreateOrdersParams struct {
	UserID int32
	Note   pgtype.Text
}

// iteratorForCreateOrders implements pgx.CopyFromSource.
type iteratorForCreateOrders struct {
	rows                 []CreateOrdersParams
	skippedFirstNextCall bool
}

func (r *iteratorForCreateOrders) Next() bool {
	if len(r.rows) == 0 {
		return false
	}
	if !r.skippedFirstNextCall {
		r.skippedFirstNextCall = true
		return true
	}
	r.rows = r.rows[1:]
	return len(r.rows) > 0
}

func (r iteratorForCreateOrders) Values() ([]interface{}, error) {
	return []interface{}{r.rows[0].UserID, r.rows[0].Note}, nil
}

func (r iteratorForCreateOrders) Err() error { return nil }

func (q *sqlcQueries) CreateOrders(ctx context.Context, arg []CreateOrdersParams) (int64, error) {
	return q.db.CopyFrom(ctx, []string{"orders"}, []string{"user_id", "note"}, &iteratorForCreateOrders{rows: arg})
}

const addUser = `-- name: AddUser :exec
INSERT INTO users (name) VALUES ($1)
`

func (q *sqlcQueries) AddUser(ctx context.Context, name string) error {
	_, err := q.db.Exec(ctx, addUser, name)
	return err
}

const addUsers = `-- name: AddUsers :batchexec
INSERT INTO users (name) VALUES ($1)
`

type AddUsersBatchResults struct {
	br     pgx.BatchResults
	tot    int
	closed bool
}

func (q *sqlcQueries) AddUsers(ctx context.Context, name []string) *AddUsersBatchResults {
	batch := &pgx.Batch{}
	for _, a := range name {
		batch.Queue(addUsers, a)
	}
	br := q.db.SendBatch(ctx, batch)
	return &AddUsersBatchResults{br, len(name), false}
}

func (b *AddUsersBatchResults) Exec(f func(int, error)) {
	defer b.br.Close()
	for t := 0; t < b.tot; t++ {
		if b.closed {
			if f != nil {
				f(t, errors.New("batch already closed"))
			}
			continue
		}
		_, err := b.br.Exec()
		if f != nil {
			f(t, err)
		}
	}
}

func (b *AddUsersBatchResults) Close() error {
	b.closed = true
	return b.br.Close()
}

const listOrders = `-- name: ListOrders :many
SELECT id, user_id, note FROM orders ORDER BY id
`

func (q *sqlcQueries) ListOrders(ctx context.Context) ([]sqlcOrder, error) {
	rows, err := q.db.Query(ctx, listOrders)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var items []sqlcOrder
	for rows.Next() {
		var i sqlcOrder
		if err := rows.Scan(&i.ID, &i.UserID, &i.Note); err != nil {
			return nil, err
		}
		items = append(items, i)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return items, nil
}

// End of the sqlc-shaped code.

const pgxSchema = `
CREATE TABLE orders (id bigint PRIMARY KEY, user_id int NOT NULL, note text);
CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
`

func pgxConfig() *keyset.Config {
	return &keyset.Config{
		Namespace: "shop",
		Tables: map[string]keyset.TableConfig{
			"orders": {Strategy: keyset.Snowflake},
			"users":  {Strategy: keyset.Segment, Step: 50},
		},
	}
}

// pgxPool returns a pgx pool on a fresh schema with the tables and
// idsql's own, and the pool wrapped by pgxid with keys of its own.
func pgxPool(t *testing.T) (*pgxpool.Pool, *pgxid.DB) {
	t.Helper()
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, pgxSchema); err != nil {
		t.Fatal(err)
	}
	cfg := pgxConfig()
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	db, err := pgxid.New(pool, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: holder.Static(map[string]int64{"orders": 21})}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return pool, db
}

func TestPgxSqlcQueries(t *testing.T) {
	pool, db := pgxPool(t)
	ctx := context.Background()
	q := sqlcNew(db)
	o, err := q.CreateOrder(ctx, CreateOrderParams{UserID: 1, Note: pgtype.Text{String: "one", Valid: true}})
	if err != nil || o.ID <= 0 || o.UserID != 1 || o.Note.String != "one" {
		t.Fatalf("CreateOrder: %+v, %v", o, err)
	}
	n, err := q.CreateOrders(ctx, []CreateOrdersParams{{UserID: 2}, {UserID: 3, Note: pgtype.Text{String: "three", Valid: true}}})
	if err != nil || n != 2 {
		t.Fatalf("CreateOrders (COPY): %d, %v", n, err)
	}
	if err := q.AddUser(ctx, "ann"); err != nil {
		t.Fatal(err)
	}
	var batchErr error
	q.AddUsers(ctx, []string{"bob", "cy"}).Exec(func(_ int, err error) { batchErr = errors.Join(batchErr, err) })
	if batchErr != nil {
		t.Fatal(batchErr)
	}
	// In a transaction, through WithTx and the Tx pgxid began.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := q.WithTx(tx).CreateOrder(ctx, CreateOrderParams{UserID: 4}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	orders, err := q.ListOrders(ctx)
	if err != nil || len(orders) != 4 {
		t.Fatalf("ListOrders: %d orders, %v", len(orders), err)
	}
	seen := map[int64]bool{}
	for _, o := range orders {
		if o.ID <= 0 || seen[o.ID] {
			t.Fatalf("orders %+v: key %d not positive or repeated", orders, o.ID)
		}
		seen[o.ID] = true
	}
	var users []int64
	rows, _ := pool.Query(ctx, "SELECT id FROM users ORDER BY id")
	if users, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil || fmt.Sprint(users) != "[1 2 3]" {
		t.Fatalf("segment keys %v, %v; want [1 2 3]", users, err)
	}
}

func TestPgxPoolConcurrent(t *testing.T) {
	pool, db := pgxPool(t)
	ctx := context.Background()
	const workers, each = 8, 100
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				table := "orders (user_id) VALUES ($1)"
				if i%2 == 1 {
					table = "users (name) VALUES ($1::int::text)"
				}
				if _, err := db.Exec(ctx, "INSERT INTO "+table, w*each+i); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, table := range []string{"orders", "users"} {
		var rows, distinct int
		if err := pool.QueryRow(ctx, "SELECT count(*), count(DISTINCT id) FROM "+table).Scan(&rows, &distinct); err != nil {
			t.Fatal(err)
		}
		if rows != workers*each/2 || distinct != rows {
			t.Fatalf("%s: %d rows, %d distinct keys; want %d of each", table, rows, distinct, workers*each/2)
		}
	}
}
