// Package redisqueue hands out the keys of segment keys (idsql_alloc
// biz_tags) from lists of pre-allocated keys in Redis, shared by every
// process of a namespace: the Redis-queue ID service modelled on Leaf, done
// so that no key is ever handed out twice.
//
// # How it works
//
// Each segment key has one Redis list of keys waiting to be handed out,
// named
//
//	<namespace>:q:<key>:<run_id>
//
// where run_id is the Redis server's run_id (INFO server). A process pops
// keys in batches (LPOP key count, Settings.Batch keys per round trip) into
// a small local buffer and hands them out from there; when Next finds the
// buffer less than half full it pops the next batch in the background, so
// callers seldom wait for a round trip. A pop that leaves the
// list below Settings.LowWater (20 %) of Settings.Step starts a refill: the
// refiller takes a short lock (SET NX PX with a random token, released by a
// compare-and-delete script), allocates one range of Step keys from the
// database through the segment store (segment.Store.Allocate, which
// commits the range to idsql_alloc_log before it returns), and only then
// pushes the range's keys with RPUSH, in chunks. The lock only keeps
// processes from allocating at the same moment; uniqueness does not depend
// on it: two refillers after a lock expired each push a distinct range of
// their own. A caller that has found the list empty for 50 ms refills
// without the lock, so a refiller that is slow or cut off from Redis after
// taking it stalls nobody else.
//
// # What is lost and what is kept
//
// Keys waiting in Redis survive the restart of any service process. Keys a
// process popped but did not hand out when it dies or closes are lost:
// skipped, never reissued. So are the keys of a range whose refiller died
// between its allocation and its last push.
//
// # Redis restarts
//
// A Redis that restarts may reload a snapshot (RDB or AOF) older than its
// last writes, whose list still holds keys popped after the snapshot was
// taken: popping them again would hand them out twice. Every pop and every
// push is therefore a Lua script that first compares the server's run_id,
// which changes at every restart (and differs on a promoted replica), with
// the run_id in the list's name, and refuses on a mismatch. After a restart
// the lists of earlier runs are never read again: their keys are lost, and
// the first refill of the new run deletes them. A chunk marker (a short-lived
// key per pushed chunk) keeps a push that go-redis retries after a lost
// reply from being applied twice.
//
// # Redis down, database down
//
// When Redis cannot be reached, the queue logs it once (slog) and hands out
// keys from an ordinary segment.Generator over the same store: ranges
// allocated directly from the database, distinct from every range pushed to
// Redis. Every Settings.RetryInterval one caller tries Redis again; when it
// answers the queue returns to it. With Settings.NoFallback, calls fail with
// an error wrapping ErrRedisDown instead.
//
// When the database is down, keys keep coming from Redis while the list
// holds any; once it is empty and no refill succeeds within
// Settings.WaitTimeout, calls fail with an error wrapping ErrNoKeys and the
// database's error.
//
// The queue takes a *redis.Client: one server, or a Sentinel-managed
// group through redis.NewFailoverClient (a promoted replica has a run_id of
// its own, so a replica that lagged behind its master is never trusted
// with the master's lists). Redis Cluster is not supported: a push touches
// two keys that may lie in different slots.
//
// Run Redis with maxmemory-policy noeviction (its default): an evicted list
// only loses keys, but an evicted chunk marker would let a retried push
// apply twice.
//
// # Usage
//
//	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
//	q, err := redisqueue.New(ctx, rdb, segment.NewPostgresStore(db), redisqueue.Settings{Step: 10000})
//	...
//	defer q.Close()
//	id, err := q.Next(ctx, "orders")
package redisqueue
