package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idsql/idsql/idsql"
)

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05.000")
}

func runLookup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lookup", "--dsn DSN [--config idsql.yaml] ID...",
		"Traces IDs back to the table that issued them: a snowflake ID through the worker\n"+
			"lease that held its worker ID at its time, a segment ID through the logged range\n"+
			"that holds it. An ID is decimal or in a table's text form (tables.T.text).", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	ids, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("no ID given")
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
	var invalid, missing, failed int
	for i, s := range ids {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		id, _, err := cfg.ParseKey(s)
		if err != nil {
			fmt.Fprintf(stderr, "idsql lookup: %q is not an ID: a positive 64-bit decimal integer or a key in a table's text form (%v)\n", s, err)
			invalid++
			continue
		}
		origins, err := idsql.LookupIn(ctx, cfg, d.stores, id)
		switch {
		case errors.Is(err, idsql.ErrNotFound):
			fmt.Fprintf(stderr, "idsql lookup: %d: no table of namespace %s issued this ID\n", id, cfg.Namespace)
			missing++
			continue
		case err != nil:
			fmt.Fprintf(stderr, "idsql lookup: %v\n", err)
			failed++
			continue
		}
		printOrigins(stdout, id, origins)
	}
	return lookupSummary(len(ids), invalid, missing, failed)
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

func printOrigins(w io.Writer, id int64, origins []idsql.Origin) {
	if len(origins) > 1 {
		fmt.Fprintf(w, "%d: %d explanations (the same number was issued more than once, in different key spaces)\n", id, len(origins))
	} else {
		fmt.Fprintf(w, "%d:\n", id)
	}
	for _, o := range origins {
		table := o.Table
		if table == "" {
			table = "(not in the configuration)"
		}
		fmt.Fprintf(w, "  table     %s\n  strategy  %s\n", table, o.Strategy)
		switch o.Strategy {
		case idsql.Snowflake:
			fmt.Fprintf(w, "  time      %s\n  worker    %d (sequence %d)\n  instance  %s (pid %d)\n  lease     #%d %s, %s to %s\n",
				stamp(o.Parts.Time), o.Parts.Worker, o.Parts.Sequence, o.Lease.Instance, o.Lease.PID,
				o.Lease.LeaseID, o.Lease.Kind, stamp(o.Lease.Started), releasedOr(o.Lease.Released))
		case idsql.Segment:
			if g := o.Gene; g != nil {
				fmt.Fprintf(w, "  shard     %d\n  app       %d\n  index     %d\n", g.Shard, g.App, g.Index)
			}
			fmt.Fprintf(w, "  key       %s\n  range     %d..%d\n  time      %s (range handed out)\n  instance  %s\n",
				o.Range.Key, o.Range.First, o.Range.Last, stamp(o.Range.Time), o.Range.Instance)
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
	fs := newFlags("migrate", "--dsn DSN [--config idsql.yaml] [--db-defaults [--db-block N] [--dry-run]]",
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
			"from the top holder.database_workers IDs, which the configuration must set.", stderr)
	dsn := fs.String("dsn", "", dsnHelp)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	dbDefaults := fs.Bool("db-defaults", false, "also install database-side defaults on the tables' key columns")
	dbBlock := fs.Int64("db-block", idsql.DefaultDBBlock, "keys per block of a database-side default")
	dryRun := fs.Bool("dry-run", false, "print the SQL --db-defaults runs instead of migrating")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
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
