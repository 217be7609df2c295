package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/internal/dialect"
)

// demoConfig is the configuration the demo prints and runs on; %[1]s is
// the orders table, %[2]s the customers table, %[3]s the holder's cache
// directory.
const demoConfig = `namespace: demo
layout: leaf                     # 41 bits of milliseconds, 10 worker bits, 12 sequence bits
holder:
  kind: local                    # worker IDs from a static map (no ZooKeeper needed)
  instance: demo
  workers: {"%[1]s@demo": 1}    # table %[1]s on instance demo uses worker ID 1
  cache_dir: %[3]s
tables:
  %[1]s:    {strategy: snowflake}           # time + worker + sequence
  %[2]s: {strategy: segment, step: 100}  # ranges of 100 from the idsql_alloc row
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "[--dir DIR] [--dsn DSN]",
		"A tour of idsql that needs no server: it creates an SQLite file, two tables\n"+
			"(orders with snowflake keys, customers with segment keys), inserts rows with\n"+
			"plain SQL through the idsql wrapper, prints them with their generated keys,\n"+
			"decodes a key and looks keys up back to their table.\n\n"+
			"With --dsn it takes the tour on that PostgreSQL or MySQL database instead:\n"+
			"it creates idsql's tables there (as idsql migrate does) and the tables\n"+
			"idsql_demo_orders and idsql_demo_customers, which it drops at the end.", stderr)
	dir := fs.String("dir", "", "keep the SQLite file and holder cache here (default: a temporary directory, removed at exit)")
	dsn := fs.String("dsn", "", "take the tour on this database: postgres://..., mysql://user:pass@host:port/db or user:pass@tcp(host:port)/db")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *dsn != "" {
		if _, ok := sqlitePath(*dsn); ok {
			return usagef("--dsn: the demo runs on an SQLite file by itself; give --dir to keep it")
		}
	}
	if *dir == "" {
		tmp, err := os.MkdirTemp("", "idsql-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		*dir = tmp
	} else if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	return demo(ctx, stdout, *dir, *dsn)
}

// tour writes the demo's numbered steps.
type tour struct {
	w    io.Writer
	step int
}

func (t *tour) say(format string, args ...any) { fmt.Fprintf(t.w, format, args...) }

// heading starts the next numbered step.
func (t *tour) heading(s string) {
	t.step++
	t.say("\n%d. %s\n", t.step, s)
}

// demo runs the tour in dir, on an SQLite file there or on the database
// dsn, writing what it does to w.
func demo(ctx context.Context, w io.Writer, dir, dsn string) (err error) {
	t := &tour{w: w}
	d, orders, customers, closeStore, err := demoDatabase(ctx, t, dir, dsn)
	if err != nil {
		return err
	}
	defer closeStore()
	raw := d.db
	defer raw.Close()

	t.heading("The configuration (idsql.yaml) names the tables and how each gets its keys:")
	yamlText := fmt.Sprintf(demoConfig, orders, customers, strconv.Quote(filepath.Join(dir, "holder")))
	t.say("%s", indent(yamlText, "   "))
	cfg, err := keyset.Parse("demo configuration", []byte(yamlText), time.Now())
	if err != nil {
		return err
	}

	t.heading("Create the application's tables. Note: no AUTOINCREMENT, no sequence.")
	ddl := []string{
		"CREATE TABLE " + customers + " (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(100) NOT NULL)",
		"CREATE TABLE " + orders + " (id BIGINT NOT NULL PRIMARY KEY, customer_id BIGINT NOT NULL, item VARCHAR(100) NOT NULL, total_cents INTEGER NOT NULL)",
	}
	if dsn != "" {
		drop := func() error {
			for _, table := range []string{orders, customers} {
				if _, err := raw.ExecContext(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+table); err != nil {
					return fmt.Errorf("drop demo table %s: %w", table, err)
				}
			}
			return nil
		}
		if err := drop(); err != nil {
			return err
		}
		defer func() {
			if derr := drop(); err == nil {
				err = derr
			}
			if err == nil {
				t.say("\n   (tables %s and %s dropped again)\n", orders, customers)
			}
		}()
	}
	for _, q := range ddl {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		t.say("   %s\n", q)
	}

	t.heading("idsql migrate: create idsql's own tables and a segment key for " + customers + ".")
	if err := idsql.MigrateIn(ctx, raw, cfg, d.stores); err != nil {
		return err
	}
	keys, err := d.segmentStore().ListKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		if k.Key == cfg.SegmentKey(customers) {
			t.say("   idsql_alloc row %q: max_id %d, step %d (each range of %d IDs is one UPDATE)\n", k.Key, k.MaxID, k.Step, k.Step)
		}
	}

	db, err := idsql.Open(d.dialect.DriverName(), d.dsn, cfg, idsql.Options{KeysOptions: d.keysOptions(cfg)})
	if err != nil {
		return err
	}
	defer db.Close()

	customerIDs, orderIDs, err := demoInserts(ctx, t, db, d.dialect.Rebind, customers, orders)
	if err != nil {
		return err
	}
	if err := demoRows(ctx, t, db, customers, orders); err != nil {
		return err
	}

	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return err
	}
	oid := orderIDs[0]
	t.heading(fmt.Sprintf("Decode order key %d (same as: idsql decode %d):", oid, oid))
	p, err := layout.Decode(oid, time.Now(), time.Minute)
	if err != nil {
		return err
	}
	t.say("   time      %s (%s ago)\n   worker    %d\n   sequence  %d\n   layout    %s\n",
		p.Time.UTC().Format("2006-01-02T15:04:05.000Z"), time.Since(p.Time).Round(time.Millisecond), p.Worker, p.Sequence, layout)

	if err := demoLookup(ctx, t, cfg, d, customerIDs[1], oid, p.Worker); err != nil {
		return err
	}

	t.say("\nDone. Next:\n" +
		"   idsql serve                     an HTTP ID server (Leaf's API) with a monitor page\n" +
		"   idsql decode --json ID          take any snowflake ID apart\n" +
		"   idsql migrate --dsn postgres://... --config idsql.yaml   set up a real database\n")
	return nil
}

// demoDatabase opens the demo's database: an SQLite file in dir, with the
// segment store in a file of its own, or the database dsn. It names the
// demo's tables and returns what closes the store.
func demoDatabase(ctx context.Context, t *tour, dir, dsn string) (d *database, orders, customers string, closeStore func(), err error) {
	if dsn != "" {
		if d, err = openDatabase(ctx, dsn); err != nil {
			return nil, "", "", nil, err
		}
		t.say("idsql demo: distributed primary keys for plain SQL, on a %s database\n", d.dialect)
		t.say("holder cache directory: %s\n", dir)
		return d, "idsql_demo_orders", "idsql_demo_customers", func() {}, nil
	}
	t.say("idsql demo: distributed primary keys for plain SQL, on an SQLite file (no server needed)\n")
	t.say("working directory: %s\n", dir)
	// The segment store gets a file of its own: SQLite lets one connection
	// write to a file at a time, and the store must be able to allocate
	// while a transaction of the application holds its file.
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "idsql.db"))
	if err != nil {
		return nil, "", "", nil, err
	}
	path := filepath.Join(dir, "demo.db")
	app, err := sql.Open("sqlite", sqlitestore.DSN(path))
	if err != nil {
		store.DB().Close()
		return nil, "", "", nil, err
	}
	t.say("files: %s (the application's tables), %s (idsql's segment store)\n", filepath.Base(path), "idsql.db")
	d = &database{db: app, dialect: dialect.ForDSN("sqlite:" + path), dsn: sqlitestore.DSN(path), path: path, stores: idsql.Stores{Segments: store}}
	return d, "orders", "customers", func() { store.DB().Close() }, nil
}

// demoInserts inserts three customers and an order of each through the
// wrapper, leaving out the key column, and returns the keys it filled.
func demoInserts(ctx context.Context, t *tour, db *idsql.DB, rebind func(string) string, customers, orders string) (customerIDs, orderIDs []int64, err error) {
	t.heading("Insert rows with plain SQL through the idsql wrapper. The statements leave out\n   the id column; idsql adds it and binds a fresh key for each row:")
	for _, name := range []string{"Ada Lovelace", "Grace Hopper", "Edsger Dijkstra"} {
		q := rebind("INSERT INTO " + customers + " (name) VALUES (?)")
		res, err := db.ExecContext(ctx, q, name)
		if err != nil {
			return nil, nil, fmt.Errorf("insert customer: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, nil, err
		}
		customerIDs = append(customerIDs, id)
		t.say("   %-58s %-18q -> id %d\n", q, name, id)
	}
	items := []struct {
		item  string
		cents int
	}{{"analytical engine", 120000}, {"compiler", 4999}, {"shortest path", 1500}}
	for i, it := range items {
		q := rebind("INSERT INTO " + orders + " (customer_id, item, total_cents) VALUES (?, ?, ?)")
		res, err := db.ExecContext(ctx, q, customerIDs[i], it.item, it.cents)
		if err != nil {
			return nil, nil, fmt.Errorf("insert order: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return nil, nil, err
		}
		orderIDs = append(orderIDs, id)
		t.say("   %-58s %-18q -> id %d\n", "INSERT INTO "+orders+" (customer_id, item, total_cents) ...", it.item, id)
	}
	return customerIDs, orderIDs, nil
}

// demoRows prints the demo's rows, read back with SELECT.
func demoRows(ctx context.Context, t *tour, db *idsql.DB, customers, orders string) error {
	t.heading("The rows, read back with SELECT:")
	tw := tabwriter.NewWriter(t.w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "   %s.id\tname\n", customers)
	rows, err := db.QueryContext(ctx, "SELECT id, name FROM "+customers+" ORDER BY id")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			rows.Close()
			return err
		}
		fmt.Fprintf(tw, "   %d\t%s\n", id, name)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	tw.Flush()
	t.say("   (segment keys: small, dense, increasing; taken from a range of IDs this process reserved in idsql_alloc)\n\n")
	fmt.Fprintf(tw, "   %s.id\tcustomer_id\titem\ttotal\n", orders)
	rows, err = db.QueryContext(ctx, "SELECT id, customer_id, item, total_cents FROM "+orders+" ORDER BY id")
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, cust int64
		var item string
		var cents int
		if err := rows.Scan(&id, &cust, &item, &cents); err != nil {
			rows.Close()
			return err
		}
		fmt.Fprintf(tw, "   %d\t%d\t%s\t%d.%02d\n", id, cust, item, cents/100, cents%100)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return err
	}
	tw.Flush()
	t.say("   (snowflake keys: 64-bit, time-ordered, made in memory with no database round trip)\n")
	return nil
}

// demoLookup looks a customer key and an order key (of worker) up back to
// their tables, as idsql lookup does.
func demoLookup(ctx context.Context, t *tour, cfg *keyset.Config, d *database, cid, oid, worker int64) error {
	t.heading("Look keys up back to their table (what `idsql lookup` does):")
	for _, id := range []int64{cid, oid} {
		origins, err := idsql.LookupIn(ctx, cfg, d.stores, id)
		if err != nil && !(errors.Is(err, idsql.ErrNotFound) && id == oid && d.registry() == nil) {
			return fmt.Errorf("lookup %d: %w", id, err)
		}
		for _, o := range origins {
			if o.Table == "" {
				continue // another namespace's key sharing the number
			}
			switch o.Strategy {
			case keyset.Segment:
				t.say("   %d -> table %s (%s key %q, range %d..%d handed to %s)\n",
					id, o.Table, o.Strategy, o.Range.Key, o.Range.First, o.Range.Last, o.Range.Instance)
			case keyset.Snowflake, keyset.UUID7:
				t.say("   %d -> table %s (snowflake, worker %d, lease #%d recorded in idsql_workers by %s)\n",
					id, o.Table, o.Parts.Worker, o.Lease.LeaseID, o.Lease.Instance)
			}
		}
	}
	if d.registry() != nil {
		return nil
	}
	table := ""
	for k, v := range cfg.Holder.Workers {
		if v == worker {
			table, _, _ = strings.Cut(k, "@")
		}
	}
	if table == "" {
		return fmt.Errorf("lookup %d: worker %d is in no holder mapping", oid, worker)
	}
	t.say("   %d -> table %s (snowflake, worker %d; the local holder maps worker %d to %s)\n", oid, table, worker, worker, table)
	t.say("   With PostgreSQL or MySQL the worker table idsql_workers records every lease, so lookup\n" +
		"   stays exact even after a worker ID moves to another table.\n")
	return nil
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}
