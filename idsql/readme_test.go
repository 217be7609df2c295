package idsql_test

import (
	"database/sql"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/gomodtest"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestREADMEQuickStart builds the README's quick start, as a new user
// copies it, in a fresh module against this checkout and runs it on real
// PostgreSQL and MariaDB: the code blocks are read from README.md itself
// (only the DSN is replaced, and each error is checked), so a README that
// stops compiling or working fails here.
func TestREADMEQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program; skipped with -short")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	either := readmeBlock(t, string(readme), "Then, on either:\n\n```go\n")
	for _, tt := range []struct {
		name, marker string
		open         func(testing.TB) (*sql.DB, string)
		schema       string
		holder       string // extra holder settings for the test server
	}{
		{"postgres", "```go\n// PostgreSQL\n", pgtest.Open,
			"CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint, total numeric); CREATE TABLE users (id bigint PRIMARY KEY, name text)", ""},
		{"mysql", "```go\n// MySQL, MariaDB\n", mysqltest.Open,
			"CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint, total decimal(10,2)); CREATE TABLE users (id bigint PRIMARY KEY, name text)",
			// The test server does not flush every commit to disk.
			", accept_lazy_commits: true"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			raw, dsn := tt.open(t)
			for _, stmt := range strings.Split(tt.schema, "; ") {
				if _, err := raw.Exec(stmt); err != nil {
					t.Fatal(err)
				}
			}
			block := readmeBlock(t, string(readme), tt.marker)
			imports, body, ok := strings.Cut(block, "\n)\n")
			if !ok || !strings.HasPrefix(imports, "import (\n") {
				t.Fatalf("the README's %s block does not start with an import block:\n%s", tt.name, block)
			}
			m := gomodtest.New(t, "example.com/quickstart", "require github.com/idsql/idsql v0.0.0\n\n")
			m.Write("idsql.yaml", `namespace: quickstart
holder: {kind: local, instance: app, workers: {"orders@app": 1}`+tt.holder+`}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 100}
`)
			m.Write("main.go", quickStartProgram(strings.TrimPrefix(imports, "import (\n"), body+"\n"+either))
			got := m.Run(gomodtest.Env("QUICKSTART_DSN="+dsn), "go", "run", ".")
			if !strings.Contains(got, "PASS orders users") {
				t.Fatalf("the README's quick start printed:\n%s", got)
			}
		})
	}
}

// readmeBlock returns the Go code block of readme that starts with marker,
// without the fences.
func readmeBlock(t *testing.T, readme, marker string) string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, marker)
	if !ok {
		t.Fatalf("README.md has no block starting %q", marker)
	}
	block, _, ok := strings.Cut(rest, "```\n")
	if !ok {
		t.Fatalf("README.md: the block starting %q does not end", marker)
	}
	return block
}

// quickStartProgram wraps the README's statements in a main function that
// checks every error, reads the DSN from $QUICKSTART_DSN and prints what
// the statements produced.
func quickStartProgram(imports, body string) string {
	var b strings.Builder
	b.WriteString("package main\n\nimport (\n\t\"context\"\n\t\"fmt\"\n\t\"os\"\n\n" + imports + "\n)\n\n")
	b.WriteString("func check(err error) {\n\tif err != nil {\n\t\tfmt.Println(\"FAIL:\", err)\n\t\tos.Exit(1)\n\t}\n}\n\n")
	b.WriteString("func main() {\n\tctx := context.Background()\n")
	dsn := regexp.MustCompile(`idsql\.Open\(("\w+"), "[^"]*"`)
	for _, line := range strings.Split(body, "\n") {
		line = dsn.ReplaceAllString(line, `idsql.Open($1, os.Getenv("QUICKSTART_DSN")`)
		b.WriteString("\t" + line + "\n")
		if strings.Contains(line, "err :=") || strings.Contains(line, "err =") {
			b.WriteString("\tcheck(err)\n")
		}
	}
	b.WriteString("\tif id <= 0 || next <= 0 || u.ID <= 0 || len(origins) != 1 {\n\t\tfmt.Println(\"FAIL:\", id, next, u.ID, origins)\n\t\tos.Exit(1)\n\t}\n")
	b.WriteString("\tfmt.Println(\"PASS\", origins[0].Table, \"users\")\n}\n")
	return b.String()
}
