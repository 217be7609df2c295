// Package local is a worker-ID holder for fixed fleets: a static map from
// instance identity to worker ID (the Leaf fork's local mode), plus a cache
// file per worker ID that keeps the generator's high-water timestamp across
// restarts, so a process whose clock is behind the last run refuses to
// start.
//
// The map is keyed by "table@identity" or, for an identity that serves one
// table, by the identity alone (holder.Instance.Key: host:port by default).
// The cache file, <Dir>/<namespace>.worker-<id>.json, is written when a lease
// starts, every Settings.Refresh while it runs, and on release.
//
// Nothing outside the process checks that two processes are not configured
// with the same worker ID; within one Holder a worker ID is leased once at a
// time.
//
//	h, err := local.New(local.Settings{
//		Workers: map[string]int64{"orders@10.0.0.1:8080": 1, "10.0.0.2:8080": 2},
//		Dir:     "/var/lib/idsql",
//	})
package local
