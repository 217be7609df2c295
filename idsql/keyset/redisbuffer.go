package keyset

import (
	"context"
	"fmt"

	"github.com/idsql/idsql/idsql/kinds"
)

// BufferRedis is TableConfig.Buffer for a segment table whose pre-allocated
// keys wait in a Redis list shared by every process (package
// idsql/segment/redisqueue, which a program using it imports:
// import _ "github.com/idsql/idsql/idsql/segment/redisqueue") instead of in
// each process's memory.
const BufferRedis = "redis"

// RedisConfig is the Redis server of the tables with `buffer: redis`.
//
//	redis: {addr: 127.0.0.1:6379}
//	tables:
//	  users: {strategy: segment, step: 10000, buffer: redis}
type RedisConfig struct {
	// Addr is the server's host:port. Required when a table has
	// `buffer: redis`.
	Addr string `yaml:"addr"`
	// Batch is how many keys one pop takes into a process's local buffer;
	// zero means redisqueue.DefaultBatch (100).
	Batch int `yaml:"batch"`
}

// validateBuffer checks a table's buffer setting.
func (c *Config) validateBuffer(name string, t TableConfig) error {
	fail := func(format string, args ...any) error {
		return &FieldError{Field: "tables." + name + ".buffer", Err: fmt.Errorf(format, args...)}
	}
	switch t.Buffer {
	case "", "memory":
		return nil
	case BufferRedis:
		if _, err := kinds.LookupBuffer(t.Buffer); err != nil {
			return fail("%w", err)
		}
	default:
		return fail("unknown buffer %q (want memory or redis)", t.Buffer)
	}
	switch {
	case t.Strategy != Segment:
		return fail("redis applies to segment tables only")
	case c.Redis.Addr == "":
		return &FieldError{Field: "redis.addr", Err: fmt.Errorf("is required: table %s has buffer: redis", name)}
	case c.Redis.Batch < 0:
		return &FieldError{Field: "redis.batch", Err: fmt.Errorf("%d is negative", c.Redis.Batch)}
	}
	return nil
}

// startRedisQueue starts the key source of a segment table with
// `buffer: redis` and a plain key (a table with shard or app bits is a
// GeneTable drawing from the queue). k.mu is held.
func (k *Keys) startRedisQueue(ctx context.Context, table string, tc TableConfig) (KeySource, error) {
	q, err := k.redisQueue(ctx, tc)
	if err != nil {
		return nil, err
	}
	return &segmentSource{key: queueKey{q: q, key: k.cfg.SegmentKey(table)}, lim: k.limits[table]}, nil
}

// redisQueue starts a table's Redis queue (its step is the table's)
// over the segment store. The queue serves every segment key of the
// table: the table's own, or one per shard. k.mu is held.
func (k *Keys) redisQueue(ctx context.Context, tc TableConfig) (kinds.Buffer, error) {
	store, err := k.segmentStore()
	if err != nil {
		return nil, err
	}
	open, err := kinds.LookupBuffer(tc.Buffer)
	if err != nil {
		return nil, err
	}
	q, err := open(ctx, kinds.BufferSettings{
		Addr:      k.cfg.Redis.Addr,
		Namespace: "idsql:" + k.cfg.Namespace,
		Step:      tc.StepOrDefault(),
		Batch:     k.cfg.Redis.Batch,
		Store:     store,
		Fallback:  k.opts.Segment,
		Instance:  k.opts.Segment.Instance,
		Logger:    k.opts.Logger,
	})
	if err != nil {
		return nil, err
	}
	k.closers = append(k.closers, func(context.Context) error { return q.Close() })
	return q, nil
}

// queueKey is one key of a Redis queue, as a segmentSource draws from it.
type queueKey struct {
	q   kinds.Buffer
	key string
}

func (k queueKey) Next(ctx context.Context) (int64, error) { return k.q.Next(ctx, k.key) }

func (k queueKey) NextIDs(ctx context.Context, n int) ([]int64, error) {
	return k.q.NextN(ctx, k.key, n)
}
