// Package zookeeper is a worker-ID holder on ZooKeeper
// (github.com/go-zookeeper/zk).
//
// Sticky mode is Leaf's: each (table, identity) pair owns a persistent
// sequential node <Root>/<namespace>/forever/<table>@<identity>-<seq> whose
// sequence number is its worker ID, for good. The lease writes the current
// timestamp into the node every Report (3 s), and a start refuses when the
// node's timestamp is ahead of the wall clock. A local cache file (CacheDir)
// mirrors the worker ID and timestamp; when ZooKeeper cannot be reached at
// start-up the holder falls back to it, with the same clock check. Only at
// start-up: once the holder has leased the identity through a session, a
// lease lost with that session is never taken up again from the cache (the
// process may be cut off while a replacement owns the identity on
// ZooKeeper); Acquire refuses until ZooKeeper answers. Unlike
// Leaf, the worker ID is parsed from the node ZooKeeper really created (never
// 0 by accident), and a sequence number outside the layout's worker bits is
// an error.
//
// Recycle mode has exactly 2^workerBits worker IDs. Claiming one is a single
// create of the ephemeral node <Root>/<namespace>/workers/<id>, so two
// instances starting together cannot both get it; the last high-water
// timestamp of each worker ID is kept in <Root>/<namespace>/timestamps/<id>
// and checked against the clock at the claim. The fencing promise: the
// lease ends (Done is closed) as soon as the client reports the session
// disconnected or expired, and in any case SessionTimeout-Margin after the
// last successful write was sent, before the server could expire the
// session and free the node. Acquire again after a lease is lost, and Release
// the lost lease: while the session survives, its node is deleted only then
// (after its generator has surely stopped), never adopted by another lease.
// Every lease starts after the tick of its claim, so a worker ID taken over
// within one millisecond never repeats the previous holder's IDs.
//
//	h, err := zookeeper.New(zookeeper.Settings{Servers: []string{"zk1:2181"}, Mode: zookeeper.Recycle})
//	defer h.Close()
//	lease, err := h.Acquire(ctx, req)
package zookeeper
