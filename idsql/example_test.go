package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
)

// exampleConfig is the idsql.yaml of the examples: one snowflake table and
// one segment table.
const exampleConfig = `
namespace: shop
layout: leaf
holder:
  kind: local
  instance: example
  workers: {"orders@example": 7}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 100}
`

// exampleSchema is the application's own tables.
const exampleSchema = `
CREATE TABLE orders (id BIGINT NOT NULL PRIMARY KEY, total REAL NOT NULL);
CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL);
`

// exampleSetup does what ExampleOpen does step by step: it parses
// exampleConfig, opens the segment store on a temporary SQLite file of its
// own and makes the application's tables in another, at path. cleanup
// removes it all.
func exampleSetup(ctx context.Context) (cfg *keyset.Config, store *segment.SQLStore, path string, cleanup func()) {
	dir, err := os.MkdirTemp("", "idsql-example")
	if err != nil {
		log.Fatal(err)
	}
	path = filepath.Join(dir, "shop.db")
	if cfg, err = keyset.Parse("idsql.yaml", []byte(exampleConfig), time.Now()); err != nil {
		log.Fatal(err)
	}
	if store, err = sqlitestore.Open(ctx, filepath.Join(dir, "idsql.db")); err != nil {
		log.Fatal(err)
	}
	raw, err := sql.Open("sqlite", sqlitestore.DSN(path))
	if err != nil {
		log.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, exampleSchema); err != nil {
		log.Fatal(err)
	}
	if err := idsql.MigrateIn(ctx, raw, cfg, idsql.Stores{Segments: store}); err != nil {
		log.Fatal(err)
	}
	return cfg, store, path, func() {
		store.DB().Close()
		os.RemoveAll(dir)
	}
}

// Open returns an *idsql.DB (it embeds *sqlx.DB) whose INSERTs into
// configured tables get their keys from idsql. On the embedded SQLite
// default, segment ranges are allocated in a sqlitestore file of its own
// (SQLite lets one connection write to a file at a time, and the store must
// be able to allocate while a transaction of the application holds its
// file); snowflake worker IDs come here from a static map (in production:
// ZooKeeper or the database).
func ExampleOpen() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "idsql-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	cfg, err := keyset.Parse("idsql.yaml", []byte(exampleConfig), time.Now())
	if err != nil {
		log.Fatal(err)
	}
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "idsql.db")) // idsql_alloc and idsql_alloc_log
	if err != nil {
		log.Fatal(err)
	}
	defer store.DB().Close()

	// The application's database, through idsql.
	db, err := idsql.Open("sqlite", sqlitestore.DSN(filepath.Join(dir, "shop.db")), cfg, idsql.Options{KeysOptions: keyset.KeysOptions{
		SegmentStore: store,
		Holder:       holder.Static(map[string]int64{"orders": 7}),
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, exampleSchema); err != nil { // DDL passes unchanged
		log.Fatal(err)
	}
	// A segment key per segment table, above the rows a table already has,
	// in the store db was opened with.
	if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
		log.Fatal(err)
	}

	// The INSERTs do not name the key column: idsql adds it and binds a key.
	var ids []int64
	for _, total := range []float64{12.5, 99} {
		res, err := db.ExecContext(ctx, "INSERT INTO orders (total) VALUES (?)", total)
		if err != nil {
			log.Fatal(err)
		}
		id, err := res.LastInsertId() // the generated key
		if err != nil {
			log.Fatal(err)
		}
		ids = append(ids, id)
	}
	res, err := db.ExecContext(ctx, "INSERT INTO users (name) VALUES (?), (?)", "ann", "bob")
	if err != nil {
		log.Fatal(err)
	}
	user, _ := res.LastInsertId() // the first row's key

	layout, _ := cfg.SnowflakeLayout()
	p := layout.Decompose(ids[0])
	fmt.Println("order keys positive and increasing:", ids[0] > 0 && ids[1] > ids[0])
	fmt.Println("first order issued by worker", p.Worker)
	fmt.Println("first user key:", user)

	var n int
	if err := db.GetContext(ctx, &n, "SELECT count(*) FROM users WHERE id >= ?", user); err != nil {
		log.Fatal(err)
	}
	fmt.Println("users stored:", n)
	// Output:
	// order keys positive and increasing: true
	// first order issued by worker 7
	// first user key: 1
	// users stored: 2
}

// NewConnector wraps any driver.Connector, here modernc.org/sqlite's, for
// sql.OpenDB: code that takes a *sql.DB (sqlc, gorm, bun, ...) gets the
// keys too.
func ExampleNewConnector() {
	ctx := context.Background()
	cfg, store, path, cleanup := exampleSetup(ctx) // as in ExampleOpen
	defer cleanup()

	inner, err := sqlite.NewConnector(sqlitestore.DSN(path))
	if err != nil {
		log.Fatal(err)
	}
	connector, err := idsql.NewConnector(inner, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{
		SegmentStore: store,
		Holder:       holder.Static(map[string]int64{"orders": 3}),
	}})
	if err != nil {
		log.Fatal(err)
	}
	db := sql.OpenDB(connector) // closing db closes the connector and releases its leases
	defer db.Close()

	res, err := db.ExecContext(ctx, "INSERT INTO orders (total) VALUES (?)", 42.0)
	if err != nil {
		log.Fatal(err)
	}
	id, _ := res.LastInsertId()
	var total float64
	if err := db.QueryRowContext(ctx, "SELECT total FROM orders WHERE id = ?", id).Scan(&total); err != nil {
		log.Fatal(err)
	}
	layout, _ := cfg.SnowflakeLayout()
	fmt.Println("row stored under its key:", total)
	fmt.Println("worker:", layout.Decompose(id).Worker)
	// Output:
	// row stored under its key: 42
	// worker: 3
}

// Keys issues keys without inserting: for child rows that must name their
// parent before it is written, or to hand keys to another system. A
// snowflake table needs no database at all.
func ExampleKeys_NextID() {
	ctx := context.Background()
	cfg, err := keyset.Parse("idsql.yaml", []byte(`
namespace: shop
layout: leaf
tables:
  orders:   {strategy: snowflake}
  payments: {strategy: snowflake}
`), time.Now())
	if err != nil {
		log.Fatal(err)
	}
	// One worker ID per snowflake table: each table's generator holds its
	// own lease.
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Static(map[string]int64{"orders": 1, "payments": 2})})
	if err != nil {
		log.Fatal(err)
	}
	defer keys.Close()

	a, err := keys.NextID(ctx, "orders")
	if err != nil {
		log.Fatal(err)
	}
	b, _ := keys.NextID(ctx, "orders")
	batch, _ := keys.NextIDs(ctx, "payments", 3)

	layout, _ := cfg.SnowflakeLayout()
	fmt.Println("positive and increasing:", a > 0 && b > a && batch[0] < batch[1] && batch[1] < batch[2])
	fmt.Println("workers:", layout.Decompose(a).Worker, layout.Decompose(batch[0]).Worker)
	_, err = keys.NextID(ctx, "refunds")
	fmt.Println(err != nil)
	// Output:
	// positive and increasing: true
	// workers: 1 2
	// true
}

// LookupIn traces a key back to the table that issued it: a segment key
// through the logged ranges (here in the SQLite store), a snowflake key
// through the worker table on PostgreSQL or MySQL (Lookup).
func ExampleLookupIn() {
	ctx := context.Background()
	cfg, store, _, cleanup := exampleSetup(ctx) // as in ExampleOpen
	defer cleanup()
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{SegmentStore: store})
	if err != nil {
		log.Fatal(err)
	}
	defer keys.Close()
	id, err := keys.NextID(ctx, "users")
	if err != nil {
		log.Fatal(err)
	}

	origins, err := idsql.LookupIn(ctx, cfg, idsql.Stores{Segments: store}, id)
	if err != nil {
		log.Fatal(err)
	}
	for _, o := range origins {
		fmt.Printf("%d: table %s, %s range %d..%d\n", id, o.Table, o.Strategy, o.Range.First, o.Range.Last)
	}
	// Output:
	// 1: table users, segment range 1..100
}

// The quick start of the package documentation on SQLite, which needs no
// server: the INSERTs leave the key column out and idsql fills it.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "idsql-quickstart")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	cfg, err := keyset.Parse("idsql.yaml", []byte(`
namespace: shop
holder: {kind: local, instance: app, workers: {"orders@app": 1}, cache_dir: `+dir+`}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 1000}
`), time.Now())
	if err != nil {
		log.Fatal(err)
	}
	// On SQLite the segment store is a file of its own (on PostgreSQL and
	// MySQL it is in the application's database).
	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "idsql.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.DB().Close()
	db, err := idsql.Open("sqlite", sqlitestore.DSN(filepath.Join(dir, "shop.db")), cfg,
		idsql.Options{KeysOptions: keyset.KeysOptions{SegmentStore: store}})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, exampleSchema); err != nil {
		log.Fatal(err)
	}
	if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
		log.Fatal(err)
	}

	res, err := db.ExecContext(ctx, "INSERT INTO orders (total) VALUES (?)", 12.5)
	if err != nil {
		log.Fatal(err)
	}
	id, _ := res.LastInsertId()

	type User struct {
		ID   int64  `db:"id"` // NamedExec writes the generated key here
		Name string `db:"name"`
	}
	u := &User{Name: "ann"}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", u); err != nil {
		log.Fatal(err)
	}

	origins, err := idsql.LookupIn(ctx, cfg, idsql.Stores{Segments: store}, int64(u.ID))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("order key is a snowflake ID:", id > 1<<40)
	fmt.Println("user key:", u.ID)
	fmt.Println("user key issued for table", origins[0].Table)
	// Output:
	// order key is a snowflake ID: true
	// user key: 1
	// user key issued for table users
}

// A table's text form writes its keys at full width with a prefix, reads
// them back only with that prefix, and keeps their order.
func ExampleTextForm() {
	orders := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}
	a, b := orders.Format(7139826715123912704), orders.Format(7139826715123912705)
	fmt.Println(a, b, a < b)

	id, err := orders.Parse(a)
	fmt.Println(id, err)

	users := keyset.TextForm{Encoding: keyset.Base58, Prefix: "usr_"}
	_, err = users.Parse(a)
	fmt.Println(err)
	// Output:
	// ord_8VQTtCjBWgS ord_8VQTtCjBWgT true
	// 7139826715123912704 <nil>
	// idsql: not a key in its text form: want the prefix "usr_" (base58, prefix usr_)
}

// MigrateWith with DBDefaults gives the key columns of the configured
// tables database-side defaults that share idsql's records, so that psql,
// COPY, INSERT ... SELECT and services in other languages get keys too.
// A snowflake table's default needs worker IDs kept for the database, in
// every process's configuration (holder.database_workers). It needs
// PostgreSQL or MariaDB (here lib/pq, and holder/workertable imported for
// holder.kind: postgres); the DSN is a placeholder.
func ExampleMigrateWith() {
	ctx := context.Background()
	cfg, err := keyset.Parse("idsql.yaml", []byte(`
namespace: shop
holder: {kind: postgres, mode: lease, database_workers: 1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 100}
`), time.Now())
	if err != nil {
		log.Fatal(err)
	}
	db, err := sql.Open("postgres", "postgres://app@db.internal/shop")
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	if err := idsql.MigrateWith(ctx, db, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
		log.Fatal(err)
	}
	// From here on, `INSERT INTO orders (total) VALUES (9.5)` in psql
	// gets a key that idsql lookup traces to orders.
}

func ExampleConfig_Bounds() {
	cfg, err := keyset.Parse("idsql.yaml", []byte(exampleConfig), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		log.Fatal(err)
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lo, hi, err := cfg.Bounds("orders", jan, jan.AddDate(0, 1, 0))
	fmt.Println(lo, hi, err)
	// SELECT ... FROM orders WHERE id BETWEEN lo AND hi: the orders of January.
	_, _, err = cfg.Bounds("users", jan, jan.AddDate(0, 1, 0))
	fmt.Println(errors.Is(err, keyset.ErrNoTimeOrder))
	// Output:
	// 2006515713438646272 2017749737272246271 <nil>
	// true
}
