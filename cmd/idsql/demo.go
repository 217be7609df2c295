package main

import (
	"context"
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
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
)

// demoConfig is the configuration the demo prints and runs on.
const demoConfig = `namespace: demo
layout: leaf                     # 41 bits of milliseconds, 10 worker bits, 12 sequence bits
holder:
  kind: local                    # worker IDs from a static map (no ZooKeeper needed)
  instance: demo
  workers: {"orders@demo": 1}    # table orders on instance demo uses worker ID 1
  cache_dir: %s
tables:
  orders:    {strategy: snowflake}           # time + worker + sequence
  customers: {strategy: segment, step: 100}  # ranges of 100 from the idsql_alloc row
`

func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "[--dir DIR]",
		"A tour of idsql that needs no server: it creates an SQLite file, two tables\n"+
			"(orders with snowflake keys, customers with segment keys), inserts rows with\n"+
			"plain SQL through the idsql wrapper, prints them with their generated keys,\n"+
			"decodes a key and looks keys up back to their table.", stderr)
	dir := fs.String("dir", "", "keep the SQLite file and holder cache here (default: a temporary directory, removed at exit)")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
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
	return demo(ctx, stdout, *dir)
}

// demo runs the tour in dir, writing what it does to w.
func demo(ctx context.Context, w io.Writer, dir string) error {
	say := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	step := 0
	heading := func(s string) {
		step++
		say("\n%d. %s\n", step, s)
	}

	say("idsql demo: distributed primary keys for plain SQL, on an SQLite file (no server needed)\n")
	say("working directory: %s\n", dir)

	heading("The configuration (idsql.yaml) names the tables and how each gets its keys:")
	yamlText := fmt.Sprintf(demoConfig, strconv.Quote(filepath.Join(dir, "holder")))
	say("%s", indent(yamlText, "   "))
	cfg, err := idsql.Parse("demo configuration", []byte(yamlText), time.Now())
	if err != nil {
		return err
	}

	dbPath := filepath.Join(dir, "demo.db")
	store, err := sqlitestore.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	raw := store.DB()
	defer raw.Close()

	heading("Create the application's tables. Note: no AUTOINCREMENT, no sequence.")
	ddl := []string{
		"CREATE TABLE customers (id BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL)",
		"CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, customer_id BIGINT NOT NULL, item TEXT NOT NULL, total_cents INTEGER NOT NULL)",
	}
	for _, q := range ddl {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("create tables: %w", err)
		}
		say("   %s\n", q)
	}

	heading("idsql migrate: create idsql's own tables and a segment key for customers.")
	stores := idsql.Stores{Segments: store}
	if err := idsql.Migrate(ctx, raw, cfg, stores); err != nil {
		return err
	}
	keys, err := store.ListKeys(ctx)
	if err != nil {
		return err
	}
	for _, k := range keys {
		say("   idsql_alloc row %q: max_id %d, step %d (each range of %d IDs is one UPDATE)\n", k.Key, k.MaxID, k.Step, k.Step)
	}

	db, err := idsql.Open("sqlite", sqliteDSN(dbPath), cfg, idsql.Options{
		DriverName:  "sqlite",
		KeysOptions: idsql.KeysOptions{DB: raw, SegmentStore: store},
	})
	if err != nil {
		return err
	}
	defer db.Close()

	heading("Insert rows with plain SQL through the idsql wrapper. The statements leave out\n   the id column; idsql adds it and binds a fresh key for each row:")
	var customerIDs []int64
	for _, name := range []string{"Ada Lovelace", "Grace Hopper", "Edsger Dijkstra"} {
		const q = "INSERT INTO customers (name) VALUES (?)"
		res, err := db.ExecContext(ctx, q, name)
		if err != nil {
			return fmt.Errorf("insert customer: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		customerIDs = append(customerIDs, id)
		say("   %-58s %-18q -> id %d\n", q, name, id)
	}
	var orderIDs []int64
	items := []struct {
		item  string
		cents int
	}{{"analytical engine", 120000}, {"compiler", 4999}, {"shortest path", 1500}}
	for i, it := range items {
		const q = "INSERT INTO orders (customer_id, item, total_cents) VALUES (?, ?, ?)"
		res, err := db.ExecContext(ctx, q, customerIDs[i], it.item, it.cents)
		if err != nil {
			return fmt.Errorf("insert order: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		orderIDs = append(orderIDs, id)
		say("   %-58s %-18q -> id %d\n", "INSERT INTO orders (customer_id, item, total_cents) ...", it.item, id)
	}

	heading("The rows, read back with SELECT:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "   customers.id\tname")
	rows, err := db.QueryContext(ctx, "SELECT id, name FROM customers ORDER BY id")
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
	say("   (segment keys: small, dense, increasing; taken from a range of IDs this process reserved in idsql_alloc)\n\n")
	fmt.Fprintln(tw, "   orders.id\tcustomer_id\titem\ttotal")
	rows, err = db.QueryContext(ctx, "SELECT id, customer_id, item, total_cents FROM orders ORDER BY id")
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
	say("   (snowflake keys: 64-bit, time-ordered, made in memory with no database round trip)\n")

	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return err
	}
	oid := orderIDs[0]
	heading(fmt.Sprintf("Decode order key %d (same as: idsql decode %d):", oid, oid))
	p, err := layout.Decode(oid, time.Now(), time.Minute)
	if err != nil {
		return err
	}
	say("   time      %s (%s ago)\n   worker    %d\n   sequence  %d\n   layout    %s\n",
		p.Time.UTC().Format("2006-01-02T15:04:05.000Z"), time.Since(p.Time).Round(time.Millisecond), p.Worker, p.Sequence, layout)

	heading("Look keys up back to their table (what `idsql lookup` does):")
	cid := customerIDs[1]
	origins, err := idsql.LookupIn(ctx, cfg, stores, cid)
	if err != nil {
		return fmt.Errorf("lookup %d: %w", cid, err)
	}
	for _, o := range origins {
		say("   %d -> table %s (%s key %q, range %d..%d handed to %s)\n",
			cid, o.Table, o.Strategy, o.Range.Key, o.Range.First, o.Range.Last, o.Range.Instance)
	}
	table := ""
	for k, v := range cfg.Holder.Workers {
		if v == p.Worker {
			table, _, _ = strings.Cut(k, "@")
		}
	}
	if table == "" {
		return fmt.Errorf("lookup %d: worker %d is in no holder mapping", oid, p.Worker)
	}
	say("   %d -> table %s (snowflake, worker %d; the local holder maps worker %d to %s)\n", oid, table, p.Worker, p.Worker, table)
	say("   With PostgreSQL the worker table idsql_workers records every lease, so lookup\n" +
		"   stays exact even after a worker ID moves to another table.\n")

	say("\nDone. Next:\n" +
		"   idsql serve                     an HTTP ID server (Leaf's API) with a monitor page\n" +
		"   idsql decode --json ID          take any snowflake ID apart\n" +
		"   idsql migrate --dsn postgres://... --config idsql.yaml   set up a real database\n")
	return nil
}

func indent(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return prefix + strings.Join(lines, "\n"+prefix) + "\n"
}
