package redisqueue

import "sync/atomic"

// Stats counts what a Queue did since New.
type Stats struct {
	Handed     uint64 // keys handed to callers (fallback keys included)
	Fallback   uint64 // keys handed out from the fallback generator
	RedisCalls uint64 // commands and scripts sent to Redis (round trips)
	Pops       uint64 // pop scripts run
	Pushes     uint64 // push scripts run (one per chunk)
	Refills    uint64 // ranges allocated from the store and pushed
	Restarts   uint64 // Redis run_id changes seen
	Outages    uint64 // times Redis was found unreachable after answering
}

type stats struct {
	handed, fallback, calls, pops, pushes, refills, restarts, outages atomic.Uint64
}

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	s := &q.stats
	return Stats{
		Handed: s.handed.Load(), Fallback: s.fallback.Load(), RedisCalls: s.calls.Load(),
		Pops: s.pops.Load(), Pushes: s.pushes.Load(), Refills: s.refills.Load(),
		Restarts: s.restarts.Load(), Outages: s.outages.Load(),
	}
}
