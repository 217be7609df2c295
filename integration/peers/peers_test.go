package peers

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	bwmarrin "github.com/bwmarrin/snowflake"
	"github.com/sony/sonyflake"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/snowflake"
)

// A side is one generator under test: next returns one ID.
type side struct {
	name string
	next func() (int64, error)
}

// slice is what one side did in one slice of time.
type slice struct {
	ids       int64
	wall, cpu time.Duration
}

// cpuTime returns the process's user plus system CPU time so far.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run takes IDs from next in goroutines goroutines for about d and returns
// how many, the wall time until the last goroutine stopped and the
// process CPU time spent meanwhile. It fails the benchmark when a side
// errs, or hands a goroutine an ID not above the one before, so a ratio
// never comes from a side that skipped its work.
func run(tb testing.TB, next func() (int64, error), goroutines int, d time.Duration) slice {
	var stop atomic.Bool
	var total atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	cpu0 := cpuTime(tb)
	start := time.Now()
	for range goroutines {
		wg.Go(func() {
			var n, last int64
			for !stop.Load() {
				for range 64 {
					id, err := next()
					if err == nil && id <= last {
						// Each side's IDs rise for every caller: an ID not
						// above the caller's last is a side not doing its
						// work (or issuing one twice).
						err = fmt.Errorf("ID %d after %d: not above the caller's last", id, last)
					}
					if err != nil {
						errs <- err
						stop.Store(true)
						break
					}
					last = id
					n++
				}
			}
			total.Add(n)
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	s := slice{ids: total.Load(), wall: time.Since(start), cpu: cpuTime(tb) - cpu0}
	close(errs)
	for err := range errs {
		tb.Fatal(err)
	}
	return s
}

// interleave runs one slice of d per side per benchmark iteration, in
// rotating order, and reports for each side the medians over the slices of
// wall time per ID, process CPU time per ID and IDs per second, and the
// ratios of the first side's medians to the second's. b.N is the number of
// rounds: run with -benchtime Nx.
func interleave(b *testing.B, sides [2]side, goroutines int, d time.Duration) {
	var got [2][]slice
	for i := 0; b.Loop(); i++ {
		for j := range sides {
			k := (i + j) % len(sides)
			got[k] = append(got[k], run(b, sides[k].next, goroutines, d))
		}
	}
	var nsPerID, cpuPerID, rate [2]float64
	for k, ss := range got {
		nsPerID[k] = median(ss, func(s slice) float64 { return float64(s.wall.Nanoseconds()) / float64(s.ids) })
		cpuPerID[k] = median(ss, func(s slice) float64 { return float64(s.cpu.Nanoseconds()) / float64(s.ids) })
		rate[k] = median(ss, func(s slice) float64 { return float64(s.ids) / s.wall.Seconds() })
		b.ReportMetric(nsPerID[k], sides[k].name+"-ns/id")
		b.ReportMetric(cpuPerID[k], sides[k].name+"-cpu-ns/id")
		b.ReportMetric(rate[k], sides[k].name+"-ids/s")
	}
	pair := sides[0].name + "/" + sides[1].name
	b.ReportMetric(nsPerID[0]/nsPerID[1], pair+"-time")
	b.ReportMetric(cpuPerID[0]/cpuPerID[1], pair+"-cpu")
	b.ReportMetric(rate[0]/rate[1], pair+"-ids/s")
	b.ReportMetric(0, "ns/op") // the sum of both sides says nothing
}

func median(ss []slice, f func(slice) float64) float64 {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	slices.Sort(v)
	if n := len(v); n%2 == 1 {
		return v[n/2]
	} else {
		return (v[n/2-1] + v[n/2]) / 2
	}
}

// idsqlSide returns an idsql snowflake generator on layout l under a lease
// whose deadline and horizon are an hour away, so every ID goes through the
// fencing checks as it would under a real holder.
func idsqlSide(b *testing.B, l snowflake.Layout) side {
	lease := holder.NewStaticLease(1, time.Time{})
	limit := time.Now().Add(time.Hour)
	lease.Renew(limit, limit)
	g, err := snowflake.New(context.Background(), lease, snowflake.Settings{Layout: l})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	return side{"idsql", func() (int64, error) { return g.NextID(ctx) }}
}

// bwmarrinSide returns a bwmarrin/snowflake node with the given widths. The
// library keeps them in package variables that NewNode reads, so they are
// set around the call and put back.
func bwmarrinSide(b *testing.B, nodeBits, stepBits uint8) side {
	defer func(n, s uint8) { bwmarrin.NodeBits, bwmarrin.StepBits = n, s }(bwmarrin.NodeBits, bwmarrin.StepBits)
	bwmarrin.NodeBits, bwmarrin.StepBits = nodeBits, stepBits
	node, err := bwmarrin.NewNode(1)
	if err != nil {
		b.Fatal(err)
	}
	return side{"bwmarrin", func() (int64, error) { return node.Generate().Int64(), nil }}
}

// wide is a layout whose ceiling (4 billion IDs a second) no benchmark
// reaches: it measures the cost of an ID, not the wait for the next tick.
var wide = snowflake.Layout{Name: "wide", TimeBits: 40, WorkerBits: 1, SequenceBits: 22,
	Unit: time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

// goroutineCases are the serial and parallel cases: one goroutine, and one
// per CPU.
func goroutineCases() []int { return []int{1, runtime.GOMAXPROCS(0)} }

func name(goroutines int) string {
	if goroutines == 1 {
		return "serial"
	}
	return fmt.Sprintf("parallel-%d", goroutines)
}

// BenchmarkVsBwmarrin pits idsql's generator against bwmarrin/snowflake
// v0.3.0. "uncapped" gives both 22 sequence bits, a ceiling out of reach,
// so it compares the cost of an ID; "cap" gives both Twitter's 10 worker
// and 12 sequence bits (idsql's leaf layout), whose ceiling of 4,096 IDs a
// millisecond both reach, so it compares what waiting for the next tick
// costs in CPU.
func BenchmarkVsBwmarrin(b *testing.B) {
	for _, g := range goroutineCases() {
		b.Run("uncapped/"+name(g), func(b *testing.B) {
			interleave(b, [2]side{idsqlSide(b, wide), bwmarrinSide(b, 1, 22)}, g, 20*time.Millisecond)
		})
	}
	for _, g := range goroutineCases() {
		b.Run("cap/"+name(g), func(b *testing.B) {
			interleave(b, [2]side{idsqlSide(b, snowflake.Leaf), bwmarrinSide(b, 10, 12)}, g, 50*time.Millisecond)
		})
	}
}

// BenchmarkVsSonyflake pits idsql's generator on the Sony layout (8
// sequence bits of 10 ms ticks: 25,600 IDs a second) against
// sony/sonyflake v1.2.0. Both run at that ceiling, so this compares what
// waiting for the next tick costs.
func BenchmarkVsSonyflake(b *testing.B) {
	for _, g := range goroutineCases() {
		b.Run("cap/"+name(g), func(b *testing.B) {
			sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (uint16, error) { return 1, nil }})
			if err != nil {
				b.Fatal(err)
			}
			peer := side{"sonyflake", func() (int64, error) {
				id, err := sf.NextID()
				return int64(id), err
			}}
			interleave(b, [2]side{idsqlSide(b, snowflake.Sony), peer}, g, 200*time.Millisecond)
		})
	}
}
