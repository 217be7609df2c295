package redisqueue_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"

	_ "github.com/lib/pq"
	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/redisqueue"
)

// Keys of the segment key "orders" from a Redis list shared by every
// process, refilled 10,000 keys at a time from PostgreSQL. It needs a
// Redis and a PostgreSQL, so it is not run as a test.
func Example() {
	ctx := context.Background()
	db, err := sql.Open("postgres", "postgres://localhost/shop?sslmode=disable")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	store := segment.NewPostgresStore(db)
	if err := store.Migrate(ctx); err != nil { // idsql_alloc and idsql_alloc_log
		log.Fatal(err)
	}
	// Once, when the key is new (ErrKeyExists afterwards).
	_ = store.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 1000})

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	defer rdb.Close()
	q, err := redisqueue.New(ctx, rdb, store, redisqueue.Settings{Namespace: "shop", Step: 10_000})
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()

	id, err := q.Next(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	batch, err := q.NextN(ctx, "orders", 50) // up to one round trip to Redis
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(id, len(batch))
}
