package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

func runVersion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("version", "", "Prints idsql's version and how it was built: module version, VCS revision\n"+
		"and time (when built from a checkout), Go version and platform. Also: idsql --version.", stderr)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return fmt.Errorf("no build information in this binary (built without module support?)")
	}
	fmt.Fprint(stdout, versionText(bi))
	return nil
}

// versionText renders build information: the first line is "idsql
// VERSION", the rest one "key  value" line each.
func versionText(bi *debug.BuildInfo) string {
	var b strings.Builder
	version := bi.Main.Version
	if version == "" {
		version = "(devel)"
	}
	fmt.Fprintf(&b, "idsql %s\n", version)
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "  %-9s %s\n", k, v)
		}
	}
	line("module", bi.Main.Path)
	if bi.Main.Sum != "" {
		line("sum", bi.Main.Sum)
	}
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	if rev := s["vcs.revision"]; rev != "" {
		if s["vcs.modified"] == "true" {
			rev += " (modified)"
		}
		line("commit", rev)
		line("time", s["vcs.time"])
	} else {
		line("commit", "unknown (built without VCS information)")
	}
	line("go", bi.GoVersion)
	if s["GOOS"] != "" {
		line("platform", s["GOOS"]+"/"+s["GOARCH"])
	}
	if cgo, ok := s["CGO_ENABLED"]; ok {
		line("cgo", map[string]string{"0": "off", "1": "on"}[cgo])
	}
	return b.String()
}
