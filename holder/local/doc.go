// Package local is a worker-ID holder for fixed fleets: a static map from
// instance identity to worker ID (the Leaf fork's local mode), plus a cache
// file per worker ID holding its horizon: the time before which every ID
// issued under it is stamped.
//
// The map is keyed by "table@identity" or, for an identity that serves one
// table, by the identity alone (holder.Instance.Key: host:port by default).
// The cache file, <Dir>/<namespace>.worker-<id>.json, is written durably
// when a lease starts and every Settings.Refresh while it runs, each time
// with a horizon two refresh periods ahead; the generator never issues past
// the horizon on disk, and a new lease of the worker ID starts after it (a
// process restarted right after a crash waits up to two refresh periods). On
// release the horizon is lowered to the last issued tick.
//
// A lock file beside each cache file makes a worker ID exclusive on the host:
// a second process mapped to it is refused while the first lives (its error
// names the holder's pid), and the kernel frees it when the first exits
// however it exits. The holder sees no other host: a map copied to two
// hosts grants one worker ID to both. idsql records every lease in the
// worker table (registry.Recorded) on PostgreSQL and MySQL, which refuses
// the second one while the first's row is renewed; without it the two
// would collide.
//
//	h, err := local.New(local.Settings{
//		Workers: map[string]int64{"orders@10.0.0.1:8080": 1, "10.0.0.2:8080": 2},
//		Dir:     "/var/lib/idsql",
//	})
package local
