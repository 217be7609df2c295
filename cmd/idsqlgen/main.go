// Command idsqlgen writes typed ID helpers for the tables of an idsql.yaml,
// for go generate:
//
//	go get -tool github.com/idsql/idsql/cmd/idsqlgen    # once: a tool directive in go.mod
//
//	//go:generate go tool idsqlgen -config idsql.yaml -pkg models -out idsql_gen.go
//
// Flags:
//
//	-config  the configuration file (default idsql.yaml)
//	-pkg     the generated file's package (default: $GOPACKAGE, set by go generate)
//	-out     the file to write (default idsql_gen.go)
//
// It exits 2 on a usage error and 1 when generation fails; a configuration
// error names the file, line and field. See package gen for what is
// generated.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/idsql/idsql/gen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Getenv("GOPACKAGE"), os.Stderr))
}

// run is the command: args without the program name, the package go
// generate runs in (or ""), and where messages go. It returns the exit code.
func run(args []string, goPackage string, stderr io.Writer) int {
	fs := flag.NewFlagSet("idsqlgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	config := fs.String("config", "idsql.yaml", "the idsql configuration `file`")
	pkg := fs.String("pkg", goPackage, "the generated file's package `name` (default: $GOPACKAGE)")
	out := fs.String("out", "idsql_gen.go", "the `file` to write")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: idsqlgen [-config idsql.yaml] [-pkg name] [-out idsql_gen.go]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "idsqlgen: unexpected arguments %q\n", fs.Args())
		fs.Usage()
		return 2
	}
	if *pkg == "" {
		fmt.Fprintln(stderr, "idsqlgen: -pkg is required outside go generate")
		fs.Usage()
		return 2
	}
	if err := gen.WriteFile(*config, *out, gen.Options{Package: *pkg}); err != nil {
		fmt.Fprintf(stderr, "idsqlgen: %v\n", err)
		return 1
	}
	return 0
}
