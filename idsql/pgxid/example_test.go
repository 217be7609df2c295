package pgxid_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
)

// A pgxpool application (or sqlc's pgx/v5 Queries, which take the DB as
// their DBTX) gets its keys by wrapping the pool. It needs a PostgreSQL
// server, so it has no Output to check; the package's tests run the same
// calls.
func Example() {
	ctx := context.Background()
	cfg, err := keyset.Load("idsql.yaml") // orders: {strategy: snowflake}, users: {strategy: segment}
	if err != nil {
		log.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()
	db, err := pgxid.New(pool, cfg, pgxid.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close() // releases the worker leases; the pool stays open

	// The key comes back through RETURNING: pgx has no LastInsertId.
	var id int64
	err = db.QueryRow(ctx, "INSERT INTO orders (user_id, total) VALUES (@user, @total) RETURNING id",
		pgx.NamedArgs{"user": 7, "total": 12.5}).Scan(&id)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("order", id)

	// COPY into a configured table: each row gets a key.
	rows := [][]any{{"ann"}, {"bob"}}
	if _, err := db.CopyFrom(ctx, pgx.Identifier{"users"}, []string{"name"}, pgx.CopyFromRows(rows)); err != nil {
		log.Fatal(err)
	}

	// A transaction: pgx.BeginFunc takes the DB, and the Tx it gets fills
	// keys too (sqlc: q.WithTx(tx)).
	err = pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, "INSERT INTO orders (user_id, total) VALUES ($1, $2)", 8, 3.0)
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
}
