package snowflake

import (
	"context"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
)

// wide has 22 sequence bits: 4 billion IDs a second per worker, a ceiling no
// benchmark reaches, so it measures the pure cost of generating an ID.
var wide = Layout{Name: "wide", TimeBits: 40, WorkerBits: 1, SequenceBits: 22,
	Unit: time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

func reportRate(b *testing.B, l Layout) {
	rate := float64(b.N) / b.Elapsed().Seconds()
	b.ReportMetric(rate, "ids/s")
	b.ReportMetric(rate/l.Ceiling(), "of-ceiling")
}

// benchIDs takes b.N IDs from next, serially or from GOMAXPROCS goroutines.
func benchIDs(b *testing.B, next func(context.Context) (int64, error), parallel bool) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	if !parallel {
		for range b.N {
			if _, err := next(ctx); err != nil {
				b.Fatal(err)
			}
		}
		return
	}
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := next(ctx); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func benchNextID(b *testing.B, l Layout, parallel bool) {
	g, err := New(context.Background(), holder.NewStaticLease(1, time.Time{}), Settings{Layout: l})
	if err != nil {
		b.Fatal(err)
	}
	benchIDs(b, g.NextID, parallel)
	reportRate(b, l)
}

// BenchmarkSnowflakeNextID runs into the leaf layout's ceiling of 4,096 IDs
// per millisecond; of-ceiling is the fraction of it reached.
func BenchmarkSnowflakeNextID(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchNextID(b, Leaf, false) })
	b.Run("parallel", func(b *testing.B) { benchNextID(b, Leaf, true) })
}

// BenchmarkSnowflakeGenerate shows the cost of one ID when the ceiling is out
// of reach.
func BenchmarkSnowflakeGenerate(b *testing.B) {
	b.Run("serial", func(b *testing.B) { benchNextID(b, wide, false) })
	b.Run("parallel", func(b *testing.B) { benchNextID(b, wide, true) })
}

func benchCached(b *testing.B, l Layout, parallel bool) {
	c, err := NewCached(context.Background(), holder.NewStaticLease(1, time.Time{}), Settings{Layout: l}, CachedSettings{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	benchIDs(b, c.NextID, parallel)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}

// BenchmarkCachedNextID takes IDs from the ring buffer. On the wide layout the
// filler is never drift-limited; on leaf the default one-second drift caps a
// long run at the layout's ceiling.
func BenchmarkCachedNextID(b *testing.B) {
	b.Run("wide/serial", func(b *testing.B) { benchCached(b, wide, false) })
	b.Run("wide/parallel", func(b *testing.B) { benchCached(b, wide, true) })
	b.Run("leaf/serial", func(b *testing.B) { benchCached(b, Leaf, false) })
	b.Run("leaf/parallel", func(b *testing.B) { benchCached(b, Leaf, true) })
}
