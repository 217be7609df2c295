package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, stderr := runCmd(t, args...)
		if code != 0 || !strings.HasPrefix(out, "idsql ") || !strings.Contains(out, "module    github.com/idsql/idsql\n") ||
			!strings.Contains(out, "go        go1.") {
			t.Errorf("idsql %s: exit %d\n%s%s", args[0], code, out, stderr)
		}
	}
	if code, _, stderr := runCmd(t, "version", "extra"); code != 2 || !strings.Contains(stderr, "unexpected argument") {
		t.Errorf("version extra: exit %d, %q", code, stderr)
	}
	if _, _, stderr := runCmd(t, "--help"); !strings.Contains(stderr, "  version ") {
		t.Errorf("usage does not list version:\n%s", stderr)
	}
}

func TestVersionText(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"release from the module proxy", debug.BuildInfo{
			GoVersion: "go1.26.0",
			Main:      debug.Module{Path: "github.com/idsql/idsql", Version: "v1.2.3", Sum: "h1:abc="},
			Settings: []debug.BuildSetting{
				{Key: "CGO_ENABLED", Value: "0"}, {Key: "GOARCH", Value: "arm64"}, {Key: "GOOS", Value: "linux"},
			},
		}, `idsql v1.2.3
  module    github.com/idsql/idsql
  sum       h1:abc=
  commit    unknown (built without VCS information)
  go        go1.26.0
  platform  linux/arm64
  cgo       off
`},
		{"checkout with local changes", debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Path: "github.com/idsql/idsql", Version: "v0.0.0-20261123120000-0123456789ab+dirty"},
			Settings: []debug.BuildSetting{
				{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
				{Key: "vcs.time", Value: "2026-11-23T12:00:00Z"}, {Key: "vcs.modified", Value: "true"},
				{Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}, {Key: "CGO_ENABLED", Value: "1"},
			},
		}, `idsql v0.0.0-20261123120000-0123456789ab+dirty
  module    github.com/idsql/idsql
  commit    0123456789abcdef0123456789abcdef01234567 (modified)
  time      2026-11-23T12:00:00Z
  go        go1.26.8
  platform  linux/amd64
  cgo       on
`},
		{"go run", debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/idsql/idsql"}}, `idsql (devel)
  module    github.com/idsql/idsql
  commit    unknown (built without VCS information)
  go        go1.26.8
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionText(&tt.bi); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}
