package redisqueue

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/idsql/idsql/idsql/segment"
)

// BenchmarkQueue takes keys through the Redis queue (one queue, as one
// process; or four sharing the list, as four processes, each with a Redis
// client of its own) and, as the baseline of the same run, from an
// ordinary segment generator over the same PostgreSQL store. redis-rt/1000
// is the Redis round trips (commands and scripts) per 1,000 keys.
//
//	source /tmp/idsql-dev/env && CI=true go test -run '^$' -bench Queue -benchtime 2s -count 3 ./idsql/segment/redisqueue/
func BenchmarkQueue(b *testing.B) {
	for _, c := range []struct {
		queues, batch int
	}{{1, 100}, {4, 100}, {1, 1000}, {1, 1}} {
		b.Run(fmt.Sprintf("redis/queues=%d/batch=%d", c.queues, c.batch), func(b *testing.B) {
			store := pgStore(b)
			base := client(b)
			ns := namespace(b, base)
			qs := make([]*Queue, c.queues)
			for i := range qs {
				qs[i] = newQueue(b, clientOf(b, base.Options().Addr), store,
					Settings{Namespace: ns, Step: 10_000, Batch: c.batch})
			}
			var next atomic.Int64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				q := qs[int(next.Add(1))%len(qs)]
				ctx := context.Background()
				for pb.Next() {
					if _, err := q.Next(ctx, testKey); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.StopTimer()
			var calls, handed uint64
			for _, q := range qs {
				st := q.Stats()
				calls += st.RedisCalls
				handed += st.Handed
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
			b.ReportMetric(float64(calls)*1000/float64(max(handed, 1)), "redis-rt/1000")
		})
	}
	b.Run("direct-segment", func(b *testing.B) {
		store := pgStore(b)
		g, err := segment.New(context.Background(), store, segment.Settings{RefreshInterval: -1})
		if err != nil {
			b.Fatal(err)
		}
		defer g.Close()
		k, err := g.Key(context.Background(), testKey)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			ctx := context.Background()
			for pb.Next() {
				if _, err := k.Next(ctx); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
}
