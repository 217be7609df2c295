// Package engine is idsql's one statement engine: every front door (the
// database/sql wrapper in package idsql, native pgx in idsql/pgxid, any
// later one) hands it the statement and its arguments (Run), and it
// decides the rest, once for all of them:
//
//   - the plan, cached by query text: does the statement INSERT into a
//     configured table, and how is it rewritten (Engine.Plan, over the
//     rewriter of idsql/internal/rewrite);
//   - the plan's state, cached by plan: the table's key column was found
//     and is 64-bit (Engine.CheckKey, ErrNoKeyColumn,
//     dialect.ErrNarrowKey), the table's key source, its shard bits;
//   - which rows take a key in this execution (absent, 0, NULL, DEFAULT,
//     fill_zero, shards, the batch limit MaxBatch) and the keys
//     themselves (Engine.Fill; Engine.FillBatch for statements sent
//     together, which draws no key until every one has passed);
//   - what the result may say about them: LastInsertId (Engine.InsertID)
//     and the keys NamedExec writes back (Engine.Written), never a key no
//     row holds (Known);
//   - the rows of a copy (Engine.Copy: pgx's CopyFrom, whose rows the
//     engine keys as the copy reads them), the rows of a named execution
//     (NamedRows: whether they keep their own keys, Engine.OwnKeys; the
//     zero keys set before it binds them, Engine.FillZeros).
//
// A front door supplies only its adapter (Door): how its arguments look
// (as driver.NamedValue), how to read the catalog over its connection
// (ColumnReader), how it sends a statement. The
// front-door conformance suite (TestFrontDoors in idsql/pgxid) runs one
// table of cases through every door on every database.
//
// A front door that decided any of this on its own would drift from the
// others (pgxid accepting a table without its key column that the wrapper
// refuses, say); the front-door suite holds every door to the same
// answers.
package engine
