package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/dialect"
)

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05.000")
}

func runLookup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lookup", "--dsn DSN [--config idsql.yaml | --namespace NS] [--layout leaf] [--json] ID...",
		"Traces IDs back to the table that issued them: a snowflake ID through the worker\n"+
			"lease that held its worker ID at its time, a segment ID through the logged range\n"+
			"that holds it. An ID is decimal or, with a configuration, in a table's text form\n"+
			"(tables.T.text).\n\n"+
			"The configuration (--config, or ./idsql.yaml when there is one) is optional: without\n"+
			"it the answer comes from idsql_workers and idsql_alloc_log alone, in every namespace\n"+
			"of idsql_workers (or --namespace), decoding snowflake IDs with --layout (default\n"+
			"leaf); keys of tables with shard or app bits, and text forms, need the configuration.", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml when it exists; optional)")
	ns := fs.String("namespace", "", "without a configuration: the namespace to look in (default every namespace of idsql_workers)")
	layoutName := fs.String("layout", "", "without a configuration: the snowflake layout preset (leaf, uid32, sony, sony-widths or js53; default leaf)")
	asJSON := fs.Bool("json", false, "print a JSON array, one object per ID, instead of text")
	ids, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("no ID given")
	}
	cfg, err := loadConfig(*cfgPath, false)
	if err != nil {
		return err
	}
	if cfg != nil && (*ns != "" || *layoutName != "") {
		return usagef("--namespace and --layout are for a lookup without a configuration; the configuration names both")
	}
	d, err := openDatabase(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.db.Close()
	cfgs := []*keyset.Config{cfg}
	if cfg == nil {
		if cfgs, err = bareConfigs(ctx, d, *ns, *layoutName); err != nil {
			return err
		}
	}
	codecs, err := cfgs[0].Codecs()
	if err != nil {
		return err
	}
	var out []lookedUp
	var invalid, missing, failed int
	for _, s := range ids {
		r := lookedUp{Input: s}
		id, _, err := codecs.ParseKey(s)
		if err != nil {
			r.Error = fmt.Sprintf("%q is not an ID: a positive 64-bit decimal integer or a key in a table's text form (%s)", s, errText(err))
			invalid++
			out = append(out, r)
			continue
		}
		r.ID = id
		var origins []idsql.Origin
		for _, c := range cfgs {
			o, err := idsql.LookupIn(ctx, c, d.stores, id)
			switch {
			case errors.Is(err, idsql.ErrNotFound):
			case err != nil:
				r.Error = errText(migrateHint(err, *cfgPath))
			default:
				origins = append(origins, o...)
			}
			if r.Error != "" {
				break
			}
		}
		switch {
		case r.Error != "":
			failed++
		case len(origins) == 0:
			r.Error = fmt.Sprintf("%d: no table of namespace %s issued this ID", id, namespaces(cfgs))
			missing++
		}
		if cfg == nil {
			origins = segmentOnce(origins)
		}
		for _, o := range origins {
			r.Origins = append(r.Origins, originOf(o, cfg == nil))
		}
		out = append(out, r)
	}
	if *asJSON {
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		first := true
		for _, r := range out {
			if r.Error != "" {
				fmt.Fprintf(stderr, "idsql lookup: %s\n", r.Error)
				continue
			}
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			printOrigins(stdout, r.ID, r.Origins)
		}
	}
	return lookupSummary(len(ids), invalid, missing, failed)
}

// bareConfigs returns the configurations a lookup without one uses: one
// per namespace (ns, or every namespace of idsql_workers, or "default"
// when it has none), with layout (a preset name, default leaf) and no
// tables.
func bareConfigs(ctx context.Context, d *database, ns, layout string) ([]*keyset.Config, error) {
	if layout != "" {
		if _, err := snowflake.Preset(layout); err != nil {
			return nil, usagef("--layout: %v", err)
		}
	}
	names := []string{ns}
	if ns == "" {
		names = nil
		if d.registry() != nil {
			rows, err := d.db.QueryContext(ctx, "SELECT DISTINCT namespace FROM idsql_workers ORDER BY namespace")
			if err != nil {
				return nil, fmt.Errorf("read the namespaces of idsql_workers: %w", err)
			}
			defer rows.Close()
			for rows.Next() {
				var n string
				if err := rows.Scan(&n); err != nil {
					return nil, err
				}
				names = append(names, n)
			}
			if err := rows.Err(); err != nil {
				return nil, err
			}
		}
		if len(names) == 0 {
			names = []string{"default"}
		}
	}
	var cfgs []*keyset.Config
	for _, n := range names {
		cfgs = append(cfgs, &keyset.Config{Namespace: n, Layout: keyset.LayoutConfig{Preset: layout}})
	}
	return cfgs, nil
}

// namespaces names the namespaces of cfgs, for a message.
func namespaces(cfgs []*keyset.Config) string {
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Namespace)
	}
	return strings.Join(names, " or ")
}

// segmentOnce drops repeats of the same segment range: without a
// configuration every namespace's lookup finds the ranges of
// idsql_alloc_log, which has no namespace.
func segmentOnce(origins []idsql.Origin) []idsql.Origin {
	seen := map[segment.Range]bool{}
	var out []idsql.Origin
	for _, o := range origins {
		if o.Strategy == keyset.Segment {
			if seen[o.Range] {
				continue
			}
			seen[o.Range] = true
		}
		out = append(out, o)
	}
	return out
}

// lookedUp is the answer for one ID, as --json prints it.
type lookedUp struct {
	Input   string   `json:"input"`
	ID      int64    `json:"id,omitempty"`
	Origins []origin `json:"origins,omitempty"`
	Error   string   `json:"error,omitempty"`
}

// origin is one explanation of an ID (idsql.Origin), as --json prints it.
type origin struct {
	// Table is the configured table; without a configuration, the table
	// the worker lease was taken for, or "" for a segment ID (see Key).
	Table    string `json:"table,omitempty"`
	Strategy string `json:"strategy"`
	// Snowflake IDs: the parts and the lease.
	Time          *time.Time `json:"time,omitempty"`
	Worker        *int64     `json:"worker,omitempty"`
	Sequence      *int64     `json:"sequence,omitempty"`
	Namespace     string     `json:"namespace,omitempty"`
	LeaseID       int64      `json:"lease_id,omitempty"`
	LeaseKind     string     `json:"lease_kind,omitempty"`
	LeaseStarted  *time.Time `json:"lease_started,omitempty"`
	LeaseReleased *time.Time `json:"lease_released,omitempty"` // absent while the lease is live
	PID           int        `json:"pid,omitempty"`
	// Segment IDs: the key and the range handed out that holds the ID.
	Key        string     `json:"key,omitempty"`
	RangeFirst int64      `json:"range_first,omitempty"`
	RangeLast  int64      `json:"range_last,omitempty"`
	RangeTime  *time.Time `json:"range_time,omitempty"`
	// A table with shard or app bits: the ID taken apart.
	Shard    *int   `json:"shard,omitempty"`
	App      *int64 `json:"app,omitempty"`
	Index    *int64 `json:"index,omitempty"`
	Instance string `json:"instance"`
	// FromRecords is true without a configuration: Table comes from the
	// worker table's record, not from a configuration.
	FromRecords bool `json:"from_records,omitempty"`
}

func originOf(o idsql.Origin, bare bool) origin {
	out := origin{Table: o.Table, Strategy: string(o.Strategy), Instance: o.Instance(), FromRecords: bare}
	utc := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		t = t.UTC()
		return &t
	}
	switch o.Strategy {
	case keyset.Snowflake, keyset.UUID7:
		if bare {
			out.Table = o.Lease.Table
		}
		w, q := o.Parts.Worker, o.Parts.Sequence
		out.Time, out.Worker, out.Sequence = utc(o.Parts.Time), &w, &q
		out.Namespace, out.LeaseID, out.LeaseKind, out.PID = o.Lease.Namespace, o.Lease.LeaseID, o.Lease.Kind, o.Lease.PID
		out.LeaseStarted, out.LeaseReleased = utc(o.Lease.Started), utc(o.Lease.Released)
	case keyset.Segment:
		out.Key, out.RangeFirst, out.RangeLast, out.RangeTime = o.Range.Key, o.Range.First, o.Range.Last, utc(o.Range.Time)
		if g := o.Gene; g != nil {
			out.Shard, out.App, out.Index = &g.Shard, &g.App, &g.Index
		}
	}
	return out
}

// lookupSummary is lookup's error when some of n IDs were not explained:
// invalid (not IDs at all), missing (no record explains them) or failed
// (the lookup itself failed); nil when all were.
func lookupSummary(n, invalid, missing, failed int) error {
	var parts []string
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("%d invalid", invalid))
	}
	if missing > 0 {
		parts = append(parts, fmt.Sprintf("%d not found", missing))
	}
	if failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", failed))
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d IDs not looked up: %s", invalid+missing+failed, n, strings.Join(parts, ", "))
}

func printOrigins(w io.Writer, id int64, origins []origin) {
	if len(origins) > 1 {
		fmt.Fprintf(w, "%d: %d explanations (the same number was issued more than once, in different key spaces)\n", id, len(origins))
	} else {
		fmt.Fprintf(w, "%d:\n", id)
	}
	for _, o := range origins {
		table := o.Table
		switch {
		case table != "" && o.FromRecords:
			table += " (as the worker table records it; no configuration given)"
		case table == "" && o.FromRecords:
			table = "(no configuration given: the table whose segment key this is)"
		case table == "":
			table = "(not in the configuration)"
		}
		fmt.Fprintf(w, "  table     %s\n  strategy  %s\n", table, o.Strategy)
		switch o.Strategy {
		case string(keyset.Snowflake), string(keyset.UUID7):
			released := "now (live)"
			if o.LeaseReleased != nil {
				released = stamp(*o.LeaseReleased)
			}
			var started time.Time
			if o.LeaseStarted != nil {
				started = *o.LeaseStarted
			}
			fmt.Fprintf(w, "  time      %s\n  worker    %d (sequence %d)\n  instance  %s (pid %d)\n  lease     #%d %s, %s to %s\n",
				stamp(*o.Time), *o.Worker, *o.Sequence, o.Instance, o.PID, o.LeaseID, o.LeaseKind, stamp(started), released)
			if o.FromRecords {
				fmt.Fprintf(w, "  namespace %s\n", o.Namespace)
			}
		case string(keyset.Segment):
			if o.Shard != nil {
				fmt.Fprintf(w, "  shard     %d\n  app       %d\n  index     %d\n", *o.Shard, *o.App, *o.Index)
			}
			var at time.Time
			if o.RangeTime != nil {
				at = *o.RangeTime
			}
			fmt.Fprintf(w, "  key       %s\n  range     %d..%d\n  time      %s (range handed out)\n  instance  %s\n",
				o.Key, o.RangeFirst, o.RangeLast, stamp(at), o.Instance)
		}
	}
}

func releasedOr(t time.Time) string {
	if t.IsZero() {
		return "now (live)"
	}
	return stamp(t)
}

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "--dsn DSN [--config idsql.yaml] [--reshape T] [--db-defaults [--db-block N] [--dry-run]] | --print-grants ROLE --dsn DSN [--db-defaults [--config idsql.yaml]]",
		"Creates idsql's tables (idsql_alloc, idsql_alloc_log and, on PostgreSQL and\n"+
			"MySQL, idsql_workers) and a segment key for every segment table of the configuration\n"+
			"that has none. A table that already holds rows (from BIGSERIAL) gets a key\n"+
			"starting above its MAX(key column). Running it again changes nothing.\n\n"+
			"With --db-defaults it also gives the key column of every table a database-side\n"+
			"default (PostgreSQL, MariaDB), for writers that do not go through idsql (psql,\n"+
			"COPY, INSERT ... SELECT). A segment table's serves a block of keys logged in\n"+
			"idsql_alloc_log under the instance \"database\"; running it again moves a default\n"+
			"whose block has less than a tenth left to a fresh block. A snowflake table's\n"+
			"composes keys under a worker ID reserved in idsql_workers (instance \"database\")\n"+
			"from the top holder.database_workers IDs, which the configuration must set.\n\n"+
			"It records each table's key shape (tables.T.shape) in idsql_shapes and refuses a\n"+
			"shape other than the recorded one. --reshape T records T's configured shape in\n"+
			"place of the recorded one, only when T has issued no key (no rows, no worker\n"+
			"lease, no segment range): keys of two shapes can be equal.\n\n"+
			"migrate runs as the owner of idsql's tables. --print-grants ROLE prints, for the\n"+
			"database of --dsn (it does not connect), the GRANT statements that give the\n"+
			"application's role what idsql does at run time on its tables (ROLE as the\n"+
			"database writes it: app, or 'app'@'%' on MySQL). With --db-defaults it prints\n"+
			"instead what a role that inserts around idsql (psql, COPY) needs, besides\n"+
			"INSERT on the tables, to key its rows by the configuration's database-side defaults.", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	dbDefaults := fs.Bool("db-defaults", false, "also install database-side defaults on the tables' key columns")
	dbBlock := fs.Int64("db-block", idsql.DefaultDBBlock, "keys per block of a database-side default")
	dryRun := fs.Bool("dry-run", false, "print the SQL --db-defaults runs instead of migrating")
	reshape := fs.String("reshape", "", "record this table's configured shape in place of the recorded one (only when it has issued no key)")
	grantsTo := fs.String("print-grants", "", "print the grants idsql needs at run time for this role, and migrate nothing")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *grantsTo != "" && *dbDefaults {
		return printDBDefaultGrants(*dsn, *cfgPath, *grantsTo, stdout)
	}
	if *grantsTo != "" {
		return printGrants(*dsn, *grantsTo, stdout)
	}
	cfg, err := loadConfig(*cfgPath, true)
	if err != nil {
		return err
	}
	d, err := openDatabase(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.db.Close()
	if *dryRun {
		script, err := idsql.DBDefaultsSQL(d.dialect.String(), cfg, *dbBlock)
		if err != nil {
			return err
		}
		_, err = io.WriteString(stdout, script)
		return err
	}
	if *reshape != "" {
		if err := keyset.Reshape(ctx, d.db, cfg, *reshape); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "table %s: shape %s recorded\n", *reshape, cfg.Tables[*reshape].Shape)
	}
	if err := idsql.MigrateWith(ctx, d.db, cfg, idsql.MigrateOptions{Stores: &d.stores, DBDefaults: *dbDefaults, DBBlock: *dbBlock}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "migrated %s database for namespace %s\n", d.dialect, cfg.Namespace)
	// A server whose durability is its settings' (MySQL) may lose the last
	// segment allocations in a crash; the dialect says which fall short.
	switch lazy, err := d.dialect.LazyCommits(ctx, d.db); {
	case err != nil:
		fmt.Fprintf(stderr, "idsql migrate: warning: %v\n", err)
	case len(lazy) > 0:
		fmt.Fprintf(stderr, "idsql migrate: warning: the server does not commit durably: it runs with %s, so a crash may lose the last "+
			"segment allocations and hand their ranges out again; make every commit reach disk (innodb_flush_log_at_trx_commit = 1, "+
			"and sync_binlog = 1 with binary logging)\n", strings.Join(lazy, " and "))
	}
	return listSegments(ctx, d, stdout)
}

// grantsDialect is the dialect of dsn (or $IDSQL_DSN), for --print-grants,
// which does not connect.
func grantsDialect(dsn string) (dialect.Dialect, error) {
	if dsn == "" {
		dsn = os.Getenv("IDSQL_DSN")
	}
	if dsn == "" {
		return dialect.Unknown, usagef("--print-grants needs --dsn (or IDSQL_DSN) to tell the database")
	}
	return dialect.ForDSN(dsn), nil
}

// printDBDefaultGrants prints what role needs to insert rows keyed by the
// database-side defaults of the configuration at cfgPath, for the
// database of dsn, without connecting to it.
func printDBDefaultGrants(dsn, cfgPath, role string, stdout io.Writer) error {
	d, err := grantsDialect(dsn)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(cfgPath, true)
	if err != nil {
		return err
	}
	grants, err := idsql.DBDefaultGrants(d.String(), cfg, role)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "-- What the database-side defaults of namespace %s (%s) draw from as the inserting role, for role %s;\n"+
		"-- it needs INSERT on the tables besides. Run as their owner after idsql migrate --db-defaults.\n", cfg.Namespace, d, role)
	if len(grants) == 0 {
		fmt.Fprintln(stdout, "-- Nothing: every default here runs in a trigger, with its definer's privileges.")
	}
	for _, g := range grants {
		fmt.Fprintln(stdout, g+";")
	}
	return nil
}

// printGrants prints the runtime grants of role for the database of dsn
// (or $IDSQL_DSN), without connecting to it.
func printGrants(dsn, role string, stdout io.Writer) error {
	d, err := grantsDialect(dsn)
	if err != nil {
		return err
	}
	grants := d.RuntimeGrants(role)
	if len(grants) == 0 {
		fmt.Fprintf(stdout, "-- %s has no privileges to grant: idsql's tables are in files of its own\n", d)
		return nil
	}
	fmt.Fprintf(stdout, "-- What idsql does at run time on its tables (%s), for role %s; run as their owner after idsql migrate.\n", d, role)
	for _, g := range grants {
		fmt.Fprintln(stdout, g+";")
	}
	return nil
}

func runWorkers(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("workers", "--dsn DSN [--config idsql.yaml | --namespace NS] [--all]",
		"Lists the worker leases of a namespace from idsql_workers (PostgreSQL, MySQL), newest first:\n"+
			"which worker ID serves which table on which instance, since when.", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	cfgPath := fs.String("config", "", "configuration file naming the namespace (default ./idsql.yaml)")
	ns := fs.String("namespace", "", "namespace (instead of --config)")
	all := fs.Bool("all", false, "include released leases")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *ns == "" {
		cfg, err := loadConfig(*cfgPath, true)
		if err != nil {
			return err
		}
		*ns = cfg.Namespace
	}
	d, err := openDatabase(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.db.Close()
	reg := d.registry()
	if reg == nil {
		return errors.New("the worker registry (idsql_workers) is on PostgreSQL and MySQL only; this database is " + d.dialect.String())
	}
	recs, err := reg.Leases(ctx, *ns, !*all)
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		fmt.Fprintf(stdout, "no %sleases in namespace %s\n", map[bool]string{false: "live ", true: ""}[*all], *ns)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tTABLE\tINSTANCE\tPID\tKIND\tSTARTED\tLAST HEARTBEAT\tLAST TIMESTAMP\tRELEASED")
	for _, r := range recs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.WorkerID, r.Table, r.Instance, r.PID, r.Kind,
			stamp(r.Started), stamp(r.LastHeartbeat), stamp(r.LastTimestamp), releasedOr(r.Released))
	}
	return tw.Flush()
}

func runSegments(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("segments", "--dsn DSN",
		"Lists the segment keys of idsql_alloc: the last ID handed out to anyone (max_id),\n"+
			"the stored step and the last allocation. The in-memory buffers of a running\n"+
			"server are on its monitor page (idsql serve, then open http://ADDR/).", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	d, err := openDatabase(ctx, *dsn)
	if err != nil {
		return err
	}
	defer d.db.Close()
	return listSegments(ctx, d, stdout)
}

func listSegments(ctx context.Context, d *database, stdout io.Writer) error {
	keys, err := d.segmentStore().ListKeys(ctx)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		fmt.Fprintln(stdout, "no segment keys")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY\tMAX_ID\tSTEP\tUPDATED\tDESCRIPTION")
	for _, k := range keys {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", k.Key, k.MaxID, k.Step, stamp(k.Updated), k.Description)
	}
	return tw.Flush()
}
