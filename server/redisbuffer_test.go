package server_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/internal/redistest"
)

// A `buffer: redis` table's segment endpoint serves keys from its Redis
// queue.
func TestSegmentBufferRedis(t *testing.T) {
	addr := redistest.Addr(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := "srv" + hex.EncodeToString(b[:])
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	ctx := context.Background()
	t.Cleanup(func() { // after the server's Close, registered later
		defer rdb.Close()
		iter := rdb.Scan(ctx, 0, "idsql:"+ns+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	srv := newKeySpaceServer(t, `namespace: `+ns+`
redis: {addr: "`+addr+`", batch: 5}
tables:
  leaf_snowflake: {strategy: snowflake}
  users: {strategy: segment, step: 30, buffer: redis}
`)
	seen := map[int64]bool{}
	for range 10 {
		for _, id := range parseIDs(t, mustGet(t, srv, "/api/segment/get/users/7")) {
			if seen[id] {
				t.Fatalf("key %d served twice", id)
			}
			seen[id] = true
		}
		id := parseIDs(t, mustGet(t, srv, "/api/segment/get/users"))[0]
		if seen[id] {
			t.Fatalf("key %d served twice", id)
		}
		seen[id] = true
	}
	lists, err := rdb.Keys(ctx, "idsql:"+ns+":q:users:*").Result()
	if err != nil || len(lists) != 1 {
		t.Fatalf("Redis lists of users: %v, %v; want one (keys not served from Redis?)", lists, err)
	}
}
