package redisqueue

import (
	"context"
	"fmt"
	"strconv"
	"strings"
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

// BenchmarkPopGuard measures what the run_id check costs a pop: the pop
// script (INFO server, LPOP count, LLEN) against a bare LPOP count, both
// taking 100 keys from a list kept full, one round trip per op.
//
//	source /tmp/idsql-dev/env && CI=true go test -run '^$' -bench PopGuard -benchtime 2s -count 3 ./idsql/segment/redisqueue/
func BenchmarkPopGuard(b *testing.B) {
	rdb := client(b)
	ns := namespace(b, rdb)
	ctx := context.Background()
	rid := ""
	if info, err := rdb.Info(ctx, "server").Result(); err == nil {
		for _, line := range strings.Split(info, "\n") {
			if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
				rid = v
			}
		}
	}
	list := ns + ":q:bench:" + rid
	keys := make([]any, 100)
	for i := range keys {
		keys[i] = strconv.Itoa(1_000_000 + i)
	}
	for _, c := range []struct {
		name string
		pop  func() error
	}{
		{"script", func() error { return popScript.Run(ctx, rdb, []string{list}, rid, 100).Err() }},
		{"bare-lpop", func() error { return rdb.LPopCount(ctx, list, 100).Err() }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				rdb.RPush(ctx, list, keys...)
				b.StartTimer()
				if err := c.pop(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pops/s")
		})
	}
}
