// Package segment is idsql's segment generator: Meituan Leaf's segment mode
// (ranges of IDs handed out by a database row, double-buffered in memory),
// with the waits and races of the original taken out.
//
// # Protocol
//
// Each key (a table, usually) is a row of idsql_alloc:
//
//	biz_tag | max_id | step | description | update_time
//
// A range is allocated by one transaction,
//
//	UPDATE idsql_alloc SET max_id = max_id + $step, update_time = $now
//	WHERE biz_tag = $key RETURNING max_id, step
//	INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created) ...
//
// which hands the caller [max_id-step+1, max_id]. The row lock orders
// allocators on every machine, so ranges of one key never overlap; the log
// records every range for reverse lookup (SQLStore.Lookup) and audit. A
// range is used only after its transaction committed, and a range that was
// not used up before a restart is skipped, never reused.
//
// # Generator
//
// A Generator keeps two segments per key. IDs come from the current one:
// Next is one atomic add on the segment's cursor and one comparison with a
// bound, small enough to be inlined into the caller, so it allocates nothing
// and runs at about the speed of a bare atomic counter (BENCHMARKS.md). The caller that takes the ID at Settings.Threshold (10%) of the
// segment starts the one background load of the next segment; when the
// current segment runs out, switching to the loaded one is a pointer swap.
// Only if both are empty does a caller wait, up to Settings.WaitTimeout,
// for the load in flight. Failed loads retry with backoff while buffered
// IDs keep flowing, and the generator recovers by itself when the database
// returns.
//
// The step adapts as in Leaf: a segment consumed faster than
// Settings.TargetDuration doubles the next step (up to Settings.MaxStep), a
// slower one halves it, never below the step stored for the key.
//
// The Store interface hides the database. SQLStore implements it with
// database/sql for PostgreSQL (NewPostgresStore), MySQL and MariaDB
// (package mysqlstore, one round trip per range through a stored procedure)
// and an embedded SQLite file (package sqlitestore).
//
// # Leaf's table
//
// StoreSettings.LeafTable points SQLStore at an existing Meituan Leaf
// leaf_alloc table instead of idsql_alloc. Leaf's max_id is the next ID to
// hand out (Leaf owns [max_id - step, max_id) after its UPDATE), one more
// than idsql_alloc's; the store counts as Leaf does on that table and
// allocates with the same atomic UPDATE, so Leaf servers and idsql can
// allocate from the same rows at the same time without overlapping.
//
// # Example
//
//	store := segment.NewPostgresStore(db)
//	if err := store.Migrate(ctx); err != nil { ... }
//	_ = store.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 1000, AdoptTable: "orders"})
//	gen, err := segment.New(ctx, store, segment.Settings{})
//	if err != nil { ... }
//	defer gen.Close()
//	orders, err := gen.Key(ctx, "orders")
//	id, err := orders.Next(ctx)
package segment
