package snowflake

import (
	"sync/atomic"
	"time"
)

// A Lease is the worker ID a Generator issues under, as the service that
// granted it (a holder: see package holder) vouches for it. The generator
// knows nothing else of where the worker ID comes from.
type Lease interface {
	// WorkerID is the worker ID the generator puts in every ID.
	WorkerID() int64
	// After is the horizon persisted for the worker ID before this lease:
	// every ID issued under the lease is stamped in a later tick. Zero
	// means none.
	After() time.Time
	// Validity reports the lease's limits: no ID is stamped with a clock
	// reading at or after deadline (a reading of the generator's Clock,
	// monotonic for SystemClock), nor in a tick that ends after horizon
	// (wall time, persisted where the next holder of the worker ID reads
	// it). Zero means no limit. err is non-nil once the lease has ended.
	// The generator reads it at start and whenever a limit is reached.
	Validity() (deadline, horizon time.Time, err error)
	// Done is closed when the lease ends.
	Done() <-chan struct{}
	// Err says why the lease ended; nil while it holds.
	Err() error
}

// An EndFlagger is a Lease that also publishes its end in an atomic flag,
// set for good just before Done is closed. A generator on such a lease
// checks the flag, one atomic load, where it would otherwise receive from
// Done on every ID. The leases of package holder's holders implement it.
type EndFlagger interface {
	EndFlag() *atomic.Bool
}
