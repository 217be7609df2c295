// Package benchpair times several implementations of one operation against
// each other inside a single benchmark loop, for ratios that hold on a
// shared machine.
package benchpair

import (
	"slices"
	"testing"
	"time"
)

// Run times the implementations op by op in rotating order inside one
// loop, so a noisy neighbour slows every side alike. ops[k] gets the loop
// index. It reports, for each side, its mean time (name-ns/op) and its
// median (name-p50-ns), and the ratios of the first side to each other
// one: of total times (first/name) and of medians (first/name-p50). On a
// shared machine these ratios are steadier than ratios of separate
// benchmarks, and the medians' steadier than the totals', which a few
// descheduled operations can move.
func Run(b *testing.B, names []string, ops []func(i int) error) {
	b.Helper()
	total := make([]time.Duration, len(ops))
	each := make([][]time.Duration, len(ops))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range ops {
			k := (i + j) % len(ops)
			start := time.Now()
			if err := ops[k](i); err != nil {
				b.Fatalf("%s: %v", names[k], err)
			}
			d := time.Since(start)
			total[k] += d
			each[k] = append(each[k], d)
		}
	}
	median := make([]time.Duration, len(ops))
	for k, name := range names {
		slices.Sort(each[k])
		median[k] = each[k][len(each[k])/2]
		b.ReportMetric(float64(total[k].Nanoseconds())/float64(b.N), name+"-ns/op")
		b.ReportMetric(float64(median[k].Nanoseconds()), name+"-p50-ns")
		if k > 0 {
			b.ReportMetric(float64(total[0])/float64(total[k]), names[0]+"/"+name)
			b.ReportMetric(float64(median[0])/float64(median[k]), names[0]+"/"+name+"-p50")
		}
	}
	b.ReportMetric(0, "ns/op") // the sum of all sides says nothing
}
