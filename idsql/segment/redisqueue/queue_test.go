package redisqueue

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/redistest"
)

func TestSettingsRejected(t *testing.T) {
	for _, c := range []struct {
		s     Settings
		field string
	}{
		{Settings{Step: -1}, "Step"},
		{Settings{Batch: -1}, "Batch"},
		{Settings{LowWater: 1.5}, "LowWater"},
		{Settings{LowWater: -0.1}, "LowWater"},
		{Settings{PushChunk: maxPushChunk + 1}, "PushChunk"},
		{Settings{LockTTL: -time.Second}, "LockTTL"},
		{Settings{WaitTimeout: -time.Second}, "WaitTimeout"},
	} {
		_, err := c.s.withDefaults()
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), "Settings."+c.field) {
			t.Errorf("%+v: got %v, want an error naming Settings.%s", c.s, err, c.field)
		}
	}
	s, err := Settings{}.withDefaults()
	if err != nil || s.Step != DefaultStep || s.Batch != DefaultBatch || s.LowWater != DefaultLowWater {
		t.Errorf("zero Settings: %+v, %v", s, err)
	}
}

// Several queues (as several processes would) share one Redis list and
// many goroutines take keys from each: no key is handed out twice and
// every key lies in a range of the ledger.
func TestConcurrentPostgres(t *testing.T) { testConcurrent(t, dbCases[0]) }
func TestConcurrentMySQL(t *testing.T)    { testConcurrent(t, dbCases[1]) }

func testConcurrent(t *testing.T, c dbCase) {
	t.Parallel()
	store := c.store(t)
	rdb := client(t)
	ns := namespace(t, rdb)
	const queues, goroutines, perG = 4, 6, 1500
	// A small step and batch: many refills and lock contention.
	s := Settings{Namespace: ns, Step: 200, Batch: 7, LowWater: 0.3}
	var qs []*Queue
	for range queues {
		qs = append(qs, newQueue(t, rdb, store, s))
	}
	var mu sync.Mutex
	var all []int64
	var wg sync.WaitGroup
	errs := make(chan error, queues*goroutines)
	for i := range queues * goroutines {
		q := qs[i%queues]
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			mine := make([]int64, 0, perG)
			for len(mine) < perG {
				if len(mine)%3 == 0 {
					ids, err := q.NextN(ctx, testKey, min(1+len(mine)%17, perG-len(mine)))
					if err != nil {
						errs <- err
						return
					}
					mine = append(mine, ids...)
					continue
				}
				id, err := q.Next(ctx, testKey)
				if err != nil {
					errs <- err
					return
				}
				mine = append(mine, id)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(all) != queues*goroutines*perG {
		t.Fatalf("got %d keys, want %d", len(all), queues*goroutines*perG)
	}
	checkKeys(t, store, all)
	var st Stats
	for _, q := range qs {
		x := q.Stats()
		st.Refills += x.Refills
		st.Fallback += x.Fallback
	}
	if st.Fallback != 0 {
		t.Errorf("%d keys came from the fallback with Redis up", st.Fallback)
	}
	t.Logf("%d refills of %d keys", st.Refills, s.Step)
}

// A refiller that took the lock and never pushes (cut off from Redis, or
// slow) does not stall the others: a caller that finds the list empty
// refills without the lock after lockPatience, long before the lock
// expires or WaitTimeout ends.
func TestLockHeldByAStalledRefiller(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	ns := namespace(t, rdb)
	ctx := context.Background()
	q := newQueue(t, rdb, store, Settings{Namespace: ns, Step: 50, Batch: 10})
	lock := q.lockKey(testKey, q.currentRunID())
	rdb.Set(ctx, lock, "stalled", time.Minute)
	defer rdb.Del(ctx, lock)
	if _, err := q.Next(ctx, testKey); err != nil {
		t.Fatalf("Next with the refill lock held by a stalled refiller: %v", err)
	}
	if v := rdb.Get(ctx, lock).Val(); v != "stalled" {
		t.Errorf("the lock holds %q after a refill without it, want the stalled refiller's %q", v, "stalled")
	}
}

// A refiller whose lock expired while it allocated pushes its range after
// another refiller took the lock and pushed its own: both ranges are
// distinct (allocated from the database), and the late one's release
// leaves the lock of whoever holds it now.
func TestLockExpiredTwoRefillers(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	ns := namespace(t, rdb)
	ctx := context.Background()
	s := Settings{Namespace: ns, Step: 50, Batch: 10, LockTTL: 100 * time.Millisecond}
	a := newQueue(t, rdb, store, s)
	b := newQueue(t, rdb, store, s)
	lock := a.lockKey(testKey, a.currentRunID())
	a.afterAllocate = func(string, segment.Range) {
		// A is slow: its lock expires.
		for rdb.Exists(ctx, lock).Val() == 1 {
			time.Sleep(10 * time.Millisecond)
		}
		// B refills meanwhile, under a lock of its own.
		done, err := b.refill(ctx, testKey, false)
		if err != nil || !done {
			t.Errorf("second refiller: done %v, %v", done, err)
		}
		// And someone else holds the lock when A releases it.
		rdb.Set(ctx, lock, "other", time.Minute)
	}
	done, err := a.refill(ctx, testKey, false)
	if err != nil || !done {
		t.Fatalf("first refiller: done %v, %v", done, err)
	}
	if v := rdb.Get(ctx, lock).Val(); v != "other" {
		t.Errorf("after the late release the lock holds %q, want the new owner's %q", v, "other")
	}
	rdb.Del(ctx, lock)
	list := a.listKey(testKey, a.currentRunID())
	if n := rdb.LLen(ctx, list).Val(); n != 2*s.Step {
		t.Errorf("list holds %d keys, want the two ranges' %d", n, 2*s.Step)
	}
	if r := a.Stats().Refills + b.Stats().Refills; r != 2 {
		t.Errorf("%d refills, want 2", r)
	}
	// (Draining the list refills it again in the background.)
	checkKeys(t, store, take(t, a, int(2*s.Step)))
}

// A chunk pushed twice (go-redis retrying after a lost reply) is applied
// once.
func TestPushIdempotent(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	q := newQueue(t, rdb, store, Settings{Namespace: namespace(t, rdb), Step: 30, PushChunk: 10})
	ctx := context.Background()
	r, err := store.Allocate(ctx, segment.Request{Key: testKey, Step: 30, Instance: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rid := q.currentRunID()
	for range 2 {
		if err := q.push(ctx, testKey, rid, r); err != nil {
			t.Fatal(err)
		}
	}
	if n := rdb.LLen(ctx, q.listKey(testKey, rid)).Val(); n != 30 {
		t.Errorf("list holds %d keys after pushing a range of 30 twice", n)
	}
}

// Redis restarts and reloads a snapshot whose list still holds keys that
// were popped after it was taken. The queue must not pop them again.
func TestRestartReloadsStaleList(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	srv := redistest.StartServer(t)
	rdb := clientOf(t, srv.Addr())
	ctx := context.Background()
	s := Settings{Namespace: "ns", Step: 100, Batch: 5, LowWater: 0.1}
	q := newQueue(t, rdb, store, s)

	got := take(t, q, 20) // the list now holds the rest of the first range
	oldRID := q.currentRunID()
	oldList := q.listKey(testKey, oldRID)
	if err := rdb.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	inSnapshot, err := rdb.LRange(ctx, oldList, 0, -1).Result()
	if err != nil || len(inSnapshot) == 0 {
		t.Fatalf("snapshot list: %d keys, %v", len(inSnapshot), err)
	}
	got = append(got, take(t, q, 40)...) // popped after the snapshot

	srv.Kill()
	srv.Start()
	// The scenario is real: the reloaded list holds keys handed out already.
	reloaded, err := rdb.LRange(ctx, oldList, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	handed := map[string]bool{}
	for _, id := range got {
		handed[itoa(id)] = true
	}
	stale := 0
	for _, v := range reloaded {
		if handed[v] {
			stale++
		}
	}
	if stale == 0 {
		t.Fatalf("the reloaded list (%d keys) holds no key handed out already: the test proves nothing", len(reloaded))
	}
	t.Logf("the reloaded list holds %d keys, %d of them handed out already", len(reloaded), stale)

	// A fresh queue (a process started after the restart) and the old one.
	q2 := newQueue(t, rdb, store, s)
	for range 3 {
		got = append(got, take(t, q, 50)...)
		got = append(got, take(t, q2, 50)...)
	}
	checkKeys(t, store, got)
	if q.currentRunID() == oldRID {
		t.Errorf("the queue still uses run_id %s", oldRID)
	}
	if n := rdb.Exists(ctx, oldList).Val(); n != 0 {
		t.Errorf("the list of the earlier run was not deleted")
	}
	if q.Stats().Restarts == 0 {
		t.Errorf("no restart counted")
	}
}

// With Redis down, keys come from ranges allocated directly from the
// database; once Redis is back they come from Redis again.
func TestRedisDownFallback(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	srv := redistest.StartServer(t)
	rdb := clientOf(t, srv.Addr())
	q := newQueue(t, rdb, store, Settings{Namespace: "ns", Step: 100, Batch: 10, RetryInterval: 50 * time.Millisecond,
		Fallback: segment.Settings{RefreshInterval: -1}})
	got := take(t, q, 150)
	srv.Kill()
	got = append(got, take(t, q, 300)...)
	fb := q.Stats().Fallback
	if fb == 0 {
		t.Fatalf("no key came from the fallback with Redis down: %+v", q.Stats())
	}
	srv.Start()
	// Back to Redis: within some calls a pop succeeds and the fallback
	// stops (each call past RetryInterval tries Redis once).
	back := false
	for i := 0; i < 10000 && !back; i++ {
		got = append(got, take(t, q, 1)...)
		if i%100 == 99 {
			time.Sleep(60 * time.Millisecond)
		}
		back = q.Stats().Restarts > 0 && !q.redisDown()
	}
	if !back {
		t.Fatalf("never returned to Redis: %+v", q.Stats())
	}
	fb2 := q.Stats().Fallback
	got = append(got, take(t, q, 200)...)
	if q.Stats().Fallback != fb2 {
		t.Errorf("keys still come from the fallback after Redis came back")
	}
	if q.Stats().Outages != 1 {
		t.Errorf("%d outages counted, want 1", q.Stats().Outages)
	}
	checkKeys(t, store, got)
}

// With the fallback off, Redis down is a clear error.
func TestRedisDownNoFallback(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	srv := redistest.StartServer(t)
	rdb := clientOf(t, srv.Addr())
	q := newQueue(t, rdb, store, Settings{Namespace: "ns", Step: 100, Batch: 10, NoFallback: true})
	got := take(t, q, 10)
	srv.Kill()
	var err error
	for range 100 { // the local buffer first
		var id int64
		if id, err = q.Next(context.Background(), testKey); err != nil {
			break
		}
		got = append(got, id)
	}
	var ke *segment.KeyError
	if !errors.Is(err, ErrRedisDown) || !errors.As(err, &ke) || ke.Key != testKey {
		t.Fatalf("got %v, want a KeyError of %q wrapping ErrRedisDown", err, testKey)
	}
	t.Logf("error: %v", err)
	checkKeys(t, store, got)

	// And New fails the same way.
	_, err = New(context.Background(), rdb, store, Settings{NoFallback: true})
	if !errors.Is(err, ErrRedisDown) {
		t.Errorf("New with Redis down: got %v, want ErrRedisDown", err)
	}
}

// With the database down, keys keep coming from Redis until the list is
// empty; then a clear error.
func TestDatabaseDown(t *testing.T) {
	t.Parallel()
	pg := pgtest.StartServer(t)
	db := openPG(t, pg.DSN())
	store := migrated(t, segment.NewPostgresStore(db))
	rdb := client(t)
	ns := namespace(t, rdb)
	s := Settings{Namespace: ns, Step: 100, Batch: 10, LowWater: 0.2, WaitTimeout: 300 * time.Millisecond, LoadTimeout: time.Second}
	q := newQueue(t, rdb, store, s)
	got := take(t, q, 1) // one refill: 100 keys, 90 of them in Redis
	q.bgWG.Wait()
	pg.Stop()
	var err error
	for range 1000 {
		var id int64
		if id, err = q.Next(context.Background(), testKey); err != nil {
			break
		}
		got = append(got, id)
	}
	if !errors.Is(err, ErrNoKeys) {
		t.Fatalf("got %v, want ErrNoKeys", err)
	}
	t.Logf("after %d keys: %v", len(got), err)
	if len(got) < int(s.Step) {
		t.Errorf("only %d keys with the database down, want the %d of the range in Redis", len(got), s.Step)
	}
	pg.Start()
	got = append(got, take(t, q, 150)...)
	checkKeys(t, store, got)
}

// A key with no row in idsql_alloc fails at once, naming the key; a closed
// queue fails with ErrClosed.
func TestUnknownKeyAndClose(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	q := newQueue(t, rdb, store, Settings{Namespace: namespace(t, rdb), Step: 20})
	ctx := context.Background()
	_, err := q.Next(ctx, "no_such_key")
	var ke *segment.KeyError
	if !errors.Is(err, segment.ErrUnknownKey) || !errors.As(err, &ke) || ke.Key != "no_such_key" {
		t.Errorf("unknown key: got %v, want a KeyError of \"no_such_key\" wrapping segment.ErrUnknownKey", err)
	}
	got := take(t, q, 5)
	checkKeys(t, store, got)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Next(ctx, testKey); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: got %v, want ErrClosed", err)
	}
	if _, err := q.NextN(ctx, testKey, 3); !errors.Is(err, ErrClosed) {
		t.Errorf("NextN after Close: got %v, want ErrClosed", err)
	}
}

// Keys waiting in Redis outlive the process that pushed them: a queue
// started after another closed (a restarted service process) takes them,
// with no new range; only the closed queue's local buffer is lost.
func TestKeysSurviveProcessRestart(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	s := Settings{Namespace: namespace(t, rdb), Step: 100, Batch: 10, LowWater: 0.1}
	a := newQueue(t, rdb, store, s)
	got := take(t, a, 3) // one range: 10 popped, 90 waiting
	a.Close()
	b := newQueue(t, rdb, store, s)
	// 60 keys: with the batch b's background pop may take ahead, at most
	// 80 of the 90 are popped, and the 10 left are not below the low water
	// mark, so no refill is due (taking 80 made one due when that pop won
	// the race).
	got = append(got, take(t, b, 60)...)
	if r := b.Stats().Refills; r != 0 {
		t.Errorf("the second queue allocated %d ranges; the 90 waiting keys should have served it", r)
	}
	// The first queue's buffer (keys 4..10) is lost; the rest follow it.
	if got[3] != got[0]+10 {
		t.Errorf("second queue's first key %d, want %d (the first key after the closed queue's batch)", got[3], got[0]+10)
	}
	checkKeys(t, store, got)
}

// The background pop keeps at most one batch ahead of the local buffer:
// a process holds (and would lose in a crash) about Batch to 2*Batch keys.
func TestPrefetchBounded(t *testing.T) {
	t.Parallel()
	store := pgStore(t)
	rdb := client(t)
	s := Settings{Namespace: namespace(t, rdb), Step: 1000, Batch: 10}
	q := newQueue(t, rdb, store, s)
	for i := range 500 {
		take(t, q, 1)
		q.bgWG.Wait() // let every background pop land
		k, _ := q.key(testKey)
		k.lock <- struct{}{}
		k.pmu.Lock()
		held := len(k.buf) + len(k.pending)
		k.pmu.Unlock()
		<-k.lock
		if held > 2*s.Batch {
			t.Fatalf("after %d keys the process holds %d keys, more than 2 batches", i+1, held)
		}
	}
}
