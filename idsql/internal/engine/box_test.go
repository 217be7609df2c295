package engine

import (
	"math"
	"runtime"
	"testing"
)

// TestBoxer: a boxed key is an int64 equal to the key, slots are never
// reused (values kept across blocks and a garbage collection keep their
// keys), and boxing allocates once per block, not per key.
func TestBoxer(t *testing.T) {
	var b Boxer
	var kept []any
	for i := range int64(3*boxBlock + 5) {
		id := math.MaxInt64 - i
		v := b.Box(id)
		if got, ok := v.(int64); !ok || got != id {
			t.Fatalf("Box(%d) = %#v", id, v)
		}
		kept = append(kept, v)
	}
	runtime.GC()
	for i, v := range kept {
		if want := math.MaxInt64 - int64(i); v.(int64) != want {
			t.Fatalf("kept value %d = %v, want %d", i, v, want)
		}
	}
	allocs := testing.AllocsPerRun(10, func() {
		for range boxBlock {
			_ = b.Box(1 << 50)
		}
	})
	if allocs > 1 {
		t.Errorf("%v allocations per %d keys, want at most 1 (the block)", allocs, boxBlock)
	}
}
