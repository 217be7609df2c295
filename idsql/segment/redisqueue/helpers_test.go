package redisqueue

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/lib/pq"
	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/redistest"
)

// testKey is the segment key every test allocates from.
const testKey = "orders"

// dbCase is a database the queue's stores run on.
type dbCase struct {
	name  string
	store func(t testing.TB) *segment.SQLStore
}

var dbCases = []dbCase{
	{"postgres", func(t testing.TB) *segment.SQLStore {
		db, _ := pgtest.Open(t)
		return migrated(t, segment.NewPostgresStore(db))
	}},
	{"mysql", func(t testing.TB) *segment.SQLStore {
		db, _ := mysqltest.Open(t)
		return migrated(t, mysqlstore.New(db))
	}},
}

// migrated runs Migrate on s and creates testKey.
func migrated(t testing.TB, s *segment.SQLStore) *segment.SQLStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateKey(ctx, segment.KeySpec{Key: testKey, Step: 10}); err != nil {
		t.Fatal(err)
	}
	return s
}

// pgStore returns a migrated PostgreSQL store with testKey.
func pgStore(t testing.TB) *segment.SQLStore { return dbCases[0].store(t) }

// client returns a client of the shared test Redis.
func client(t testing.TB) *redis.Client {
	t.Helper()
	return clientOf(t, redistest.Addr(t))
}

// clientOf returns a client of the Redis at addr, closed when the test ends.
// Short timeouts: tests that kill Redis should not wait long for it.
func clientOf(t testing.TB, addr string) *redis.Client {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second,
		ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, MaxRetries: 1})
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

// namespace returns a namespace of this test's own on the shared Redis,
// whose keys are deleted when the test ends.
func namespace(t testing.TB, rdb *redis.Client) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	ns := "idsqltest:" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, ns+":*", 1000).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return ns
}

// newQueue returns a queue closed when the test ends, logging to the test.
func newQueue(t testing.TB, rdb *redis.Client, store segment.Store, s Settings) *Queue {
	t.Helper()
	if s.Logger == nil {
		s.Logger = testLogger(t)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	q, err := New(ctx, rdb, store, s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

// testLogger logs through t.Log, and not after the test ended.
func testLogger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() {
		w.mu.Lock()
		w.done = true
		w.mu.Unlock()
	})
	return slog.New(slog.NewTextHandler(w, nil))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}

// checkKeys fails the test unless ids are all distinct and each lies in a
// range of testKey recorded in the ledger (idsql_alloc_log).
func checkKeys(t testing.TB, store *segment.SQLStore, ids []int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ranges, err := store.Ranges(ctx, testKey)
	if err != nil {
		t.Fatal(err)
	}
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	dups := 0
	for i := 1; i < len(sorted); i++ {
		if sorted[i] == sorted[i-1] {
			if dups < 10 {
				t.Errorf("key %d handed out more than once", sorted[i])
			}
			dups++
		}
	}
	outside := 0
	for _, id := range sorted {
		in := false
		for _, r := range ranges {
			if r.Contains(id) {
				in = true
				break
			}
		}
		if !in {
			if outside < 10 {
				t.Errorf("key %d is in no range of the ledger", id)
			}
			outside++
		}
	}
	if dups > 0 || outside > 0 {
		t.Fatalf("%d keys: %d duplicates, %d outside the %d ledger ranges", len(ids), dups, outside, len(ranges))
	}
	t.Logf("%d keys, all distinct, all inside the %d ledger ranges", len(ids), len(ranges))
}

// take calls Next n times and fails the test at the first error.
func take(t testing.TB, q *Queue, n int) []int64 {
	t.Helper()
	ids := make([]int64, 0, n)
	for range n {
		id, err := q.Next(context.Background(), testKey)
		if err != nil {
			t.Fatalf("after %d keys: %v", len(ids), err)
		}
		ids = append(ids, id)
	}
	return ids
}

// openPG opens dsn, closed when the test ends.
func openPG(t testing.TB, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
