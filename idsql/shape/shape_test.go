package shape_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/idsql/idsql/idsql/shape"
)

// funcs returns shapes over spaces a table can have: a leaf snowflake
// key's time field in 63 bits, a JS53 key's in 53, whole segment keys in
// 63 and in 53 bits (max_id 2^53-1), and shard shapes.
func funcs(t testing.TB) map[string]shape.Func {
	t.Helper()
	out := map[string]shape.Func{}
	for name, c := range map[string]struct {
		s  shape.Shape
		sp shape.Space
	}{
		"ordered":           {shape.Shape{}, shape.Space{Bits: 63}},
		"reverse/leaf-time": {shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41}},
		"reverse/js53-time": {shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 53, Low: 15, Width: 38}},
		"reverse/segment63": {shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63}},
		"reverse/segment53": {shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 53}},
		"shard1/63":         {shape.Shape{Spread: shape.Shard, Bits: 1}, shape.Space{Bits: 63}},
		"shard6/63":         {shape.Shape{Spread: shape.Shard, Bits: 6}, shape.Space{Bits: 63}},
		"shard16/53":        {shape.Shape{Spread: shape.Shard, Bits: 16}, shape.Space{Bits: 53}},
		"shard3/4":          {shape.Shape{Spread: shape.Shard, Bits: 3}, shape.Space{Bits: 4}},
		"reverse/4":         {shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 4}},
	} {
		f, err := shape.New(c.s, c.sp)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = f
	}
	return out
}

// samples returns keys to check f on: the edges of its range and random
// keys of every bit length.
func samples(f shape.Func, r *rand.Rand) []int64 {
	ks := []int64{1, 2, 3, f.MaxKey(), f.MaxKey() - 1, f.MaxKey() / 2}
	for n := 1; n < 63; n++ {
		hi := min(int64(1)<<n, f.MaxKey())
		for range 50 {
			ks = append(ks, 1+r.Int64N(hi))
		}
	}
	return ks
}

func TestRoundTripAndRange(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, f := range funcs(t) {
		top := int64(1)<<f.Space().Bits - 1
		for _, k := range samples(f, r) {
			if k < 1 || k > f.MaxKey() {
				continue
			}
			s, err := f.Apply(k)
			if err != nil {
				t.Fatalf("%s: Apply(%d): %v", name, k, err)
			}
			if s < 1 || s > top {
				t.Fatalf("%s: Apply(%d) = %d, outside 1..%d", name, k, s, top)
			}
			back, err := f.Undo(s)
			if err != nil || back != k {
				t.Fatalf("%s: Undo(Apply(%d)=%d) = %d, %v", name, k, s, back, err)
			}
		}
	}
}

// TestBijectiveSmall checks every key of small spaces: Apply is injective
// and Undo accepts exactly its image.
func TestBijectiveSmall(t *testing.T) {
	for name, f := range funcs(t) {
		if f.Space().Bits > 16 {
			continue
		}
		image := map[int64]int64{}
		for k := int64(1); k <= f.MaxKey(); k++ {
			s, err := f.Apply(k)
			if err != nil {
				t.Fatal(err)
			}
			if other, dup := image[s]; dup {
				t.Fatalf("%s: Apply(%d) = Apply(%d) = %d", name, k, other, s)
			}
			image[s] = k
		}
		for s := int64(-1); s <= int64(1)<<f.Space().Bits; s++ {
			k, err := f.Undo(s)
			if want, ok := image[s]; ok != (err == nil) || (ok && k != want) {
				t.Fatalf("%s: Undo(%d) = %d, %v; image has %d, %v", name, s, k, err, want, ok)
			}
		}
	}
}

// TestInjectiveSamples checks that 262,144 keys of each shape, runs of
// consecutive keys as generators make them, shape to distinct keys.
func TestInjectiveSamples(t *testing.T) {
	for name, f := range funcs(t) {
		if f.MaxKey() < 1<<18 {
			continue
		}
		seen := make(map[int64]struct{}, 1<<18)
		start := f.MaxKey()/3 + 1
		for k := start; k < start+1<<18; k++ {
			s, _ := f.Apply(k)
			if _, dup := seen[s]; dup {
				t.Fatalf("%s: two keys shape to %d", name, s)
			}
			seen[s] = struct{}{}
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		s  shape.Shape
		sp shape.Space
	}{
		{shape.Shape{Spread: "scatter"}, shape.Space{Bits: 63}},
		{shape.Shape{Spread: shape.Shard}, shape.Space{Bits: 63}},
		{shape.Shape{Spread: shape.Shard, Bits: 17}, shape.Space{Bits: 63}},
		{shape.Shape{Spread: shape.Reverse, Bits: 3}, shape.Space{Bits: 63}},
		{shape.Shape{Spread: shape.Shard, Bits: 8}, shape.Space{Bits: 8}},
		{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 64}},
		{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 30, Width: 41}},
	} {
		if _, err := shape.New(c.s, c.sp); !errors.Is(err, shape.ErrShape) {
			t.Errorf("New(%v, %+v) = %v; want ErrShape", c.s, c.sp, err)
		}
	}
	f, _ := shape.New(shape.Shape{Spread: shape.Shard, Bits: 4}, shape.Space{Bits: 63})
	for _, k := range []int64{0, -1, int64(1) << 59, math.MaxInt64} {
		if _, err := f.Apply(k); !errors.Is(err, shape.ErrRange) {
			t.Errorf("Apply(%d) = %v; want ErrRange", k, err)
		}
	}
	for _, k := range []int64{0, -5, 1} { // 1 has hash bits 0, and Hash(1, 4) is not 0
		if shape.Hash(1, 4) == 0 {
			t.Fatal("pick another sample")
		}
		if _, err := f.Undo(k); !errors.Is(err, shape.ErrNotShaped) {
			t.Errorf("Undo(%d) = %v; want ErrNotShaped", k, err)
		}
	}
}

func TestString(t *testing.T) {
	for s, want := range map[shape.Shape]string{
		{}:                              "ordered",
		{Spread: shape.Ordered}:         "ordered",
		{Spread: shape.Reverse}:         "{spread: reverse}",
		{Spread: shape.Hashed, Bits: 6}: "{spread: hashed, bits: 6}",
		{Spread: shape.Shard, Bits: 6}:  "{spread: hashed, bits: 6}",
	} {
		if got := s.String(); got != want {
			t.Errorf("%#v.String() = %q; want %q", s, got, want)
		}
	}
}

// Tag is what records hold: a hashed shape keeps the spread's first name,
// so that every record written before the rename still matches.
func TestTag(t *testing.T) {
	for s, want := range map[shape.Shape]string{
		{}:                              "ordered",
		{Spread: shape.Reverse}:         "{spread: reverse}",
		{Spread: shape.Hashed, Bits: 6}: "{spread: shard, bits: 6}",
		{Spread: shape.Shard, Bits: 6}:  "{spread: shard, bits: 6}",
	} {
		if got := s.Tag(); got != want {
			t.Errorf("%#v.Tag() = %q; want %q", s, got, want)
		}
	}
}

// FuzzShapeRoundTrip checks, for any key and any shape a table can have,
// that Undo(Apply(k)) == k with the shaped key positive and in the space,
// and that any value Undo accepts comes back from Apply.
func FuzzShapeRoundTrip(f *testing.F) {
	f.Add(int64(1), uint8(1), uint8(63), uint8(22), uint8(41), uint8(0))
	f.Add(int64(7139826715123912704), uint8(1), uint8(63), uint8(22), uint8(41), uint8(0))
	f.Add(int64(12345), uint8(2), uint8(63), uint8(0), uint8(0), uint8(6))
	f.Add(int64(-3), uint8(2), uint8(53), uint8(0), uint8(0), uint8(16))
	f.Fuzz(func(t *testing.T, k int64, spread, spaceBits, low, width, bits uint8) {
		s := shape.Shape{Spread: []shape.Spread{shape.Ordered, shape.Reverse, shape.Shard}[spread%3]}
		if s.Spread == shape.Shard {
			s.Bits = int(bits%shape.MaxShardBits) + 1
		}
		sp := shape.Space{Bits: int(spaceBits%62) + 2, Low: int(low % 63), Width: int(width % 64)}
		fn, err := shape.New(s, sp)
		if err != nil {
			return
		}
		top := int64(1)<<fn.Space().Bits - 1
		if v, err := fn.Apply(k); err == nil {
			if k < 1 || k > fn.MaxKey() || v < 1 || v > top {
				t.Fatalf("Apply(%d) = %d for %s in %+v", k, v, s, fn.Space())
			}
			if back, err := fn.Undo(v); err != nil || back != k {
				t.Fatalf("Undo(Apply(%d) = %d) = %d, %v", k, v, back, err)
			}
		} else if k >= 1 && k <= fn.MaxKey() {
			t.Fatalf("Apply(%d): %v", k, err)
		}
		if raw, err := fn.Undo(k); err == nil {
			if again, err := fn.Apply(raw); err != nil || again != k {
				t.Fatalf("Apply(Undo(%d) = %d) = %d, %v", k, raw, again, err)
			}
		}
	})
}
