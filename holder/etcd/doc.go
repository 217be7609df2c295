// Package etcd is a worker-ID holder on etcd (go.etcd.io/etcd/client/v3,
// the v3 API over gRPC; etcd 3.4 and later: the tests run client v3.5 against
// Debian's etcd-server 3.4.23).
//
// Every worker lease is an etcd lease of its own, granted with TTL and kept
// alive by the holder every Report. Keys live under <Prefix>/<namespace>/:
//
//	recycle/claims/<id>   the claim on worker ID <id>, attached to the lease
//	recycle/workers/<id>  the worker ID's horizon, persistent
//	sticky/next           the next sticky worker ID to hand out, persistent
//	sticky/ids/<table>@<identity>        the identity's worker ID and horizon, persistent
//	sticky/ids/<table>@<identity>/owner  the identity's claim, attached to the lease
//
// The two modes keep apart key spaces, so every process of a namespace must
// use the same mode, as with the ZooKeeper holder.
//
// Recycle mode has exactly 2^workerBits worker IDs: a claim is one
// transaction that creates the claim key only if it does not exist
// (CreateRevision == 0), so two processes never both win. Sticky mode gives
// each (table, identity) pair a worker ID of its own for good, taken from
// sticky/next by a transaction that compares its revision; its claim is the
// owner key, created the same way. A twin that asks for an identity whose
// owner is alive (its lease was renewed within the last Report) is refused
// at once with a *holder.IdentityInUseError naming the owner's instance,
// host, pid and since when; the owner is not disturbed. An owner that has
// stopped renewing (a crashed process) is waited for until its lease
// expires.
//
// Fencing: a lease's deadline is the send time of the last grant or
// keep-alive request that etcd answered plus the TTL etcd answered with,
// less Margin. etcd cannot expire the lease before that TTL has run from
// when it received the request, which is after it was sent, so the
// generator has stopped issuing under the worker ID before anyone else can
// claim it. Before a lease vouches for IDs up to a time, that time (the
// horizon) is written into the worker's persistent key by a transaction
// that succeeds only while the lease's claim is the one it created
// (comparing the claim's CreateRevision); the next holder of the worker ID
// issues only after it.
//
//	h, err := etcd.New(etcd.Settings{Endpoints: []string{"127.0.0.1:2379"}, Mode: etcd.Recycle})
//	defer h.Close()
//	lease, err := h.Acquire(ctx, req)
package etcd
