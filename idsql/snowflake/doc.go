// Package snowflake implements snowflake IDs: 63-bit positive integers made
// of a time, a worker ID and a sequence number, which many processes can
// issue at once without talking to each other, as long as no two of them
// hold the same worker ID at the same time.
//
// # Bit layout
//
// A Layout says how an ID splits, from the most significant bit down:
//
//	0 | time (TimeBits) | worker (WorkerBits) | sequence (SequenceBits)
//
// The sign bit is always 0 and the three widths sum to 63 (or to 53, as in
// JS53). Time counts
// ticks of Unit (1ms to 1s) since Epoch. Layout.WorkerLow swaps worker and
// sequence, as Sonyflake orders them. The presets are Leaf (Twitter's and
// Meituan Leaf's 41/10/12 bits of milliseconds, the default), UID32 (Baidu
// uid-generator's shape with 32 time bits of seconds, good until 2152),
// Sony (sony/sonyflake's layout and bit order: its IDs decode) and
// SonyWidths (Sonyflake's widths in idsql's order, what the retired
// "sonyflake" preset made) and JS53 (IDs below 2^53, which a JavaScript
// number holds exactly: 38 bits of 10 ms until 2112, 256 workers, 12,800
// IDs a second per worker). Compose and Decompose convert between IDs and Parts; Decode also checks that the
// layout could have produced an ID by now. Bounds gives the smallest ID
// range [lo, hi] whose IDs are exactly those with a time in [from, to),
// for WHERE id BETWEEN lo AND hi and for key-range partitions by month.
//
// # Generators
//
// A Generator issues strictly increasing IDs under one Lease: the worker
// ID, the horizon persisted before the lease (the first ID is stamped after
// it), and the lease's limits (a deadline on the generator's clock and a
// horizon in wall time). Every ID is checked against both limits with the
// same clock reading that stamps it, so a process paused past its deadline
// stamps nothing when it resumes (with Settings.Block too: an ID of a block
// is handed out only to a call whose own reading is in the block's tick
// and before the deadline; see NextID). A clock that steps back makes the
// generator wait up to Settings.MaxBackward; one behind the persisted
// horizon at start makes New wait up to MaxStartWait or refuse. Cached is
// a ring buffer of pre-issued IDs in front of a Generator, after Baidu
// uid-generator's CachedUidGenerator.
//
// The package defines the Lease it consumes and knows nothing of where
// worker IDs come from; package holder grants them (ZooKeeper, a database
// table, a local map). A Clock is injected so tests can move time without
// sleeping.
//
// # Example
//
//	lease, err := holder.Fixed(7).Acquire(ctx, holder.Request{
//		Namespace: "shop", Table: "orders", WorkerBits: snowflake.Leaf.WorkerBits,
//	})
//	if err != nil { ... }
//	g, err := snowflake.New(ctx, lease, snowflake.Settings{Layout: snowflake.Leaf})
//	if err != nil { ... }
//	id, err := g.NextID(ctx)
//	p := snowflake.Leaf.Decompose(id) // p.Worker == 7
package snowflake
