package redisqueue

import (
	"context"
	"fmt"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// While Redis is down, keys come from an ordinary segment generator over
// the same store: its ranges are allocated by the same allocator as the
// ranges pushed to Redis, so they never overlap them. Every RetryInterval
// one caller tries Redis again; the first success ends the fallback.

// markDown records that Redis could not be reached (logging it once per
// outage) and sets the time of the next retry.
func (q *Queue) markDown(err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := time.Now()
	if q.downAt.IsZero() {
		q.downAt = now
		q.stats.outages.Add(1)
		if q.s.NoFallback {
			q.s.Logger.Warn("redisqueue: Redis unreachable", "err", err)
		} else {
			q.s.Logger.Warn("redisqueue: Redis unreachable; handing out keys from ranges allocated directly from the database until it answers", "err", err)
		}
	}
	q.retryAt = now.Add(q.s.RetryInterval)
}

// useFallback reports whether this caller takes its keys from the fallback
// generator: Redis is down and it is not this caller's turn to try Redis
// again. A caller whose turn it is tries Redis (and, failing, calls
// markDown again); the first success clears the outage (see up).
func (q *Queue) useFallback() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.downAt.IsZero() {
		return false
	}
	if time.Now().Before(q.retryAt) {
		return true
	}
	q.retryAt = time.Now().Add(q.s.RetryInterval) // this caller tries; the others keep falling back
	return false
}

// redisDown reports whether Redis is taken to be down.
func (q *Queue) redisDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return !q.downAt.IsZero()
}

// up records that Redis answered.
func (q *Queue) up() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.downAt.IsZero() {
		q.s.Logger.Info("redisqueue: Redis answers again; keys come from Redis", "down_for", time.Since(q.downAt).Round(time.Millisecond))
		q.downAt = time.Time{}
	}
}

// fallback takes n keys of name from the fallback generator, made at its
// first use.
func (q *Queue) fallback(ctx context.Context, name string, n int) ([]int64, error) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return nil, keyErr(name, "next ids", ErrClosed)
	}
	g := q.fb
	q.mu.Unlock()
	if g == nil {
		var err error
		g, err = segment.New(ctx, q.store, q.s.Fallback)
		if err != nil {
			return nil, keyErr(name, "next ids", fmt.Errorf("Redis unreachable and the fallback generator could not start: %w", err))
		}
		q.mu.Lock()
		switch {
		case q.closed:
			q.mu.Unlock()
			g.Close()
			return nil, keyErr(name, "next ids", ErrClosed)
		case q.fb != nil:
			g.Close()
			g = q.fb
		default:
			q.fb = g
		}
		q.mu.Unlock()
	}
	ids, err := g.NextIDs(ctx, name, n)
	if err != nil {
		return nil, fmt.Errorf("redisqueue: Redis unreachable, fallback: %w", err)
	}
	q.stats.fallback.Add(uint64(n))
	q.stats.handed.Add(uint64(n))
	return ids, nil
}
