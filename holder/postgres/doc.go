// Package postgres is a worker-ID holder on the worker table idsql_workers
// (see holder/registry) in the application's PostgreSQL database. Every
// lease is a row of that table, so lookup needs nothing else.
//
// Modes:
//
//   - Sticky: a (table, identity) pair keeps its worker ID across restarts,
//     like the Leaf fork's MySQL mode. The first start takes the lowest
//     worker ID no sticky pair has; a restart takes over its own earlier row
//     at once, so identities must be unique among running processes
//     (host:port is).
//   - Disposable: a new worker ID at every start, never reused, like Baidu
//     uid-generator's WORKER_NODE table. When the layout's worker IDs are
//     used up, Acquire fails with ErrExhausted, naming the limit.
//   - Lease: worker IDs expire after missed heartbeats and are reused. Expiry
//     is kept on the database clock (expires = clock_timestamp() + TTL at each
//     heartbeat); the holder ends the lease locally TTL-Margin after the last
//     heartbeat that succeeded was sent, so its generator stops before the
//     row can expire and be taken over.
//
// Claims are serialized per namespace with a transaction-scoped advisory
// lock: reading the free worker IDs, ending an expired row and inserting the
// new one happen in one transaction, so two instances starting together
// never get the same worker ID.
//
//	reg := registry.New(db, registry.Settings{})
//	h, err := postgres.New(reg, postgres.Settings{Mode: postgres.Lease})
//	lease, err := h.Acquire(ctx, req)
package postgres
