package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/gomodtest"
)

// The flow the README documents, in a fresh module of a user's: go get
// -tool, go generate with "go tool idsqlgen", go build, run. idsql comes
// from this checkout (a replace directive standing for a release); every
// other module comes from the module cache, which "go mod download" in the
// checkout fills first through GOPROXY as the environment has it.
//
// The module's go commands run with GOPROXY=off (gomodtest.Env): to find
// the module of github.com/idsql/idsql/cmd/idsqlgen, go get asks the proxy
// about each prefix of the path, and for these unpublished paths the proxy
// of the project's machine answers 403 "This module version is not
// available" (not 404 or 410), which go get treats as fatal even though
// the replace provides the package. The build and module caches are the
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

	"github.com/idsql/idsql/idsql/keyset"
)

func main() {
	cfg, err := keyset.Load("idsql.yaml")
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
	m := gomodtest.New(t, "example.com/shopapp", "")
	m.Write("idsql.yaml", toolConfig)
	m.Write("main.go", strings.Replace(toolMain, "DIRECTIVE", "//go:"+"generate go tool idsqlgen -config idsql.yaml -out idsql_gen.go", 1))
	gomodtest.RunIn(t, m.Root, append(os.Environ(), "GOWORK=off"), "go", "mod", "download")

	env := gomodtest.Env()
	m.Run(env, "go", "get", "-tool", "github.com/idsql/idsql/cmd/idsqlgen")
	mod, err := os.ReadFile(filepath.Join(m.Dir, "go.mod"))
	if err != nil || !bytes.Contains(mod, []byte("tool github.com/idsql/idsql/cmd/idsqlgen")) {
		t.Fatalf("go.mod after go get -tool lacks the tool directive (%v):\n%s", err, mod)
	}
	m.Run(env, "go", "generate", "./...")
	gen, err := os.ReadFile(filepath.Join(m.Dir, "idsql_gen.go"))
	if err != nil || !bytes.Contains(gen, []byte("package main")) || !bytes.Contains(gen, []byte("type OrderID int64")) {
		t.Fatalf("go generate wrote (%v):\n%s", err, gen)
	}
	m.Run(env, "go", "build", "-o", "shopapp", ".")
	got := strings.TrimSpace(m.Run(env, filepath.Join(m.Dir, "shopapp")))
	if want := `orders "42" users <nil>`; got != want {
		t.Fatalf("the built program printed %q, want %q", got, want)
	}
}
