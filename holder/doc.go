// Package holder defines how snowflake generators obtain worker IDs.
//
// A Holder grants a Lease on one worker ID for a (namespace, table,
// instance) request. While the lease is live no other lease of the namespace
// holds the same worker ID; when the holder can no longer promise that
// (ZooKeeper session in doubt, heartbeats failing) it closes the lease's Done
// channel first, and the generator stops issuing IDs. Holders that persist
// timestamps refuse a lease when the wall clock is behind the last timestamp
// stored for the worker ID.
//
// Implementations live in sub-packages (holder/local, holder/postgres,
// holder/zookeeper, holder/etcd), each of which registers itself as an
// idsql holder kind (package idsql/kinds) when imported; Fixed serves a
// single process with a static worker ID:
//
//	lease, err := holder.Fixed(7).Acquire(ctx, holder.Request{
//		Namespace: "shop", Table: "orders", WorkerBits: 10,
//		Instance: holder.LocalInstance(8080),
//	})
package holder
