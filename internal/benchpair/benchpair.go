// Package benchpair times several implementations of one operation against
// each other inside a single benchmark loop, for ratios that hold on a
// shared machine.
package benchpair

import (
	"testing"
	"time"
)

// Run times the implementations op by op in rotating order inside one
// loop, so a noisy neighbour slows every side alike, and reports each
// side's mean time (name-ns/op) and the ratios of the first to the others
// (first/name). On a shared machine these ratios are steadier than ratios
// of separate benchmarks. ops[k] gets the loop index.
func Run(b *testing.B, names []string, ops []func(i int) error) {
	b.Helper()
	total := make([]time.Duration, len(ops))
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range ops {
			k := (i + j) % len(ops)
			start := time.Now()
			if err := ops[k](i); err != nil {
				b.Fatalf("%s: %v", names[k], err)
			}
			total[k] += time.Since(start)
		}
	}
	for k, name := range names {
		b.ReportMetric(float64(total[k].Nanoseconds())/float64(b.N), name+"-ns/op")
		if k > 0 {
			b.ReportMetric(float64(total[0])/float64(total[k]), names[0]+"/"+name)
		}
	}
	b.ReportMetric(0, "ns/op") // the sum of all sides says nothing
}
