// Command minimal is the smallest idsql program: PostgreSQL through
// lib/pq, one snowflake table, worker IDs from the local holder (the
// default, which needs no server). It links no ZooKeeper, Redis or MySQL
// code: those plug in only when a program imports them (see packages
// holder/holderkind and idsql/kinds).
//
//	go run ./examples/minimal -dsn postgres://localhost/shop
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	_ "github.com/lib/pq" // the "postgres" driver

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

func main() {
	dsn := flag.String("dsn", os.Getenv("IDSQL_DSN"), "PostgreSQL DSN")
	flag.Parse()
	if err := run(context.Background(), *dsn, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run inserts one order and prints its key.
func run(ctx context.Context, dsn string, out io.Writer) error {
	cfg := &keyset.Config{
		Namespace: "minimal",
		Holder:    keyset.HolderConfig{Instance: "minimal-1", Workers: map[string]int64{"minimal-1": 1}},
		Tables:    map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}},
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{})
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS orders (id bigint PRIMARY KEY, note text NOT NULL)"); err != nil {
		return err
	}
	// The worker table, where the local holder's leases are recorded.
	if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
		return err
	}
	res, err := db.ExecContext(ctx, "INSERT INTO orders (note) VALUES ($1)", "hello")
	if err != nil {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(out, id)
	return err
}
