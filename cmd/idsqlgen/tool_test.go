package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The flow the README documents, in a fresh module of a user's: go get
// -tool, go generate with "go tool idsqlgen", go build, run. idsql comes
// from this checkout (a replace directive standing for a release); every
// other module comes from the module cache, which "go mod download" in the
// checkout fills first through GOPROXY as the environment has it.
//
// go get itself runs with GOPROXY=off: to find the module of
// github.com/idsql/idsql/cmd/idsqlgen it asks the proxy about each prefix
// of the path, and for these unpublished paths the proxy of the
// project's machine answers 403 "This module version is not available"
// (not 404 or 410), which go get treats as fatal even though the replace
// provides the package. For the same reason the new module starts with
// this checkout's go.sum: the hashes go would record, already verified,
// where it would otherwise ask the checksum database about modules it
// takes from the cache. The build and module caches are the
// environment's, so after the first run this takes seconds.

const toolConfig = `namespace: shop
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 100}
`

// toolMain is the user's program; its directive line is spliced in by
// the test, since go generate in this repository would run a line
// starting with the directive even inside a string.
const toolMain = `package main

DIRECTIVE

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/idsql/idsql/idsql"
)

func main() {
	cfg, err := idsql.Load("idsql.yaml")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	id, err := ParseOrderID("42")
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	js, _ := json.Marshal(id)
	fmt.Println(id.Table(), string(js), UserID(7).Table(), CheckConfig(cfg))
}
`

func TestGoGetToolFlow(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed for this test: %v", err)
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/shopapp\n\ngo 1.26\n\nreplace github.com/idsql/idsql => "+root+"\n")
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", string(sum))
	write("idsql.yaml", toolConfig)
	write("main.go", strings.Replace(toolMain, "DIRECTIVE", "//go:"+"generate go tool idsqlgen -config idsql.yaml -out idsql_gen.go", 1))

	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	runIn(t, root, append(os.Environ(), "GOWORK=off"), goBin, "mod", "download")
	runIn(t, dir, append(env, "GOPROXY=off"), goBin, "get", "-tool", "github.com/idsql/idsql/cmd/idsqlgen")
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("tool github.com/idsql/idsql/cmd/idsqlgen")) {
		t.Fatalf("go.mod after go get -tool lacks the tool directive (%v):\n%s", err, mod)
	}
	runIn(t, dir, env, goBin, "generate", "./...")
	gen, err := os.ReadFile(filepath.Join(dir, "idsql_gen.go"))
	if err != nil || !bytes.Contains(gen, []byte("package main")) || !bytes.Contains(gen, []byte("type OrderID int64")) {
		t.Fatalf("go generate wrote (%v):\n%s", err, gen)
	}
	runIn(t, dir, env, goBin, "build", "-o", "shopapp", ".")
	got := strings.TrimSpace(runIn(t, dir, env, filepath.Join(dir, "shopapp")))
	if want := `orders "42" users <nil>`; got != want {
		t.Fatalf("the built program printed %q, want %q", got, want)
	}
}

// runIn runs a command in dir with env and returns its output, failing
// the test with the output when it fails.
func runIn(t *testing.T, dir string, env []string, name string, args ...string) string {
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
