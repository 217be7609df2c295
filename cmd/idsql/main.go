package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"

	// Every holder, segment store and key buffer, so that any
	// configuration works.
	_ "github.com/idsql/idsql/holder/etcd"
	_ "github.com/idsql/idsql/holder/workertable" // holder.kind: postgres, mysql
	_ "github.com/idsql/idsql/holder/zookeeper"
	_ "github.com/idsql/idsql/idsql/segment/mysqlstore"
	_ "github.com/idsql/idsql/idsql/segment/redisqueue"
	_ "github.com/idsql/idsql/idsql/segment/sqlitestore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// command is one subcommand.
type command struct {
	name    string
	summary string
	hidden  bool
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{name: "demo", summary: "tour idsql on an embedded SQLite file (no server needed)", run: runDemo},
		{name: "decode", summary: "take snowflake IDs apart: time, worker, sequence", run: runDecode},
		{name: "lookup", summary: "trace IDs back to the table that issued them", run: runLookup},
		{name: "migrate", summary: "create idsql's tables and the segment keys of configured tables", run: runMigrate},
		{name: "sql", summary: "print the SQL of the database-side key defaults, for a DBA", run: runSQL},
		{name: "bounds", summary: "print the key range of a time range, for WHERE id BETWEEN", run: runBounds},
		{name: "partitions", summary: "print PostgreSQL partitions of a snowflake table by month", run: runPartitions},
		{name: "workers", summary: "list the worker leases of a namespace", run: runWorkers},
		{name: "segments", summary: "list the segment keys with their counters and steps", run: runSegments},
		{name: "serve", summary: "run the HTTP ID server (Leaf-compatible API, monitor page)", run: runServe},
		{name: "version", summary: "print the version and how this binary was built", run: runVersion},
		{name: "trivial", summary: "benchmark baseline: an HTTP server answering a constant", hidden: true, run: runTrivial},
	}
}

// usageError is a command-line mistake: exit code 2. printed means the
// flag package has shown it with the usage already.
type usageError struct {
	msg     string
	printed bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		printUsage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		var ue *usageError
		switch {
		case err == nil, errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, &ue) && ue.printed:
			return 2
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "idsql %s: %s\nRun 'idsql %s --help' for usage.\n", c.name, ue.msg, c.name)
			return 2
		default:
			fmt.Fprintf(stderr, "idsql %s: %s\n", c.name, errText(migrateHint(err, "")))
			if errors.Is(err, registry.ErrNotDurable) {
				fmt.Fprintf(stderr, "The MySQL server may lose a committed worker lease in a crash (innodb_flush_log_at_trx_commit\n"+
					"or sync_binlog is not 1). Fix the server, or add %s=true to the MySQL DSN to accept the risk.\n", lazyParam)
			}
			if errors.Is(err, registry.ErrMultiWriter) || errors.Is(err, segment.ErrMultiWriter) {
				fmt.Fprintf(stderr, "The server is a Galera node: send every idsql process's writes to one node at a time, and add\n"+
					"%s=true to the MySQL DSN to say so.\n", oneWriterParam)
			}
			return 1
		}
	}
	fmt.Fprintf(stderr, "idsql: unknown command %q\n\n", args[0])
	printUsage(stderr)
	return 2
}

// errText is err's message for a line that starts "idsql COMMAND: ":
// without the "idsql: " most of idsql's errors start with, which would
// repeat it ("idsql decode: idsql: config: ...").
func errText(err error) string {
	return strings.TrimPrefix(err.Error(), "idsql: ")
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, "idsql gives SQL tables distributed 64-bit primary keys.\n\nUsage: idsql COMMAND [flags] [args]\n\nCommands:\n")
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprint(w, "\nRun 'idsql COMMAND --help' for a command's flags. Start with: idsql demo\n")
}

// newFlags returns a flag set for a command whose usage names it and its
// arguments.
func newFlags(name, args, about string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("idsql "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: idsql %s %s\n\n%s\n", name, args, about)
		var any bool
		fs.VisitAll(func(*flag.Flag) { any = true })
		if any {
			fmt.Fprint(stderr, "\nFlags:\n")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses flags anywhere among the arguments (as in "decode 42
// --json") and returns the positional ones. A flag mistake becomes a usage
// error (the flag package has printed it already), -h flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &usageError{msg: err.Error(), printed: true}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// printJSON writes v to w as indented JSON, the --json output of the
// commands.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
