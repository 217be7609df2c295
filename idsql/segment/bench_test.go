package segment_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// The benchmarks run on memStore, the in-memory Store of memstore_test.go,
// so they measure the generator, not a database. The step is large enough
// that loads are rare; the latency test forces step 1000.

func BenchmarkAtomicAdd(b *testing.B) {
	var n atomic.Int64
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			n.Add(1)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				n.Add(1)
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
}

func BenchmarkSegmentNextID(b *testing.B) {
	ctx := context.Background()
	setup := func(b *testing.B) (*segment.Generator, *segment.Key) {
		store := newMemStore(map[string]int64{"bench": 1_000_000})
		g := newGen(b, store, segment.Settings{MaxStep: 10_000_000})
		return g, mustKey(b, g, "bench")
	}
	b.Run("serial", func(b *testing.B) {
		_, k := setup(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := k.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
	b.Run("parallel", func(b *testing.B) {
		_, k := setup(b)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := k.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
	b.Run("by-name", func(b *testing.B) { // Generator.NextID: map lookup per ID
		g, _ := setup(b)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.NextID(ctx, "bench"); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ids/s")
	})
}

// latency takes n IDs one by one with a fixed step of 1000 (n/1000 segment
// switches) and returns the distribution of the time each Next took,
// measured with time.Now around the call (the clock read is included).
// With maxStep 0 the step adapts (Leaf's doubling, up to 1,000,000) instead;
// with maxStep -1 a bare atomic counter is measured the same way, the floor
// the machine (timer reads, preemption, other processes) sets.
func latency(tb testing.TB, n int, maxStep int64) (p50, p99, p9999, worst time.Duration) {
	const step = 1000
	store := newMemStore(map[string]int64{"lat": step})
	g := newGen(tb, store, segment.Settings{MaxStep: max(maxStep, 0)})
	k := mustKey(tb, g, "lat")
	ctx := context.Background()
	next := k.Next
	if maxStep < 0 {
		var c atomic.Int64
		next = func(context.Context) (int64, error) { return c.Add(1), nil }
	}
	// Histogram in 1 ns buckets up to about 1 ms, no allocation while measuring.
	hist := make([]uint32, 1<<20)
	for range n {
		start := time.Now()
		_, err := next(ctx)
		d := time.Since(start)
		if err != nil {
			tb.Fatal(err)
		}
		if d > worst {
			worst = d
		}
		hist[min(int(d), len(hist)-1)]++
	}
	at := func(q float64) time.Duration {
		target := uint64(q * float64(n))
		var sum uint64
		for i, c := range hist {
			sum += uint64(c)
			if sum >= target {
				return time.Duration(i)
			}
		}
		return worst
	}
	st := k.Stats()
	var over uint64
	for _, c := range hist[1000:] {
		over += uint64(c)
	}
	tb.Logf("%d IDs, stored step %d, max step %d: %d loads, %d waits for a range, %d IDs took 1µs or more, p99.9 %v", n, step, g.Settings().MaxStep, st.Loads, st.Waits, over, at(0.999))
	return at(0.50), at(0.99), at(0.9999), worst
}

// BenchmarkSegmentLatency reports the distribution of per-ID latency as
// metrics (and logs loads and waits); run it with -benchtime=10000000x for
// 10 million IDs. It asserts nothing about time: the figures go to
// BENCHMARKS.md.
// The "step1000" case pins the step at 1000 (a segment switch every 1000
// IDs); "adaptive" starts at 1000 and lets the step grow; "atomic" is a bare
// atomic counter timed the same way, for the machine's own noise.
func BenchmarkSegmentLatency(b *testing.B) {
	for _, c := range []struct {
		name    string
		maxStep int64
	}{{"step1000", 1000}, {"adaptive", 0}, {"atomic", -1}} {
		b.Run(c.name, func(b *testing.B) {
			p50, p99, p9999, worst := latency(b, b.N, c.maxStep)
			b.ReportMetric(float64(p50), "p50-ns")
			b.ReportMetric(float64(p99), "p99-ns")
			b.ReportMetric(float64(p9999), "p99.99-ns")
			b.ReportMetric(float64(worst), "max-ns")
		})
	}
}

// BenchmarkSegmentVsAtomic alternates blocks of 100,000 bare atomic adds,
// 100,000 serial Key.Next calls and 100,000 Generator.NextID calls by the
// key's name, the side that goes first rotating every round, and reports
// their throughputs and the ratios "segment/atomic" (by key) and
// "segment-name/atomic". Interleaving makes the ratios robust to the noise
// of a shared machine, which moves every side at once. Each segment side's
// IDs must rise, or the benchmark fails: a ratio never comes from a side
// that skipped its work.
func BenchmarkSegmentVsAtomic(b *testing.B) {
	const block = 100_000
	store := newMemStore(map[string]int64{"bench": 1_000_000})
	g := newGen(b, store, segment.Settings{MaxStep: 10_000_000})
	k := mustKey(b, g, "bench")
	ctx := context.Background()
	var n atomic.Int64
	var last int64
	took := make([]time.Duration, 3)
	next := []func() (int64, error){
		func() (int64, error) { return n.Add(1), nil },
		func() (int64, error) { return k.Next(ctx) },
		func() (int64, error) { return g.NextID(ctx, "bench") },
	}
	run := func(side int) {
		s := time.Now()
		f := next[side]
		for range block {
			id, err := f()
			if err != nil {
				b.Fatal(err)
			}
			if side > 0 {
				if id <= last {
					b.Fatalf("segment side %d: ID %d after %d", side, id, last)
				}
				last = id
			}
		}
		took[side] += time.Since(s)
	}
	for i := 0; b.Loop(); i++ {
		for j := range next {
			run((i + j) % len(next))
		}
	}
	ids := float64(b.N) * block
	b.ReportMetric(ids/took[0].Seconds(), "atomic-ids/s")
	b.ReportMetric(ids/took[1].Seconds(), "segment-ids/s")
	b.ReportMetric(ids/took[2].Seconds(), "segment-name-ids/s")
	b.ReportMetric(took[0].Seconds()/took[1].Seconds(), "segment/atomic")
	b.ReportMetric(took[0].Seconds()/took[2].Seconds(), "segment-name/atomic")
}
