package snowflake

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// boundsLayouts are the presets and custom layouts whose ticks do not line
// up with seconds, or that outlast a time.Duration.
var boundsLayouts = []Layout{
	Leaf, UID32, Sony, SonyWidths, JS53,
	{Name: "odd-epoch-seconds", TimeBits: 35, WorkerBits: 16, SequenceBits: 12, Unit: time.Second,
		Epoch: time.Date(2020, 3, 4, 5, 6, 7, 123_000_000, time.UTC)},
	{Name: "7ms-low", TimeBits: 40, WorkerBits: 11, SequenceBits: 12, Unit: 7 * time.Millisecond,
		Epoch: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC), WorkerLow: true},
	{Name: "long", TimeBits: 45, WorkerBits: 8, SequenceBits: 10, Unit: time.Second,
		Epoch: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)},
}

// For random ranges and IDs of every layout, an ID is in [lo, hi] exactly
// when its time lies in [from, to); and when from is a tick boundary,
// every ID composed at an instant in [from, to) is in the range.
func TestBoundsProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(36, 2))
	for _, l := range boundsLayouts {
		t.Run(l.Name, func(t *testing.T) {
			for range 2000 {
				from := l.TimeOf(rng.Int64N(l.MaxTick() - 200))
				if rng.IntN(2) == 0 {
					from = from.Add(time.Duration(rng.Int64N(int64(l.Unit))))
				}
				to := from.Add(time.Duration(1 + rng.Int64N(int64(50*l.Unit))))
				lo, hi, err := l.Bounds(from, to)
				if errors.Is(err, ErrRange) && to.Sub(from) < l.Unit {
					continue // no tick starts in a range shorter than one
				}
				if err != nil {
					t.Fatalf("Bounds(%s, %s): %v", from, to, err)
				}
				first, last := l.Tick(from)-2, l.Tick(to)+2
				for range 50 {
					tick := first + rng.Int64N(last-first+1)
					w, s := rng.Int64N(l.MaxWorker()+1), rng.Int64N(l.MaxSequence()+1)
					switch rng.IntN(4) {
					case 0:
						w, s = 0, 0
					case 1:
						w, s = l.MaxWorker(), l.MaxSequence()
					}
					id := l.compose(tick, w, s)
					at := l.Decompose(id).Time
					inTime := !at.Before(from) && at.Before(to)
					if in := lo <= id && id <= hi; in != inTime {
						t.Fatalf("[%s, %s) -> [%d, %d]: ID %d (time %s) in range %v, time in range %v",
							from, to, lo, hi, id, at, in, inTime)
					}
				}
				if l.TimeOf(l.Tick(from)).Equal(from) {
					at := from.Add(time.Duration(rng.Int64N(int64(to.Sub(from)))))
					id, err := l.Compose(Parts{Time: at, Worker: l.MaxWorker(), Sequence: 0})
					if err != nil || id < lo || id > hi {
						t.Fatalf("[%s, %s) -> [%d, %d]: ID %d composed at %s (%v) is outside", from, to, lo, hi, id, at, err)
					}
				}
			}
		})
	}
}

// Consecutive ranges tile the key space: hi+1 of one is lo of the next,
// for month boundaries and for boundaries inside a tick alike.
func TestBoundsTile(t *testing.T) {
	for _, l := range boundsLayouts {
		start := l.Epoch.AddDate(1, 0, 0)
		start = time.Date(start.Year(), start.Month(), 1, 0, 0, 0, 0, time.UTC)
		var prev int64 = -1
		for i := range 25 {
			lo, hi, err := l.Bounds(start.AddDate(0, i, 0), start.AddDate(0, i+1, 0))
			if err != nil {
				t.Fatalf("%s month %d: %v", l.Name, i, err)
			}
			if prev >= 0 && lo != prev+1 {
				t.Fatalf("%s month %d: lo %d, previous hi %d", l.Name, i, lo, prev)
			}
			prev = hi
		}
	}
}

func TestBoundsEdges(t *testing.T) {
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name     string
		l        Layout
		from, to time.Time
		lo, hi   int64
		err      error
	}{
		{"whole leaf", Leaf, Leaf.Epoch, Leaf.End(), 0, math.MaxInt64, nil},
		{"whole js53", JS53, JS53.Epoch, JS53.End(), 0, 1<<53 - 1, nil},
		{"first tick", Leaf, Leaf.Epoch, Leaf.Epoch.Add(time.Millisecond), 0, 1<<22 - 1, nil},
		{"last tick", Leaf, Leaf.Horizon(), Leaf.End(), Leaf.MaxTick() << 22, math.MaxInt64, nil},
		{"one uid32 second", UID32, jan, jan.Add(time.Second), UID32.Tick(jan) << 31, UID32.Tick(jan)<<31 | 1<<31 - 1, nil},
		{"inside one uid32 second", UID32, jan.Add(200 * time.Millisecond), jan.Add(700 * time.Millisecond), 0, 0, ErrRange},
		{"round up both ends", UID32, jan.Add(-time.Nanosecond), jan.Add(time.Second + time.Nanosecond),
			UID32.Tick(jan) << 31, (UID32.Tick(jan)+2)<<31 - 1, nil},
		{"empty", Leaf, jan, jan, 0, 0, ErrRange},
		{"reversed", Leaf, jan, jan.Add(-time.Hour), 0, 0, ErrRange},
		{"before the epoch", JS53, JS53.Epoch.Add(-time.Nanosecond), jan, 0, 0, ErrRange},
		{"after the end", Leaf, jan, Leaf.End().Add(time.Nanosecond), 0, 0, ErrRange},
		{"invalid layout", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 10, Unit: time.Millisecond, Epoch: jan}, jan, jan.Add(time.Hour), 0, 0, ErrLayout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi, err := tt.l.Bounds(tt.from, tt.to)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Bounds = %d, %d, %v; want an error wrapping %v", lo, hi, err, tt.err)
				}
				return
			}
			if err != nil || lo != tt.lo || hi != tt.hi {
				t.Fatalf("Bounds = %d, %d, %v; want %d, %d", lo, hi, err, tt.lo, tt.hi)
			}
		})
	}
}

// ceilTick counts exactly where time.Duration would saturate.
func TestCeilTickFar(t *testing.T) {
	l := boundsLayouts[len(boundsLayouts)-1] // 45 bits of seconds: a million years
	for _, tick := range []int64{0, 1, 1 << 40, l.MaxTick()} {
		at := l.TimeOf(tick)
		if got := l.ceilTick(at); got != tick {
			t.Errorf("ceilTick(TimeOf(%d)) = %d", tick, got)
		}
		if got := l.ceilTick(at.Add(time.Nanosecond)); got != tick+1 {
			t.Errorf("ceilTick(TimeOf(%d)+1ns) = %d", tick, got)
		}
	}
}
