package shape_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ranges is the number of equal ranges the 63-bit key space is split
// into, as a range-partitioned store splits a table's key span.
const ranges = 64

// hottest simulates procs processes issuing snowflake keys of layout at
// full speed (every sequence of every tick, under worker IDs 1..procs)
// for d from start (at least a second), shapes each key with f, and
// returns the largest share of the inserts of any 1-second window (sliding
// by one tick) that falls into one of the 64 ranges.
func hottest(l snowflake.Layout, f shape.Func, procs int, d time.Duration, start time.Time) float64 {
	return hottestIn(63, l, f, procs, d, start)
}

// hottestIn is hottest with the ranges splitting a space of spaceBits
// bits, [0, 2^spaceBits).
func hottestIn(spaceBits int, l snowflake.Layout, f shape.Func, procs int, d time.Duration, start time.Time) float64 {
	first := l.Tick(start)
	window := int(time.Second / l.Unit)
	ticks := int(d / l.Unit)
	// counts[t][r]: inserts of tick first+t into range r.
	counts := make([][ranges]int, ticks)
	workerShift, seqShift := l.SequenceBits, 0
	if l.WorkerLow {
		workerShift, seqShift = 0, l.WorkerBits
	}
	for t := range ticks {
		base := (first + int64(t)) << (l.WorkerBits + l.SequenceBits)
		for w := int64(1); w <= int64(procs); w++ {
			for s := int64(0); s <= l.MaxSequence(); s++ {
				k, err := f.Apply(base | w<<workerShift | s<<seqShift)
				if err != nil {
					panic(err)
				}
				counts[t][k>>(spaceBits-6)]++
			}
		}
	}
	var sum [ranges]int
	total, best := 0, 0.0
	for t := range ticks {
		for r := range ranges {
			sum[r] += counts[t][r]
			total += counts[t][r]
		}
		if t >= window {
			for r := range ranges {
				sum[r] -= counts[t-window][r]
				total -= counts[t-window][r]
			}
		}
		if t >= window-1 {
			for r := range ranges {
				best = max(best, float64(sum[r])/float64(total))
			}
		}
	}
	return best
}

// shapeFor returns s over the snowflake keys of l in 63 bits.
func shapeFor(l snowflake.Layout, s shape.Shape) shape.Func {
	f, err := shape.New(s, shape.Space{Bits: 63, Low: l.WorkerBits + l.SequenceBits, Width: l.TimeBits})
	if err != nil {
		panic(err)
	}
	return f
}

// Example_hotRange is the hot-range simulation of BENCHMARKS.md: 8
// processes issuing keys at full speed for 1.2 seconds (every 1-second window sliding by a tick); the share of one
// second's inserts that the hottest of 64 equal key ranges takes. An
// ordered table sends them all to one range; the goal for a spread shape
// is at most 2/64 = 0.031. A reversed time field stays within the
// layout's width: keys of a layout narrower than 63 bits (js53's 53) all
// fall into the lowest range of the 63-bit space, while a shard shape
// puts its bits on top of the 63.
func Example_hotRange() {
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		l    snowflake.Layout
		s    shape.Shape
	}{
		{"leaf, ordered", snowflake.Leaf, shape.Shape{}},
		{"leaf, {spread: reverse}", snowflake.Leaf, shape.Shape{Spread: shape.Reverse}},
		{"js53, ordered", snowflake.JS53, shape.Shape{}},
		{"js53, {spread: reverse}", snowflake.JS53, shape.Shape{Spread: shape.Reverse}},
		{"js53, {spread: shard, bits: 6}", snowflake.JS53, shape.Shape{Spread: shape.Shard, Bits: 6}},
		{"js53, {spread: shard, bits: 10}", snowflake.JS53, shape.Shape{Spread: shape.Shard, Bits: 10}},
	} {
		fmt.Printf("%-44s hottest range takes %.3f\n", c.name, hottest(c.l, shapeFor(c.l, c.s), 8, 1200*time.Millisecond, start))
	}
	// With max_id 2^53-1 a js53 table's key space is 53 bits, which the
	// store's 64 ranges split.
	js, _ := shape.New(shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 53, Low: 15, Width: 38})
	fmt.Printf("%-44s hottest range takes %.3f\n", "js53, max_id 2^53-1, {spread: reverse}", hottestIn(53, snowflake.JS53, js, 8, 1200*time.Millisecond, start))
	// Output:
	// leaf, ordered                                hottest range takes 1.000
	// leaf, {spread: reverse}                      hottest range takes 0.016
	// js53, ordered                                hottest range takes 1.000
	// js53, {spread: reverse}                      hottest range takes 1.000
	// js53, {spread: shard, bits: 6}               hottest range takes 0.017
	// js53, {spread: shard, bits: 10}              hottest range takes 0.017
	// js53, max_id 2^53-1, {spread: reverse}       hottest range takes 0.020
}

// BenchmarkHotRange runs the simulation of Example_hotRange for each
// shape on the leaf layout and reports the hottest range's share.
func BenchmarkHotRange(b *testing.B) {
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for _, s := range []shape.Shape{{}, {Spread: shape.Reverse}} {
		b.Run(s.String(), func(b *testing.B) {
			var share float64
			for b.Loop() {
				share = hottest(snowflake.Leaf, shapeFor(snowflake.Leaf, s), 8, time.Second, start)
			}
			b.ReportMetric(share, "hottest-share")
		})
	}
}
