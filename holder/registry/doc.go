// Package registry keeps the worker table idsql_workers: one row per worker
// lease (namespace, worker ID, table, instance, holder kind, start, last
// heartbeat, high-water timestamp, release) in the application's own
// PostgreSQL database. It is what reverse lookup reads: given a snowflake
// ID's namespace, worker ID and timestamp, Find returns the lease that issued
// it, even after the worker ID has been recycled from one table to another.
//
// # Exact boundaries
//
// Every row carries ids_after, a timestamp such that every ID issued under
// the lease has a strictly later tick. A recorded lease reports ids_after as
// its LastTime, and the snowflake generator only issues ticks after
// LastTime, so the promise holds by construction. ids_after is the later of
// the time the lease was recorded and every high-water timestamp persisted
// for the worker ID before; the previous lease of the same worker ID stopped
// (was fenced) before this one was granted. So for one worker ID the rows'
// ids_after values increase, and the ID whose tick starts at t belongs to the
// row with the greatest ids_after before t — provided t is not past that
// row's end (its release, or its last heartbeat plus Settings.Slack while it
// is live). Anything else is ErrNoLease, never a guess.
//
// # Use
//
//	reg := registry.New(db, registry.Settings{})
//	if err := reg.Migrate(ctx); err != nil { ... }
//	h := registry.Recorded(zkHolder, reg) // every lease recorded before Acquire returns
//	...
//	rec, err := reg.Find(ctx, "shop", parts.Worker, parts.Time)
//	// rec.Table == "orders"
package registry
