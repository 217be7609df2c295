package idsql_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/gomodtest"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// quickStart is one database a quick start runs on.
type quickStart struct {
	name   string
	open   func(testing.TB) (*sql.DB, string)
	holder string // extra holder settings for the test server
	env    []string
}

var quickStarts = []quickStart{
	{name: "postgres", open: pgtest.Open},
	// The test server does not flush every commit to disk.
	{name: "mysql", open: mysqltest.Open, holder: ", accept_lazy_commits: true", env: []string{"DRIVER=mysql"}},
}

// buildQuickStart builds program (main.go) in a fresh module against this
// checkout.
func buildQuickStart(t *testing.T, program string) *gomodtest.Module {
	t.Helper()
	m := gomodtest.New(t, "example.com/quickstart", "require github.com/idsql/idsql v0.0.0\n\n")
	m.Write("main.go", program)
	m.Run(gomodtest.Env(), "go", "build", "-o", "quickstart", ".")
	return m
}

// runQuickStart runs a program buildQuickStart built with yaml as its
// idsql.yaml on qs's database, whose DSN it reads from $DATABASE_URL. It
// returns the output.
func runQuickStart(t *testing.T, m *gomodtest.Module, qs quickStart, yaml string) string {
	t.Helper()
	_, dsn := qs.open(t)
	// The holder's line is a flow mapping: its extra settings go before
	// its closing brace.
	m.Write("idsql.yaml", regexp.MustCompile(`(?m)^(holder: \{.*)\}$`).ReplaceAllString(yaml, "${1}"+qs.holder+"}"))
	return m.Run(gomodtest.Env(append([]string{"DATABASE_URL=" + dsn}, qs.env...)...), filepath.Join(m.Dir, "quickstart"))
}

// TestREADMEQuickStart builds the README's quick start programs, as a new
// user copies them, in a fresh module against this checkout and runs them
// on real PostgreSQL and MariaDB: the code blocks are read from README.md
// itself, verbatim, so a README that stops compiling or working fails
// here. Each program creates its tables and migrates; it runs twice, as a
// user runs it again.
func TestREADMEQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program; skipped with -short")
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	yaml := readmeBlock(t, string(readme), "```yaml\n# quick start\n")
	for _, tt := range []struct {
		qs     quickStart
		marker string
		want   string
	}{
		{quickStarts[0], "```go\n// PostgreSQL\n", `^order (\d+) user [1-9]\d* next [1-9]\d* pgx order (\d+) issued for orders\n$`},
		{quickStarts[1], "```go\n// MySQL, MariaDB\n", `^order [1-9]\d* user [1-9]\d* issued for orders\n$`},
	} {
		t.Run(tt.qs.name, func(t *testing.T) {
			m := buildQuickStart(t, readmeBlock(t, string(readme), tt.marker))
			got := runQuickStart(t, m, tt.qs, yaml)
			ids := regexp.MustCompile(tt.want).FindStringSubmatch(got)
			if ids == nil {
				t.Fatalf("the README's quick start printed:\n%s\nwant a line matching %s", got, tt.want)
			}
			if len(ids) == 3 && (ids[1] == ids[2] || ids[1] == "0") {
				t.Fatalf("the pgx order's key %s repeats or follows a zero key %s", ids[2], ids[1])
			}
		})
	}
}

// TestDocQuickStart builds the package documentation's quick start (the
// program in doc.go's "Quick start" section) in a fresh module and runs it
// on PostgreSQL and, with DRIVER=mysql, on MariaDB.
func TestDocQuickStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program; skipped with -short")
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	yaml := docBlock(t, string(doc), "namespace: shop")
	m := buildQuickStart(t, docBlock(t, string(doc), "package main"))
	for _, qs := range quickStarts {
		t.Run(qs.name, func(t *testing.T) {
			got := runQuickStart(t, m, qs, yaml)
			if !regexp.MustCompile(`^order [1-9]\d* user [1-9]\d* issued for orders\n$`).MatchString(got) {
				t.Fatalf("the package doc's quick start printed:\n%s", got)
			}
		})
	}
}

// readmeBlock returns the code block of readme that starts with marker,
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
	_, firstLine, _ := strings.Cut(marker, "\n") // the fence's info string stays out
	return firstLine + block
}

// docBlock returns the indented block of a doc comment whose first line
// is first, without the comment markers and the indentation.
func docBlock(t *testing.T, doc, first string) string {
	t.Helper()
	lines := strings.Split(doc, "\n")
	for i, l := range lines {
		if l != "//\t"+first {
			continue
		}
		var b strings.Builder
		for _, l := range lines[i:] {
			if l != "//" && !strings.HasPrefix(l, "//\t") {
				break
			}
			b.WriteString(strings.TrimPrefix(strings.TrimPrefix(l, "//"), "\t") + "\n")
		}
		// A blank comment line may separate parts of the block; the block
		// ends at the first line of prose after it.
		return b.String()
	}
	t.Fatalf("doc.go has no indented block starting %q", first)
	return ""
}
