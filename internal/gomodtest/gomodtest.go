// Package gomodtest makes throw-away Go modules that build against this
// checkout of idsql, for tests that run the go command as a user's module
// would (go get, go generate, go build, go run).
//
// A module's go.mod replaces github.com/idsql/idsql with the checkout, and
// its go.sum starts as the checkout's: the hashes the go command would
// record for the same dependencies, already verified, so that it need not
// ask the checksum database about modules it takes from the module cache.
// Run the go command with GOFLAGS=-mod=mod and, where it would look
// idsql itself up, GOPROXY=off (see Env): idsql's paths are not on any
// proxy, the replace directive provides them.
package gomodtest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Module is a temporary module directory.
type Module struct {
	Dir  string // the module's directory, removed when the test ends
	Root string // the idsql checkout the module builds against
	t    testing.TB
}

// New creates a module called path whose go.mod has the requirements in
// require (go.mod lines, may be empty) and the replace directive, for a
// test running in a package directory of the checkout.
func New(t testing.TB, path, require string) *Module {
	t.Helper()
	root, err := checkoutRoot()
	if err != nil {
		t.Fatalf("gomodtest: %v", err)
	}
	m := &Module{Dir: t.TempDir(), Root: root, t: t}
	m.Write("go.mod", "module "+path+"\n\ngo 1.26.0\n\n"+require+"replace github.com/idsql/idsql => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatalf("gomodtest: %v", err)
	}
	m.Write("go.sum", string(sum))
	return m
}

// checkoutRoot is the nearest directory above the working directory whose
// go.mod declares github.com/idsql/idsql.
func checkoutRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/idsql/idsql\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
}

// Write writes a file of the module.
func (m *Module) Write(name, content string) {
	m.t.Helper()
	if err := os.WriteFile(filepath.Join(m.Dir, name), []byte(content), 0o644); err != nil {
		m.t.Fatalf("gomodtest: %v", err)
	}
}

// Env is the environment for the go command in a module: the test's,
// with GOFLAGS=-mod=mod, GOWORK=off and GOPROXY=off, and extra.
func Env(extra ...string) []string {
	return append(append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOPROXY=off"), extra...)
}

// Run runs a command in the module's directory with env and returns its
// output, ending the test with the output when it fails.
func (m *Module) Run(env []string, name string, args ...string) string {
	m.t.Helper()
	return RunIn(m.t, m.Dir, env, name, args...)
}

// RunIn runs a command in dir with env and returns its output (stdout and
// stderr), ending the test with the output when it fails.
func RunIn(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}
