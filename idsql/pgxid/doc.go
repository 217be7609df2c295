// Package pgxid gives native pgx (github.com/jackc/pgx/v5) code idsql's
// keys: a DB wraps a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx and fills the
// key column of INSERTs into configured tables, as the database/sql
// wrapper does: both are adapters over one statement engine
// (idsql/internal/engine), which makes every decision about which rows take
// a key, and both draw from the same keyset.Keys. The front-door
// conformance suite (TestFrontDoors) runs the same cases through both.
//
// DB and Tx have pgx's Exec, Query, QueryRow, SendBatch and CopyFrom, so
// they satisfy the DBTX interface that sqlc generates for pgx/v5, and Tx
// is a pgx.Tx (sqlc's WithTx takes it):
//
//	pool, err := pgxpool.New(ctx, dsn)
//	db, err := pgxid.New(pool, cfg, pgxid.Options{})
//	defer db.Close()                                 // releases worker leases; the pool stays open
//	q := sqlcdb.New(db)                              // sqlc's generated Queries
//	_, err = db.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1)", 7) // id filled
//
// What is filled:
//
//   - Exec, Query and QueryRow: an INSERT into a configured table that does
//     not list its key column gets the column and one key per VALUES row,
//     appended as parameters after the caller's ($n+1, ...). One that lists
//     the key column gets a key for each row that gives it as DEFAULT, NULL
//     or 0, or as a bind value that is 0 or NULL (what ORMs send for a new
//     row), unless the table sets fill_zero: false; a non-zero key is kept.
//     pgx's leading options (QueryExecMode, QueryResultFormats) keep
//     working.
//   - pgx.NamedArgs, pgx.StrictNamedArgs and any other pgx.QueryRewriter:
//     pgx rewrites the statement on the connection that runs it, and the
//     key is filled after that, into the rewritten statement, on that
//     connection. The order is pgx's own: named arguments first, keys next.
//   - SendBatch: every queued INSERT is filled as Exec would fill it; the
//     caller's Batch is not modified, so it can be inspected afterwards.
//     No key is drawn until every INSERT of the batch has passed its
//     checks, and each table's keys are drawn in one request, so a batch
//     refused (max_id included) sends nothing and costs no key. Queries
//     with a pgx.QueryRewriter are filled by pgx as it sends them, one at
//     a time.
//   - CopyFrom into a configured table whose column list lacks the key
//     column: the column is added and each row gets a key. When the list
//     has it, a row whose key is 0 or NULL gets one in its place, as an
//     INSERT's row would (fill_zero). Keys are drawn in growing blocks
//     (16 up to 1,024), so a failed or short copy skips some keys (gaps
//     are allowed; keys are never reused).
//   - Prepare (Tx, and a DB on a *pgx.Conn): a prepared INSERT is prepared
//     in its filled form, and executing it by name fills fresh keys.
//   - A sharded table (shard: in its configuration): each key is drawn in
//     the shard of its row's shard column value (keyset.ShardOf), a bind
//     parameter or a literal, in INSERTs and COPY alike, as the
//     database/sql wrapper draws it. A row whose value has no shard (NULL,
//     a float, an expression) is refused.
//
// Everything else passes to pgx unchanged, arguments included. Statements
// the rewriter cannot fill (INSERT ... SELECT, several statements in one
// string) pass unchanged when the key column has a default and fail with an
// error naming the table otherwise; a key column narrower than 64 bits is
// refused (idsql.ErrNarrowKey). Keys travel as bind parameters, so pgx's
// statement cache sees one statement text per INSERT shape.
//
// pgx reports what a statement did through pgconn.CommandTag, which has no
// LastInsertId: use INSERT ... RETURNING id, or take a key first with
// Keys().NextID and list the key column. RETURNING is also the way to
// learn the key of an upsert's row (ON CONFLICT ... DO UPDATE): a row it
// updated keeps its own key, not the one drawn for it.
//
// Keys are built as idsql.NewConnector builds them, on a database/sql pool
// (pgx's stdlib driver) of the wrapped connection's configuration, so
// segment allocations and lease records commit on their own, whatever the
// caller's transaction does. Share one keyset.Keys with a database/sql
// wrapper through Options.Keys.
package pgxid
