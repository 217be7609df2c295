// Package workertable is the worker-table holder: worker IDs handed out
// from the worker table idsql_workers (see holder/registry) in the
// application's own database, PostgreSQL or MySQL/MariaDB (the registry's
// dialect decides which SQL it speaks). Every lease is a row of that
// table, so lookup needs nothing else. Importing it registers holder.kind
// "postgres" and "mysql" (Kind), each the dialect of the worker table's
// database; idsql refuses either on a database of the other.
//
// Modes:
//
//   - Sticky: a (table, identity) pair keeps its worker ID across restarts,
//     like the Leaf fork's MySQL mode. The first start takes the lowest
//     worker ID no sticky pair has. The identity is exclusive while its
//     owner lives: a restart waits for its earlier row to expire on the
//     database clock, and refuses (holder.IdentityInUseError) once it sees
//     that row renewed, since then another live process holds it. An
//     identity that cannot be unique (no instance ID, port 0) is refused.
//   - Disposable: a new worker ID at every start, never reused, like Baidu
//     uid-generator's WORKER_NODE table. When the layout's worker IDs are
//     used up, Acquire fails with ErrExhausted, naming the limit.
//   - Lease: worker IDs expire after missed heartbeats and are reused.
//
// In every mode a row expires TTL after the start of its last heartbeat, on
// the database clock (PostgreSQL's clock_timestamp(); on MySQL, UTC read
// when the statement evaluates it, see holder/registry), and the holder
// ends the lease locally TTL-Margin after the last heartbeat that succeeded
// was sent, so its generator stops before the row can expire and be taken
// over. A heartbeat that finds its row expired or ended vouches for
// nothing.
//
// Claims are serialized per namespace with a transaction-scoped lock
// (PostgreSQL: an advisory lock; MySQL: the namespace's row in
// idsql_worker_locks): reading the free worker IDs, ending an expired row
// and inserting the new one happen in one transaction, so two instances
// starting together never get the same worker ID. Rows name the holder as
// "postgres/<mode>" or "mysql/<mode>".
//
//	reg := registry.New(db, registry.Settings{}) // dialect from db's driver
//	h, err := workertable.New(reg, workertable.Settings{Mode: workertable.Lease})
//	lease, err := h.Acquire(ctx, req)
package workertable
