// Package idsql gives SQL tables distributed 64-bit primary keys without a
// database sequence.
//
// # Quick start
//
// Describe the tables in idsql.yaml:
//
//	namespace: shop
//	holder: {kind: local, instance: app, workers: {"orders@app": 1}}
//	tables:
//	  orders: {strategy: snowflake}           # time | worker | sequence
//	  users:  {strategy: segment, step: 1000} # ranges from a database row
//
// then open the database through idsql, run Migrate once (it creates
// idsql's tables and a segment key per segment table; `idsql migrate` does
// the same), and insert as usual, leaving the key column out. A complete
// program, on PostgreSQL, or with DRIVER=mysql on MySQL or MariaDB
// (DATABASE_URL=user:pass@tcp(host:3306)/shop?parseTime=true):
//
//	package main
//
//	import (
//		"cmp"
//		"context"
//		"fmt"
//		"log"
//		"os"
//
//		_ "github.com/go-sql-driver/mysql"
//		_ "github.com/lib/pq"
//
//		"github.com/idsql/idsql/idsql"
//		_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment tables on MySQL
//	)
//
//	func main() {
//		ctx := context.Background()
//		cfg, err := idsql.Load("idsql.yaml")
//		if err != nil {
//			log.Fatal(err)
//		}
//		driver := cmp.Or(os.Getenv("DRIVER"), "postgres")
//		db, err := idsql.Open(driver, os.Getenv("DATABASE_URL"), cfg, idsql.Options{})
//		if err != nil {
//			log.Fatal(err)
//		}
//		defer db.Close()
//		for _, ddl := range []string{ // bigint keys, no sequence
//			"CREATE TABLE IF NOT EXISTS orders (id bigint PRIMARY KEY, total decimal(10,2))",
//			"CREATE TABLE IF NOT EXISTS users (id bigint PRIMARY KEY, name varchar(100))",
//		} {
//			if _, err := db.ExecContext(ctx, ddl); err != nil {
//				log.Fatal(err)
//			}
//		}
//		if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
//			log.Fatal(err)
//		}
//
//		// sqlx's named parameters read the same on both databases.
//		res, err := db.NamedExecContext(ctx, "INSERT INTO orders (total) VALUES (:total)", map[string]any{"total": 12.5})
//		if err != nil {
//			log.Fatal(err)
//		}
//		id, _ := res.LastInsertId() // the key idsql generated
//
//		type User struct {
//			ID   int64  `db:"id"` // NamedExec writes the generated key here
//			Name string `db:"name"`
//		}
//		u := &User{Name: "ann"}
//		if _, err := db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", u); err != nil {
//			log.Fatal(err)
//		}
//		origins, err := idsql.Lookup(ctx, db.DB.DB, cfg, id) // which table issued id, when, where
//		if err != nil {
//			log.Fatal(err)
//		}
//		fmt.Println("order", id, "user", u.ID, "issued for", origins[0].Table)
//	}
//
// Keys.NextID gives a key before inserting (db.NextID), and db.Keys() is
// the key set to share with pgxid (pgxid.Options.Keys) in the same
// process, so both front doors draw from one worker lease and one set of
// segment ranges.
//
// The package example runs the same on SQLite, which needs no server.
// The snowflake tables' worker IDs come from the holder: the local holder
// (the default) reads them from its map, one per table and process, which
// you keep unique; the postgres, mysql and zookeeper holders lease them to
// any number of processes (import holder/workertable or
// holder/zookeeper for those).
//
// # What is in the package
//
// Package idsql is the database/sql wrapper (Open, NewConnector,
// Register, the sqlx DB and Tx), its administration (Migrate, Lookup,
// StoresFor, DBDefaultsSQL), and the names its users start from, which
// package idsql/keyset defines (Config, Load, Keys, KeysOptions,
// NewKeys, ShardOf). A program on pgx (idsql/pgxid) imports keyset
// instead and links neither this package's driver nor sqlx.
//
// A Config (usually idsql.yaml, read with Load) names a namespace, a
// snowflake bit layout, a worker-ID holder and, per table, a key strategy:
//
//   - snowflake: time + worker + sequence (package idsql/snowflake), with the
//     worker ID leased from a holder (package holder);
//   - segment: ranges handed out by a database row and double-buffered in
//     memory (package idsql/segment).
//
// The same file drives the database/sql wrapper, the code generator
// (cmd/idsqlgen), the idsql command and its HTTP ID server.
//
// Holders, segment stores and the Redis buffer plug in by name, as
// database/sql drivers do (package idsql/kinds): a program imports the
// ones its configuration names, and a configuration naming one that is
// not linked in fails with the import to add. The local holder and
// PostgreSQL's segment store need no import:
//
//	import (
//		_ "github.com/go-sql-driver/mysql"
//		"github.com/idsql/idsql/idsql"
//		_ "github.com/idsql/idsql/holder/zookeeper"       // holder.kind: zookeeper
//		_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment tables on MySQL
//	)
//
// Migrate and Lookup find the stores of the database they are given
// (StoresFor), wrapped by idsql or not.
//
// A filled INSERT's LastInsertId is the first key the wrapper generated,
// and only when that key is known to be in the table: a statement that
// wrote no row answers 0, and so does an upsert (ON CONFLICT ... DO
// UPDATE, ON DUPLICATE KEY UPDATE) that may have updated an existing row,
// which keeps its own key. MySQL and MariaDB tell a one-row upsert's insert
// from its update by the rows they count (not with clientFoundRows), so
// there such an upsert that inserted answers its key; PostgreSQL and
// SQLite do not, and answer 0: read the key with RETURNING. NamedExec
// writes back the same keys, and none it does not know.
package idsql
