package redisqueue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/segment"
)

// Errors. Compare with errors.Is: the errors of this package wrap them in a
// *segment.KeyError naming the key.
var (
	// ErrRedisDown reports that Redis could not be reached and the
	// fallback is off (Settings.NoFallback).
	ErrRedisDown = errors.New("redisqueue: Redis unreachable")

	// ErrNoKeys reports that the list stayed empty for
	// Settings.WaitTimeout: no refill succeeded (the last refill error, a
	// database error most often, is wrapped too).
	ErrNoKeys = errors.New("redisqueue: no keys in Redis and no refill succeeded")

	// ErrClosed reports use of a Queue after Close.
	ErrClosed = errors.New("redisqueue: queue closed")
)

// pushMarkerTTL is how long a pushed chunk's marker lives: longer than any
// retry of its push.
const pushMarkerTTL = 10 * time.Minute

// errStale is the reply of a script that found another run_id.
const errStale = "IDSQLSTALE"

// Queue hands out keys of segment keys (idsql_alloc.biz_tag) from lists in
// Redis shared by every process of the namespace. It is safe for
// concurrent use; see the package documentation for its guarantees.
type Queue struct {
	rdb   *redis.Client
	store segment.Store
	s     Settings

	runID atomic.Pointer[string] // the server's run_id as last seen

	keys sync.Map // name -> *keyState

	mu      sync.Mutex
	fb      *segment.Generator // fallback generator, made at first need
	closed  bool
	shut    atomic.Bool // closed, readable without mu
	bgWG    sync.WaitGroup
	ctx     context.Context // cancelled by Close
	cancel  context.CancelFunc
	swept   map[string]string // key -> run_id its stale lists were swept for
	downAt  time.Time         // when Redis was found down; zero while up
	retryAt time.Time         // when the next caller tries Redis again

	stats stats

	// afterAllocate, when set (by tests), runs between a refill's
	// allocation and its push.
	afterAllocate func(name string, r segment.Range)
}

// keyState is the per-key state of one process: its local buffer of keys
// popped from Redis and whether a background refill runs.
type keyState struct {
	name string
	lock chan struct{} // held while taking keys; a channel so waits honour ctx
	buf  []int64       // popped, not yet handed out
	// refilling is set while a background refill of this key runs.
	refilling atomic.Bool
	// prefetching is set while a background pop of this key runs; it
	// leaves its keys in pending (guarded by pmu, not lock, so that it
	// never waits for a caller who holds lock), where fill takes them.
	prefetching atomic.Bool
	pmu         sync.Mutex
	pending     []int64
	lastErr     atomic.Pointer[error] // last refill error, nil after a success
}

// New returns a Queue over the Redis client rdb and the range allocator
// store, whose ranges it pushes to Redis (each range recorded in
// idsql_alloc_log before any of its keys is pushed). It asks Redis for its
// run_id; when Redis cannot be reached New still succeeds with the fallback
// on (keys then come from the store directly until Redis answers), and fails
// with an error wrapping ErrRedisDown with it off.
func New(ctx context.Context, rdb *redis.Client, store segment.Store, s Settings) (*Queue, error) {
	if rdb == nil {
		return nil, errors.New("redisqueue: New: nil Redis client")
	}
	if store == nil {
		return nil, errors.New("redisqueue: New: nil Store")
	}
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	q := &Queue{rdb: rdb, store: store, s: s, swept: map[string]string{}}
	q.ctx, q.cancel = context.WithCancel(context.Background())
	if _, err := q.fetchRunID(ctx); err != nil {
		if !isDown(err) || s.NoFallback {
			q.cancel()
			return nil, fmt.Errorf("%w: %w", ErrRedisDown, err)
		}
		q.markDown(err)
	}
	return q, nil
}

// Settings returns the settings in effect, defaults filled in.
func (q *Queue) Settings() Settings { return q.s }

// Next returns the next key of the segment key name. While the local
// buffer holds keys this takes no round trip.
func (q *Queue) Next(ctx context.Context, name string) (int64, error) {
	k, err := q.key(name)
	if err != nil {
		return 0, err
	}
	select {
	case k.lock <- struct{}{}:
	case <-ctx.Done():
		return 0, keyErr(name, "next id", ctx.Err())
	}
	if len(k.buf) > 0 && !q.isClosed() {
		id := k.buf[0]
		k.buf = k.buf[1:]
		low := len(k.buf) < q.s.Batch/2
		<-k.lock
		if low {
			q.prefetch(k)
		}
		q.stats.handed.Add(1)
		return id, nil
	}
	<-k.lock
	ids, err := q.NextN(ctx, name, 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// NextN returns n keys of the segment key name: first from the local
// buffer, then popped from Redis in batches of at least Settings.Batch
// (one round trip each), refilling the list from the store when it runs
// low. While Redis is down they come from the fallback generator. The keys
// are unique but not ordered: several processes pop one list.
func (q *Queue) NextN(ctx context.Context, name string, n int) ([]int64, error) {
	if n < 0 {
		return nil, keyErr(name, "next ids", fmt.Errorf("negative count %d", n))
	}
	k, err := q.key(name)
	if err != nil {
		return nil, err
	}
	select {
	case k.lock <- struct{}{}:
	case <-ctx.Done():
		return nil, keyErr(name, "next ids", ctx.Err())
	}
	defer func() { <-k.lock }()
	if q.isClosed() {
		return nil, keyErr(name, "next ids", ErrClosed)
	}
	out := make([]int64, 0, n)
	take := func() {
		t := min(n-len(out), len(k.buf))
		out = append(out, k.buf[:t]...)
		k.buf = k.buf[t:]
	}
	take()
	for len(out) < n {
		if q.useFallback() {
			ids, err := q.fallback(ctx, name, n-len(out))
			if err != nil {
				return nil, err
			}
			q.stats.handed.Add(uint64(len(out)))
			return append(out, ids...), nil
		}
		err := q.fill(ctx, k, max(n-len(out), q.s.Batch))
		switch {
		case err == nil:
			take()
		case ctx.Err() != nil:
			return nil, keyErr(name, "next ids", ctx.Err())
		case isDown(err) && !q.s.NoFallback:
			q.markDown(err)
		case isDown(err):
			return nil, keyErr(name, "next ids", fmt.Errorf("%w: %w", ErrRedisDown, err))
		default:
			return nil, keyErr(name, "next ids", err)
		}
	}
	q.stats.handed.Add(uint64(n))
	return out, nil
}

// fill pops up to count keys into k's buffer, refilling the list (or
// waiting for another process's refill) while it is empty, for at most
// WaitTimeout. Called with k.lock held and k.buf empty.
func (q *Queue) fill(ctx context.Context, k *keyState, count int) error {
	var emptySince, deadline time.Time
	pause := time.Millisecond
	for {
		if err := q.usable(); err != nil {
			return err
		}
		k.pmu.Lock()
		ids := k.pending
		k.pending = nil
		k.pmu.Unlock()
		if len(ids) > 0 { // popped by the background pop
			k.buf = append(k.buf, ids...)
			return nil
		}
		ids, left, err := q.pop(ctx, k.name, count)
		if err != nil {
			return err
		}
		if len(ids) > 0 {
			k.buf = append(k.buf, ids...)
			if float64(left) < q.s.LowWater*float64(q.s.Step) {
				q.refillAsync(k)
			}
			return nil
		}
		// Empty: refill now, in this goroutine, unless another refiller
		// holds the lock; then wait for its push, for lockPatience, and
		// refill without the lock after that.
		if deadline.IsZero() {
			emptySince = time.Now()
			deadline = emptySince.Add(q.s.WaitTimeout)
		}
		done, err := q.refill(ctx, k.name, time.Since(emptySince) >= lockPatience)
		if err != nil {
			if isDown(err) || ctx.Err() != nil || errors.Is(err, segment.ErrUnknownKey) ||
				errors.Is(err, segment.ErrExhausted) || errors.Is(err, segment.ErrInvalidRange) {
				return err // no use waiting
			}
			k.lastErr.Store(&err)
		} else {
			k.lastErr.Store(nil)
		}
		if time.Now().After(deadline) {
			if p := k.lastErr.Load(); p != nil {
				return fmt.Errorf("%w within %v: %w", ErrNoKeys, q.s.WaitTimeout, *p)
			}
			return fmt.Errorf("%w within %v (the list stayed empty; another process held the refill lock)", ErrNoKeys, q.s.WaitTimeout)
		}
		if done {
			continue
		}
		if err := sleep(ctx, pause); err != nil {
			return err
		}
		pause = min(2*pause, 50*time.Millisecond)
	}
}

// lockPatience is how long a caller that finds the list empty waits for
// the refiller holding the lock before it refills without the lock. The
// lock only spares allocations (uniqueness never depends on it), and a
// refiller cut off from Redis after taking it would otherwise keep every
// other process waiting until LockTTL.
const lockPatience = 50 * time.Millisecond

// usable reports ErrClosed after Close.
func (q *Queue) usable() error {
	if q.isClosed() {
		return ErrClosed
	}
	return nil
}

func (q *Queue) isClosed() bool { return q.shut.Load() }

// pop runs the pop script on the current list; a stale run_id is re-read
// and the pop retried once on the new list.
func (q *Queue) pop(ctx context.Context, name string, count int) ([]int64, int64, error) {
	for attempt := 0; ; attempt++ {
		rid := q.currentRunID()
		if rid == "" {
			var err error
			if rid, err = q.fetchRunID(ctx); err != nil {
				return nil, 0, err
			}
		}
		q.stats.calls.Add(1)
		q.stats.pops.Add(1)
		res, err := popScript.Run(ctx, q.rdb, []string{q.listKey(name, rid)}, rid, count).Slice()
		if newID, stale := staleRunID(err); stale && attempt == 0 {
			q.restarted(rid, newID)
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		q.up()
		return parsePop(res)
	}
}

func parsePop(res []any) ([]int64, int64, error) {
	if len(res) != 2 {
		return nil, 0, fmt.Errorf("redisqueue: pop script answered %d values, want 2", len(res))
	}
	left, ok := res[0].(int64)
	if !ok {
		return nil, 0, fmt.Errorf("redisqueue: pop script answered length %T", res[0])
	}
	s, ok := res[1].(string)
	if !ok {
		return nil, 0, fmt.Errorf("redisqueue: pop script answered keys %T", res[1])
	}
	ids := make([]int64, 0, strings.Count(s, " ")+1)
	for s != "" {
		v, rest, _ := strings.Cut(s, " ")
		s = rest
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id < 1 {
			return nil, 0, fmt.Errorf("redisqueue: list holds %q, not a key", v)
		}
		ids = append(ids, id)
	}
	return ids, left, nil
}

// prefetch pops the next batch of k in the background when its buffer
// runs low, so that callers do not wait for the round trip. Errors are left
// to the callers' own pops to meet; nothing is prefetched while Redis is
// down.
func (q *Queue) prefetch(k *keyState) {
	if q.redisDown() || !k.prefetching.CompareAndSwap(false, true) {
		return
	}
	k.pmu.Lock()
	full := len(k.pending) > 0 // one batch ahead at most
	k.pmu.Unlock()
	if full {
		k.prefetching.Store(false)
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		k.prefetching.Store(false)
		return
	}
	q.bgWG.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.bgWG.Done()
		defer k.prefetching.Store(false)
		ctx, cancel := context.WithTimeout(q.ctx, q.s.LoadTimeout)
		defer cancel()
		ids, left, err := q.pop(ctx, k.name, q.s.Batch)
		if err != nil || len(ids) == 0 {
			return
		}
		k.pmu.Lock()
		k.pending = append(k.pending, ids...)
		k.pmu.Unlock()
		if float64(left) < q.s.LowWater*float64(q.s.Step) {
			q.refillAsync(k)
		}
	}()
}

// refillAsync refills k's list in the background unless a refill of k by
// this process runs already.
func (q *Queue) refillAsync(k *keyState) {
	if !k.refilling.CompareAndSwap(false, true) {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		k.refilling.Store(false)
		return
	}
	q.bgWG.Add(1)
	q.mu.Unlock()
	go func() {
		defer q.bgWG.Done()
		defer k.refilling.Store(false)
		_, err := q.refill(q.ctx, k.name, false)
		if err != nil {
			k.lastErr.Store(&err)
			if q.ctx.Err() == nil {
				q.s.Logger.Warn("redisqueue: background refill failed", "key", k.name, "err", err)
			}
			return
		}
		k.lastErr.Store(nil)
	}()
}

// refill tops up the list of key name under the refill lock: it takes the
// lock (done is false, with no error, when another process holds it),
// checks that the list is still below the low-water mark, allocates one
// range of Step keys in the store (recorded in idsql_alloc_log when
// Allocate returns) and only then pushes its keys, chunk by chunk, and
// releases the lock. With force it takes no lock: a caller that has found
// the list empty for lockPatience does not wait any longer for a refiller
// that may be slow (a link with latency, a reply lost) or cut off.
func (q *Queue) refill(ctx context.Context, name string, force bool) (done bool, err error) {
	rid := q.currentRunID()
	if rid == "" {
		if rid, err = q.fetchRunID(ctx); err != nil {
			return false, err
		}
	}
	lock := q.lockKey(name, rid)
	token := newToken()
	q.stats.calls.Add(1)
	ok, err := q.rdb.SetNX(ctx, lock, token, q.s.LockTTL).Result()
	if err != nil || !ok && !force {
		return false, err
	}
	defer func() {
		if !ok {
			return // forced: the lock is another's
		}
		// Release with a context of its own: a caller's cancelled context
		// must not leave the lock to expire.
		uctx, cancel := context.WithTimeout(context.Background(), q.s.LoadTimeout)
		defer cancel()
		q.stats.calls.Add(1)
		if uerr := unlockScript.Run(uctx, q.rdb, []string{lock}, token).Err(); uerr != nil && err == nil {
			q.s.Logger.Warn("redisqueue: release refill lock", "key", name, "err", uerr)
		}
	}()
	q.sweep(ctx, name, rid)

	q.stats.calls.Add(1)
	n, err := lenScript.Run(ctx, q.rdb, []string{q.listKey(name, rid)}, rid).Int64()
	if newID, stale := staleRunID(err); stale {
		q.restarted(rid, newID)
		return true, nil // the caller pops again, from the new list
	}
	if err != nil {
		return false, err
	}
	if float64(n) >= q.s.LowWater*float64(q.s.Step) {
		return true, nil // refilled by another process meanwhile
	}

	actx, cancel := context.WithTimeout(ctx, q.s.LoadTimeout)
	r, err := q.store.Allocate(actx, segment.Request{Key: name, Step: q.s.Step, Instance: q.s.Instance})
	cancel()
	if err != nil {
		return false, &storeError{fmt.Errorf("redisqueue: refill: %w", err)}
	}
	if r.First < 1 || r.Last < r.First || r.Last > segment.MaxID || r.Len() != q.s.Step {
		return false, fmt.Errorf("redisqueue: refill: %w: asked for %d keys, got [%d, %d]", segment.ErrInvalidRange, q.s.Step, r.First, r.Last)
	}
	q.stats.refills.Add(1)
	if h := q.afterAllocate; h != nil {
		h(name, r)
	}
	return true, q.push(ctx, name, rid, r)
}

// push appends the keys of r to the list, PushChunk at a time. Keys of r
// not pushed when an error (or a Redis restart) stops it are lost: they
// were recorded in the ledger and are never handed out by anyone.
func (q *Queue) push(ctx context.Context, name, rid string, r segment.Range) error {
	list := q.listKey(name, rid)
	ttl := pushMarkerTTL.Milliseconds()
	var keys []byte
	for first := r.First; first <= r.Last; first += int64(q.s.PushChunk) {
		last := min(first+int64(q.s.PushChunk)-1, r.Last)
		keys = keys[:0]
		for v := first; v <= last; v++ {
			if v > first {
				keys = append(keys, ' ')
			}
			keys = strconv.AppendInt(keys, v, 10)
		}
		marker := q.s.Namespace + ":pushed:" + name + ":" + strconv.FormatInt(first, 10)
		q.stats.calls.Add(1)
		q.stats.pushes.Add(1)
		err := pushScript.Run(ctx, q.rdb, []string{list, marker}, rid, ttl, keys).Err()
		if newID, stale := staleRunID(err); stale {
			q.restarted(rid, newID)
			q.s.Logger.Warn("redisqueue: Redis restarted during a refill; the rest of the range is skipped",
				"key", name, "skipped_first", first, "skipped_last", r.Last)
			return nil
		}
		if err != nil {
			return fmt.Errorf("redisqueue: push keys [%d, %d] of range [%d, %d]: %w", first, last, r.First, r.Last, err)
		}
	}
	return nil
}

// sweep deletes, once per run_id and key, the lists of key name left by
// earlier Redis runs (reloaded from a snapshot): they are never read
// again, and their keys are lost, never reissued.
func (q *Queue) sweep(ctx context.Context, name, rid string) {
	q.mu.Lock()
	done := q.swept[name] == rid
	q.swept[name] = rid
	q.mu.Unlock()
	if done {
		return
	}
	prefix := q.s.Namespace + ":q:" + name + ":"
	var cursor uint64
	for {
		q.stats.calls.Add(1)
		found, next, err := q.rdb.Scan(ctx, cursor, globEscape(prefix)+"*", 1000).Result()
		if err != nil {
			return // hygiene only: the run_id check keeps stale lists unused
		}
		for _, k := range found {
			old := strings.TrimPrefix(k, prefix)
			if old == rid || !isRunID(old) {
				continue // ours, or another key's whose name extends name
			}
			q.stats.calls.Add(1)
			if n, err := q.rdb.LLen(ctx, k).Result(); err == nil {
				q.s.Logger.Warn("redisqueue: deleting a list of an earlier Redis run; its keys are skipped",
					"key", name, "list", k, "keys", n)
			}
			q.stats.calls.Add(1)
			q.rdb.Del(ctx, k)
		}
		if cursor = next; cursor == 0 {
			return
		}
	}
}

// restarted records that the server's run_id is newID (from a script's
// stale reply), not rid.
func (q *Queue) restarted(rid, newID string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.currentRunID() != rid {
		return // another caller saw it first
	}
	if !isRunID(newID) {
		q.runID.Store(nil) // fetched again by the next call
	} else {
		q.runID.Store(&newID)
	}
	q.stats.restarts.Add(1)
	q.s.Logger.Warn("redisqueue: Redis run_id changed (restart or failover): lists of the earlier run are no longer used; their keys are skipped",
		"old_run_id", rid, "run_id", newID)
}

func (q *Queue) currentRunID() string {
	if p := q.runID.Load(); p != nil {
		return *p
	}
	return ""
}

// fetchRunID asks the server for its run_id (INFO server).
func (q *Queue) fetchRunID(ctx context.Context) (string, error) {
	q.stats.calls.Add(1)
	info, err := q.rdb.Info(ctx, "server").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok && isRunID(v) {
			q.runID.Store(&v)
			return v, nil
		}
	}
	return "", errors.New("redisqueue: INFO server has no run_id")
}

func (q *Queue) listKey(name, rid string) string {
	return q.s.Namespace + ":q:" + name + ":" + rid
}

// lockKey names the refill lock of a key, per run_id too: a lock reloaded
// from an old snapshot does not hold up the first refill of a new run.
func (q *Queue) lockKey(name, rid string) string {
	return q.s.Namespace + ":lock:" + name + ":" + rid
}

// key returns the state of key name, made at first use.
func (q *Queue) key(name string) (*keyState, error) {
	if v, ok := q.keys.Load(name); ok {
		return v.(*keyState), nil
	}
	if name == "" {
		return nil, keyErr(name, "next ids", errors.New("empty key"))
	}
	v, _ := q.keys.LoadOrStore(name, &keyState{name: name, lock: make(chan struct{}, 1)})
	return v.(*keyState), nil
}

// Close stops background refills and the fallback generator and waits for
// them. Keys in the local buffers are dropped (lost, never reissued); keys
// in Redis stay for the other processes. It does not close the Redis
// client or the store.
func (q *Queue) Close() error {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil
	}
	q.closed = true
	q.shut.Store(true)
	fb := q.fb
	q.mu.Unlock()
	q.cancel()
	q.bgWG.Wait()
	if fb != nil {
		return fb.Close()
	}
	return nil
}

func keyErr(key, op string, err error) error {
	return &segment.KeyError{Key: key, Op: op, Err: err}
}

// staleRunID reports whether err is a script's stale reply, and the
// server's run_id it names.
func staleRunID(err error) (string, bool) {
	var rerr redis.Error
	if err == nil || !errors.As(err, &rerr) {
		return "", false
	}
	msg := rerr.Error()
	if !strings.HasPrefix(msg, errStale) {
		return "", false
	}
	return strings.TrimSpace(strings.TrimPrefix(msg, errStale)), true
}

// storeError is an error of the store (the database), which isDown must
// not take for Redis being down.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

// isDown reports whether err means Redis cannot serve now (network error,
// timeout, pool exhausted, connection closed, server loading its dataset
// or read-only), as opposed to a reply the queue does not expect. The
// caller's own context errors are not Redis being down: callers check
// ctx.Err() first.
func isDown(err error) bool {
	var se *storeError
	if err == nil || errors.As(err, &se) {
		return false
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, redis.ErrClosed) || errors.Is(err, redis.ErrPoolTimeout) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) {
		return true
	}
	var nerr net.Error
	if errors.As(err, &nerr) {
		return true
	}
	var rerr redis.Error
	if errors.As(err, &rerr) {
		msg := rerr.Error()
		for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "BUSY ", "TRYAGAIN", "CLUSTERDOWN"} {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
	}
	return false
}

func isRunID(s string) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// globEscape escapes the glob characters of SCAN MATCH in s.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range s {
		if strings.ContainsRune(`*?[]\^-`, c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
