package idsql_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/redistest"
)

func TestBufferConfigRejected(t *testing.T) {
	for _, c := range []struct {
		yaml, field string
	}{
		{"namespace: a\nredis: {addr: 'x:1'}\ntables: {t: {strategy: snowflake, buffer: redis}}", "tables.t.buffer"},
		{"namespace: a\nredis: {addr: 'x:1'}\ntables: {t: {strategy: segment, buffer: disk}}", "tables.t.buffer"},
		{"namespace: a\ntables: {t: {strategy: segment, buffer: redis}}", "redis.addr"},
	} {
		_, err := keyset.Parse("idsql.yaml", []byte(c.yaml), time.Now())
		var fe *keyset.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s:\ngot %v, want an error on %s", c.yaml, err, c.field)
		}
	}
	for _, yaml := range []string{
		"namespace: a\nredis: {addr: 'x:1'}\ntables: {t: {strategy: segment, buffer: redis}, u: {strategy: segment, buffer: memory}}",
		"namespace: a\nredis: {addr: 'x:1'}\ntables: {t: {strategy: segment, buffer: redis, shard: {column: u, bits: 4}, app: {id: 1, bits: 2}}}",
	} {
		if _, err := keyset.Parse("idsql.yaml", []byte(yaml), time.Now()); err != nil {
			t.Errorf("valid configuration refused: %v\n%s", err, yaml)
		}
	}
}

// redisNamespace returns a namespace of this test's own (its Redis keys
// are removed when the test ends) and the shared test Redis's address.
func redisNamespace(t *testing.T) (string, string) {
	t.Helper()
	addr := redistest.Addr(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	ns := "rq" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		rdb := redis.NewClient(&redis.Options{Addr: addr})
		defer rdb.Close()
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "idsql:"+ns+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return ns, addr
}

// Through the wrapper, a `buffer: redis` table's keys come from the Redis
// list: many goroutines insert, no key repeats.
func TestBufferRedisPostgres(t *testing.T) {
	ns, addr := redisNamespace(t)
	cfg := &keyset.Config{Namespace: ns, Redis: keyset.RedisConfig{Addr: addr, Batch: 7},
		Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment, Step: 50, Buffer: keyset.BufferRedis}}}
	db, raw, _ := openSegmentsPG(t, []string{`CREATE TABLE users (id bigint NOT NULL, v text)`}, cfg, keyset.KeysOptions{})
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 40 {
				if _, err := db.ExecContext(ctx, "INSERT INTO users (v) VALUES ($1), ($2)", fmt.Sprint(g), fmt.Sprint(i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var n, distinct int
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id) FROM users").Scan(&n, &distinct); err != nil {
		t.Fatal(err)
	}
	if n != 480 || distinct != n {
		t.Fatalf("%d rows, %d distinct keys; want 480, 480", n, distinct)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	lists, err := rdb.Keys(ctx, "idsql:"+ns+":q:users:*").Result()
	if err != nil || len(lists) != 1 {
		t.Fatalf("Redis lists of users: %v, %v; want one", lists, err)
	}
}

// max_id holds for a `buffer: redis` table as for any segment table.
func TestBufferRedisMaxID(t *testing.T) {
	ns, addr := redisNamespace(t)
	cfg := cappedConfig()
	cfg.Namespace = ns
	cfg.Redis.Addr = addr
	tc := cfg.Tables["capped"]
	tc.Buffer = keyset.BufferRedis
	cfg.Tables["capped"] = tc
	logs := &logBuffer{}
	db, raw, _ := openSegmentsPG(t, []string{cappedSchema}, cfg, keyset.KeysOptions{Logger: logs.logger()})
	runOutCapped(t, db, raw, logs, func(n int) string { return fmt.Sprint("$", n) })
}

// Sharded and app-bit tables with `buffer: redis` take each shard's numbers
// from the Redis queue, one list per shard key, and fill rows as the
// in-memory buffer does (insertGene's checks: each key carries its row's
// shard and the app bits, none repeats, lookup finds its range).
func TestGeneKeysRedisPostgres(t *testing.T) {
	ns, addr := redisNamespace(t)
	cfg := geneConfig()
	cfg.Namespace = ns
	cfg.Redis = keyset.RedisConfig{Addr: addr, Batch: 3}
	for name, tc := range cfg.Tables {
		tc.Buffer = keyset.BufferRedis
		cfg.Tables[name] = tc
	}
	db, raw, stores := openSegmentsPG(t, geneSchema, cfg, keyset.KeysOptions{})
	insertGene(t, db, raw, stores, func(n int) string { return fmt.Sprint("$", n) }, false)

	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	lists, err := rdb.Keys(context.Background(), "idsql:"+ns+":q:orders#*").Result()
	if err != nil || len(lists) < 4 {
		t.Fatalf("Redis lists of orders' shards: %v, %v; want one per shard drawn from", lists, err)
	}
}
