package redisqueue

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the queue as the segment tables' `buffer: redis`. A
// program links it with
//
//	import _ "github.com/idsql/idsql/idsql/segment/redisqueue"
func init() { kinds.RegisterBuffer("redis", open) }

// open dials s.Addr and starts a Queue on that client.
func open(ctx context.Context, s kinds.BufferSettings) (kinds.Buffer, error) {
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	q, err := New(ctx, rdb, s.Store, Settings{Namespace: s.Namespace, Step: s.Step, Batch: s.Batch,
		Fallback: s.Fallback, Instance: s.Instance, Logger: s.Logger})
	if err != nil {
		rdb.Close()
		return nil, err
	}
	return ownedClient{q, rdb}, nil
}

// ownedClient is a Queue that closes its Redis client after itself.
type ownedClient struct {
	*Queue
	rdb *redis.Client
}

func (o ownedClient) Close() error { return errors.Join(o.Queue.Close(), o.rdb.Close()) }
