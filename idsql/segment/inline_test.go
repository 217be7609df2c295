package segment_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/idsql/idsql/internal/gomodtest"
)

// TestKeyNextInlines pins the fast path BENCHMARKS.md measures: the
// compiler's inlining report (go build -gcflags=-m) must say Key.Next can
// be inlined and that Generator.NextID's calls of it are.
func TestKeyNextInlines(t *testing.T) {
	out := gomodtest.RunIn(t, ".", os.Environ(), "go", "build", "-gcflags=-m", ".")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\S*key\.go:\d+:\d+: can inline \(\*Key\)\.Next$`),
		regexp.MustCompile(`(?m)^\S*generator\.go:\d+:\d+: inlining call to \(\*Key\)\.Next$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("go build -gcflags=-m has no line matching %s:\n%s", want, out)
		}
	}
}
