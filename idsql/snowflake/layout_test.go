package snowflake

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/clocktest"
)

var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func TestPresets(t *testing.T) {
	for _, name := range []string{"leaf", "uid32", "sony", "sony-widths", "js53", "LEAF"} {
		l, err := Preset(name)
		if err != nil {
			t.Fatalf("Preset(%q): %v", name, err)
		}
		if err := l.ValidateAt(testNow); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	if got := Leaf.Ceiling(); got != 4_096_000 {
		t.Errorf("leaf ceiling = %v, want 4096000", got)
	}
}

// JS53's IDs stay below 2^53 to its horizon, so a JavaScript number holds
// each exactly; its lifetime and rate are what its documentation states.
func TestPresetJS53(t *testing.T) {
	p := Parts{Time: JS53.Horizon(), Worker: JS53.MaxWorker(), Sequence: JS53.MaxSequence()}
	id, err := JS53.Compose(p)
	if err != nil {
		t.Fatal(err)
	}
	if id != 1<<53-1 {
		t.Errorf("largest js53 ID = %d, want 2^53-1", id)
	}
	if y := JS53.Horizon().Year(); y != 2112 {
		t.Errorf("js53 horizon %s, want 2112 as documented", JS53.Horizon())
	}
	if JS53.MaxWorker() != 255 || JS53.Ceiling() != 12_800 {
		t.Errorf("js53: %d workers, %v IDs/s per worker; want 256 and 12,800 as documented", JS53.MaxWorker()+1, JS53.Ceiling())
	}
}

// The retired "sonyflake" preset is refused, naming both successors, so a
// namespace never switches bit order without its operator choosing to.
func TestPresetSonyflakeRetired(t *testing.T) {
	_, err := Preset("sonyflake")
	if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), `"sony-widths"`) || !strings.Contains(err.Error(), `"sony"`) {
		t.Fatalf("Preset(sonyflake) = %v, want ErrLayout naming sony and sony-widths", err)
	}
}

// With WorkerLow the sequence sits above the worker: Compose, Decompose and
// the generator agree on it, and the two orders give different IDs.
func TestWorkerLow(t *testing.T) {
	p := Parts{Time: Sony.TimeOf(1000), Worker: 0x1234, Sequence: 0x56}
	id, err := Sony.Compose(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(1000)<<24 | 0x56<<16 | 0x1234; id != want {
		t.Fatalf("Sony.Compose = %#x, want %#x", id, want)
	}
	if got := Sony.Decompose(id); got != p {
		t.Fatalf("Sony.Decompose = %+v, want %+v", got, p)
	}
	if other, _ := SonyWidths.Compose(p); other == id || SonyWidths.Decompose(other) != p {
		t.Fatalf("SonyWidths.Compose = %#x (Sony's %#x): want another ID that decomposes back", other, id)
	}
	g, err := New(context.Background(), holder.NewStaticLease(0x1234, time.Time{}), Settings{Layout: Sony, Clock: clocktest.New(testNow)})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := g.AppendIDs(context.Background(), nil, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		got := Sony.Decompose(id)
		if got.Worker != 0x1234 || got.Sequence != int64(i) || g.WorkerID() != 0x1234 {
			t.Fatalf("ID %d = %#x decomposes to %+v (generator worker %d), want worker 0x1234, sequence %d", i, id, got, g.WorkerID(), i)
		}
	}
}

func TestPresetUIDRefused(t *testing.T) {
	_, err := Preset("uid")
	if !errors.Is(err, ErrLayout) {
		t.Fatalf("Preset(uid) = %v, want ErrLayout", err)
	}
	for _, want := range []string{"ran out on 2024-11-", "uid32"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	// And the layout itself fails validation today with the date.
	if err := uidDefault.ValidateAt(testNow); err == nil || !strings.Contains(err.Error(), "ran out on 2024-11-") {
		t.Errorf("uid default ValidateAt = %v, want ran out in Nov 2024", err)
	}
}

func TestPresetUnknown(t *testing.T) {
	if _, err := Preset("twitter"); err == nil || !strings.Contains(err.Error(), `"twitter"`) {
		t.Errorf("Preset(twitter) = %v, want an error naming it", err)
	}
}

func TestLayoutValidate(t *testing.T) {
	epoch := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		l    Layout
		want string // substring of the error; "" means valid
	}{
		{"leaf", Leaf, ""},
		{"sum62", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 11, Unit: time.Millisecond, Epoch: epoch}, "= 62, want 63"},
		{"sum64", Layout{TimeBits: 42, WorkerBits: 10, SequenceBits: 12, Unit: time.Millisecond, Epoch: epoch}, "= 64, want 63"},
		{"zero worker", Layout{TimeBits: 51, WorkerBits: 0, SequenceBits: 12, Unit: time.Millisecond, Epoch: epoch}, "at least 1"},
		{"unit too small", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Unit: time.Microsecond, Epoch: epoch}, "unit 1µs out of range"},
		{"unit too large", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Unit: 2 * time.Second, Epoch: epoch}, "out of range 1ms..1s"},
		{"no epoch", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Unit: time.Millisecond}, "epoch is not set"},
		{"future epoch", Layout{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Unit: time.Millisecond, Epoch: testNow.Add(time.Hour)}, "in the future"},
		{"exhausted", Layout{TimeBits: 30, WorkerBits: 20, SequenceBits: 13, Unit: time.Second, Epoch: testNow.AddDate(-40, 0, 0)}, "ran out on"},
		{"within a year", Layout{TimeBits: 30, WorkerBits: 20, SequenceBits: 13, Unit: time.Second, Epoch: testNow.Add(-(1<<30 - 100*24*3600) * time.Second)}, "less than a year from now"},
		{"huge time bits", Layout{TimeBits: 51, WorkerBits: 4, SequenceBits: 8, Unit: time.Second, Epoch: epoch}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.l.ValidateAt(testNow)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("ValidateAt: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, ErrLayout) {
				t.Fatalf("ValidateAt = %v, want ErrLayout containing %q", err, tt.want)
			}
		})
	}
}

func TestHorizon(t *testing.T) {
	// Leaf's 41 bits of milliseconds from 2010-11-04 last until 2080-07-10.
	if got := Leaf.Horizon().UTC().Format(time.DateOnly); got != "2080-07-10" {
		t.Errorf("leaf horizon = %s, want 2080-07-10", got)
	}
	// A horizon beyond time.Duration's 292 years still computes.
	l := Layout{TimeBits: 51, WorkerBits: 4, SequenceBits: 8, Unit: time.Second, Epoch: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
	if y := l.Horizon().Year(); y < 70_000_000 {
		t.Errorf("51-bit seconds horizon year = %d, want beyond 70 million", y)
	}
}

func TestComposeDecomposeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, l := range []Layout{Leaf, UID32, Sony, SonyWidths} {
		for range 100_000 {
			tick := r.Int64N(l.Tick(testNow) + 1)
			p := Parts{Time: l.TimeOf(tick), Worker: r.Int64N(l.MaxWorker() + 1), Sequence: r.Int64N(l.MaxSequence() + 1)}
			id, err := l.Compose(p)
			if err != nil {
				t.Fatalf("%s: Compose(%+v): %v", l.Name, p, err)
			}
			if id < 0 {
				t.Fatalf("%s: Compose(%+v) = %d, negative", l.Name, p, id)
			}
			got, err := l.Decode(id, testNow, 0)
			if err != nil {
				t.Fatalf("%s: Decode(%d): %v", l.Name, id, err)
			}
			if !got.Time.Equal(p.Time) || got.Worker != p.Worker || got.Sequence != p.Sequence {
				t.Fatalf("%s: round trip %+v -> %d -> %+v", l.Name, p, id, got)
			}
		}
	}
}

func TestComposeRejects(t *testing.T) {
	tests := []struct {
		p    Parts
		want string
	}{
		{Parts{Time: Leaf.Epoch.Add(-time.Millisecond)}, "outside"},
		{Parts{Time: Leaf.Horizon().Add(time.Millisecond)}, "outside"},
		{Parts{Time: testNow, Worker: 1024}, "worker 1024 out of range 0..1023"},
		{Parts{Time: testNow, Worker: -1}, "worker -1"},
		{Parts{Time: testNow, Sequence: 4096}, "sequence 4096 out of range 0..4095"},
	}
	for _, tt := range tests {
		if _, err := Leaf.Compose(tt.p); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compose(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	future, _ := Leaf.Compose(Parts{Time: testNow.Add(time.Hour), Worker: 1})
	tests := []struct {
		id   int64
		want string
	}{
		{0, "0 is not positive"},
		{-5, "-5 is not positive"},
		{future, "after"},
		{1<<62 | 1, "another layout"},
	}
	for _, tt := range tests {
		_, err := Leaf.Decode(tt.id, testNow, time.Minute)
		if !errors.Is(err, ErrDecode) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Decode(%d) = %v, want ErrDecode containing %q", tt.id, err, tt.want)
		}
	}
	// Within tolerance is accepted.
	if _, err := Leaf.Decode(future, testNow, 2*time.Hour); err != nil {
		t.Errorf("Decode within tolerance: %v", err)
	}
}

// Twitter's documented example ID decodes to its known time.
func TestDecodeTwitterID(t *testing.T) {
	p, err := Leaf.Decode(1541815603606036480, testNow, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Time.UTC().Format(time.RFC3339Nano); got != "2022-06-28T16:07:40.105Z" {
		t.Errorf("time = %s", got)
	}
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []int64{0, 1, -1, 1541815603606036480, 1 << 62, 7139826715123912704, 1<<63 - 1} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id int64) {
		for _, l := range []Layout{Leaf, UID32, Sony, SonyWidths} {
			p, err := l.Decode(id, testNow, time.Minute)
			if err != nil {
				if !errors.Is(err, ErrDecode) {
					t.Fatalf("%s: Decode(%d) error %v does not wrap ErrDecode", l.Name, id, err)
				}
				continue
			}
			back, err := l.Compose(p)
			if err != nil || back != id {
				t.Fatalf("%s: Decode(%d) = %+v, Compose = %d, %v", l.Name, id, p, back, err)
			}
		}
	})
}
