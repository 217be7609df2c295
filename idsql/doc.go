// Package idsql gives SQL tables distributed 64-bit primary keys without a
// database sequence.
//
// # Quick start
//
// Describe the tables in idsql.yaml:
//
//	namespace: shop
//	holder: {kind: local, instance: web-1, workers: {"orders@web-1": 1}}
//	tables:
//	  orders: {strategy: snowflake}           # time | worker | sequence
//	  users:  {strategy: segment, step: 1000} # ranges from a database row
//
// then open the database through idsql, run Migrate once (it creates
// idsql's tables and a segment key per segment table; `idsql migrate` does
// the same), and insert as usual, leaving the key column out:
//
//	import (
//		_ "github.com/lib/pq" // or _ "github.com/go-sql-driver/mysql" with "mysql" below
//
//		"github.com/idsql/idsql/idsql"
//	)
//
//	cfg, err := idsql.Load("idsql.yaml")
//	db, err := idsql.Open("postgres", "postgres://app@localhost/shop", cfg, idsql.Options{})
//	err = idsql.Migrate(ctx, db.DB.DB, cfg)
//
//	res, err := db.ExecContext(ctx, "INSERT INTO orders (total) VALUES ($1)", 12.5)
//	id, err := res.LastInsertId() // the key idsql generated
//
//	type User struct {
//		ID   int64  `db:"id"` // NamedExec writes the generated key here
//		Name string `db:"name"`
//	}
//	u := &User{Name: "ann"}
//	_, err = db.NamedExecContext(ctx, "INSERT INTO users (name) VALUES (:name)", u)
//
//	origins, err := idsql.Lookup(ctx, db.DB.DB, cfg, id) // which table issued id, when, where
//
// The package example runs this on SQLite, which needs no server; on MySQL
// the segment store needs _ "github.com/idsql/idsql/idsql/segment/mysqlstore".
// The snowflake tables' worker IDs come from the holder: the local holder
// (the default) reads them from its map, one per table and process, which
// you keep unique; the postgres, mysql and zookeeper holders lease them to
// any number of processes (import holder/postgres, holder/mysql or
// holder/zookeeper for those).
//
// # What is in the package
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
