package holderkind

import (
	"testing"

	"github.com/idsql/idsql/holder"
)

// A kind's own registration takes precedence over a fallback one
// (holder/postgres's of kind mysql), whichever registers first, and
// neither panics.
func TestFallbackHolderGivesWay(t *testing.T) {
	newH := func(Settings) (holder.Holder, error) { return holder.Fixed(1), nil }
	RegisterFallback("test-fallback-first", Kind{Modes: []string{"old"}, New: newH})
	Register("test-fallback-first", Kind{Modes: []string{"own"}, New: newH})
	Register("test-fallback-last", Kind{Modes: []string{"own"}, New: newH})
	RegisterFallback("test-fallback-last", Kind{Modes: []string{"old"}, New: newH})
	RegisterFallback("test-fallback-only", Kind{Modes: []string{"old"}, New: newH})
	for name, want := range map[string]string{"test-fallback-first": "own", "test-fallback-last": "own", "test-fallback-only": "old"} {
		h, err := Lookup(name)
		if err != nil || len(h.Modes) != 1 || h.Modes[0] != want {
			t.Errorf("Lookup(%s) = %v, %v; want the %s registration", name, h.Modes, err, want)
		}
	}
}
