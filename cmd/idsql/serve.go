package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/server"
)

// embeddedConfig is the configuration serve runs on without --config: an
// SQLite file and a local holder in dir, a snowflake table and a segment
// table.
func embeddedConfig(dir string) (*keyset.Config, error) {
	y := fmt.Sprintf(`namespace: default
layout: leaf
holder:
  kind: local
  instance: embedded
  workers: {"orders@embedded": 1, "leaf_snowflake@embedded": 2}
  cache_dir: %s
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 1000}
`, strconv.Quote(dir))
	return keyset.Parse("embedded default configuration", []byte(y), time.Now())
}

// defaultDataDir is where the embedded default keeps its files:
// $XDG_DATA_HOME/idsql or ~/.local/share/idsql.
func defaultDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "idsql")
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share", "idsql")
	}
	return "idsql-data"
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error { *l = append(*l, s); return nil }

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("serve", "[--config idsql.yaml --dsn DSN] [--addr 127.0.0.1:8080]",
		"Runs the HTTP ID server, compatible with Meituan Leaf's API:\n"+
			"  GET /api/segment/get/{key}[/{n}]    segment IDs (a key of idsql_alloc; ?shard=N for a sharded table)\n"+
			"  GET /api/snowflake/get/{key}[/{n}]  snowflake IDs (any key, as in Leaf: a snowflake table's own, else --snowflake-table's)\n"+
			"  GET /decodeSnowflakeId?snowflakeId=N\n"+
			"  GET /  (monitor page)   /metrics   /healthz\n\n"+
			"Without --config (and no ./idsql.yaml) it runs on an embedded default: an SQLite\n"+
			"file and a local worker holder in --data, snowflake key \"orders\", segment key\n"+
			"\"users\". SIGTERM or Ctrl-C drains in-flight requests and releases worker leases.", stderr)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml, else the embedded default)")
	dsn := fs.String("dsn", "", dsnHelp+"; needed for segment keys and the postgres holder")
	addr := fs.String("addr", "127.0.0.1:8080", "listen address")
	dataDir := fs.String("data", "", "data directory of the embedded default (default "+defaultDataDir()+")")
	var tokens stringList
	fs.Var(&tokens, "token", "accepted API token, sent as Authorization: Bearer TOKEN (repeatable; also $IDSQL_TOKENS, comma-separated); none means no auth. The monitor page asks for one in a login form")
	maxBatch := fs.Int("max-batch", server.DefaultMaxBatch, "largest n of the batch endpoints")
	snowTable := fs.String("snowflake-table", server.DefaultSnowflakeTable, "snowflake table whose generator answers keys that name no snowflake table (added to the configuration when absent)")
	migrate := fs.Bool("migrate", false, "create idsql's tables and segment keys before serving (always on for the embedded default)")
	maxStep := fs.Int64("segment-max-step", segment.DefaultMaxStep, "largest adaptive segment step: raise it for keys served at millions of IDs/s so one range lasts seconds")
	quiet := fs.Bool("quiet", false, "do not print the start-up banner")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	snowGiven := false // --snowflake-table was asked for
	fs.Visit(func(f *flag.Flag) { snowGiven = snowGiven || f.Name == "snowflake-table" })
	if env := os.Getenv("IDSQL_TOKENS"); env != "" {
		for _, t := range strings.Split(env, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tokens = append(tokens, t)
			}
		}
	}
	if *maxStep < 1 {
		return usagef("--segment-max-step must be at least 1")
	}
	if *maxBatch < 1 {
		return usagef("--max-batch must be at least 1")
	}

	cfg, err := loadConfig(*cfgPath, false)
	if err != nil {
		return err
	}
	var d *database
	embedded := cfg == nil
	if embedded {
		dir := *dataDir
		if dir == "" {
			dir = defaultDataDir()
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		unlock, err := lockDataDir(dir)
		if err != nil {
			return err
		}
		defer unlock()
		if cfg, err = embeddedConfig(dir); err != nil {
			return err
		}
		*dsn = "sqlite:" + filepath.Join(dir, "idsql.db")
		*migrate = true
	}
	if *dsn != "" || os.Getenv("IDSQL_DSN") != "" {
		if d, err = openDatabase(ctx, *dsn); err != nil {
			return err
		}
		defer d.db.Close()
	} else if need := needsDatabase(cfg); need != "" {
		return usagef("%s: give --dsn", need)
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	if cfg.Holder.Port == 0 {
		if _, p, err := net.SplitHostPort(ln.Addr().String()); err == nil {
			cfg.Holder.Port, _ = strconv.Atoi(p)
		}
	}
	if d != nil && *migrate {
		if err := idsql.MigrateIn(ctx, d.db, cfg, d.stores); err != nil {
			return err
		}
	}
	scfg, err := server.WithSnowflakeTable(cfg, *snowTable)
	if err != nil {
		return err
	}
	ss := segment.Settings{MaxStep: *maxStep}
	settings := server.Settings{Tokens: tokens, MaxBatch: *maxBatch, SnowflakeTable: *snowTable, Log: log.New(stderr, "", log.LstdFlags)}
	srv, err := newServer(ctx, scfg, d, ss, settings)
	if err != nil && scfg != cfg && !snowGiven {
		// The snowflake table serve adds for Leaf's keys that name no
		// snowflake table is not one the user asked for, so it must not
		// stop the server: the only configured snowflake table answers
		// those keys, or, with none or several, they are refused saying
		// why.
		why, _, _ := strings.Cut(errText(err), "\n")
		why = strings.TrimSuffix(why, ":")
		switch tables := cfg.SnowflakeTables(); len(tables) {
		case 1:
			settings.SnowflakeTable = tables[0]
			if srv, err = newServer(ctx, cfg, d, ss, settings); err == nil {
				fmt.Fprintf(stderr, "idsql serve: %s, the table serve adds for snowflake keys that name no table, could not start (%s): "+
					"table %s answers them (choose with --snowflake-table)\n", *snowTable, why, tables[0])
			}
		case 0:
			settings.SnowflakeOff = fmt.Sprintf("the configuration has no snowflake table, and %s, the table serve adds to answer Leaf's snowflake keys, "+
				"could not start (%s); to serve snowflake keys, add a snowflake table to the configuration (under the local holder with its "+
				"worker ID in holder.workers) and name it with --snowflake-table", *snowTable, why)
		default:
			settings.SnowflakeOff = fmt.Sprintf("%s, the table serve adds to answer them, could not start (%s): name one of the snowflake tables (%s) "+
				"with --snowflake-table, or give %s a worker ID", *snowTable, why, strings.Join(tables, ", "), *snowTable)
		}
		if settings.SnowflakeOff != "" {
			if srv, err = newServer(ctx, cfg, d, ss, settings); err == nil {
				fmt.Fprintf(stderr, "idsql serve: snowflake keys that name no snowflake table are refused: %s\n", settings.SnowflakeOff)
			}
		}
	}
	if err != nil {
		return migrateHint(err, *cfgPath)
	}
	if err := srv.Warm(ctx); err != nil {
		srv.Close()
		return migrateHint(err, *cfgPath)
	}
	if !*quiet {
		printBanner(stdout, ln.Addr().String(), cfg, d, embedded, len(tokens) > 0)
	}
	err = srv.Serve(ctx, ln)
	if !*quiet {
		fmt.Fprintln(stdout, "idsql serve: stopped; worker leases released")
	}
	return err
}

// snowflakeTables returns cfg's snowflake tables, sorted.
func snowflakeTables(cfg *keyset.Config) []string {
	var out []string
	for _, t := range cfg.TableNames() {
		if cfg.Tables[t].Strategy == keyset.Snowflake {
			out = append(out, t)
		}
	}
	return out
}

// migrateHint adds to err, when it says that a table idsql's migration
// creates does not exist (before migrate), what to run: migrate with the
// configuration given (cfgPath, "" for ./idsql.yaml), or serve --migrate.
func migrateHint(err error, cfgPath string) error {
	if errors.Is(err, keyset.ErrNotMigrated) || !dialect.AnyUndefinedTable(err) {
		return err // ErrNotMigrated names the fix already
	}
	if cfgPath == "" {
		cfgPath = "idsql.yaml"
	}
	return fmt.Errorf("%w\nidsql's tables (idsql_alloc, idsql_workers) are missing in the database: run `idsql migrate --config %s --dsn ...` once, or serve with --migrate", err, cfgPath)
}

// needsDatabase says why cfg cannot run without a database, or "".
func needsDatabase(cfg *keyset.Config) string {
	if k, err := holderkind.Lookup(string(cfg.Holder.Kind)); err == nil && k.WorkerTable != "" {
		return "the " + string(cfg.Holder.Kind) + " holder keeps worker leases in the database"
	}
	for _, t := range cfg.TableNames() {
		if cfg.Tables[t].Strategy == keyset.Segment {
			return "segment table " + t + " allocates its ranges in the database"
		}
	}
	return ""
}

// newServer builds the key set, the segment generator and the server for
// cfg on d (nil: snowflake only).
func newServer(ctx context.Context, cfg *keyset.Config, d *database, ss segment.Settings, s server.Settings) (*server.Server, error) {
	ko := keyset.KeysOptions{}
	var gen *segment.Generator
	if d != nil {
		ko = d.keysOptions(cfg)
		s.Store = server.NewTimedStore(d.segmentStore())
		g, err := segment.New(ctx, s.Store, ss)
		if err != nil {
			return nil, err
		}
		gen = g
		s.Registry = d.registry()
	}
	keys, err := keyset.NewKeys(cfg, ko)
	if err != nil {
		if gen != nil {
			gen.Close()
		}
		return nil, err
	}
	s.Keys, s.Segments = keys, gen
	srv, err := server.New(s)
	if err != nil {
		keys.Close()
		if gen != nil {
			gen.Close()
		}
		return nil, err
	}
	return srv, nil
}

// printBanner prints where the server listens and one URL of each kind
// that answers: a snowflake table's, and a segment table's (a plain one
// if there is one; a sharded table's keys are asked for one shard at a
// time, with ?shard=N).
func printBanner(w io.Writer, addr string, cfg *keyset.Config, d *database, embedded, auth bool) {
	var snow, uuid7, seg, sharded string
	for _, t := range cfg.TableNames() {
		switch tc := cfg.Tables[t]; {
		case tc.Strategy == keyset.Snowflake:
			if snow == "" {
				snow = t
			}
		case tc.Strategy == keyset.UUID7:
			if uuid7 == "" {
				uuid7 = t
			}
		case tc.Gene().ShardBits > 0:
			if sharded == "" {
				sharded = cfg.SegmentKey(t) + "?shard=0"
			}
		case seg == "":
			seg = cfg.SegmentKey(t)
		}
	}
	if seg == "" {
		seg = sharded
	}
	where := "no database"
	if d != nil {
		where = d.dialect.String()
		if d.path != "" {
			where += " " + d.path
		}
	}
	if embedded {
		where = "embedded default, " + where
	}
	fmt.Fprintf(w, "idsql serve: namespace %s on %s\n", cfg.Namespace, where)
	fmt.Fprintf(w, "  monitor    http://%s/\n", addr)
	if snow != "" {
		fmt.Fprintf(w, "  snowflake  http://%s/api/snowflake/get/%s\n", addr, snow)
	}
	if uuid7 != "" {
		fmt.Fprintf(w, "  uuid7      http://%s/api/uuid7/get/%s\n", addr, uuid7)
	}
	if seg != "" && d != nil {
		fmt.Fprintf(w, "  segment    http://%s/api/segment/get/%s\n", addr, seg)
	}
	if auth {
		fmt.Fprintln(w, "  auth       token required (Authorization: Bearer TOKEN; the monitor page asks for it)")
	}
}
