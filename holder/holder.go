package holder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"
)

// ErrLeaseLost is the cause reported by Lease.Err when a holder can no longer
// guarantee that nobody else holds the worker ID (session expired, heartbeat
// failing past its bound, lease taken over).
var ErrLeaseLost = errors.New("holder: worker lease lost")

// ErrReleased is reported by Lease.Err after the lease was released on purpose.
var ErrReleased = errors.New("holder: worker lease released")

// Instance identifies one running process that asks for worker IDs.
type Instance struct {
	// ID is the identity string sticky holders key on. Empty means Host:Port,
	// as in Leaf; set it to the pod name for a Kubernetes StatefulSet.
	ID   string
	Host string
	Port int
	PID  int
}

// Key returns the identity string: ID when set, otherwise "host:port".
func (i Instance) Key() string {
	if i.ID != "" {
		return i.ID
	}
	return i.Host + ":" + strconv.Itoa(i.Port)
}

// ErrIdentityInUse is wrapped by *IdentityInUseError.
var ErrIdentityInUse = errors.New("holder: identity in use")

// IdentityInUseError reports a sticky identity that another live process
// holds, or one that cannot tell processes apart. Two live processes never
// share a worker ID, so the second one does not start.
type IdentityInUseError struct {
	Identity string // the identity string (Instance.Key)
	Holder   string // who holds it, when known: "host pid N"
	Reason   string // what was seen
}

func (e *IdentityInUseError) Error() string {
	msg := fmt.Sprintf("holder: sticky identity %q %s", e.Identity, e.Reason)
	if e.Holder != "" {
		msg += " (held by " + e.Holder + ")"
	}
	return msg + "; give each process its own identity: holder.instance (an instance ID or pod name) or holder.port"
}

// Unwrap returns ErrIdentityInUse.
func (e *IdentityInUseError) Unwrap() error { return ErrIdentityInUse }

// CheckSticky refuses an identity that cannot tell two processes of one host
// apart: no ID and port 0. Sticky modes call it before claiming anything.
func (i Instance) CheckSticky() error {
	if i.ID == "" && i.Port == 0 {
		return &IdentityInUseError{Identity: i.Key(),
			Reason: "cannot be unique: it has no instance ID and port 0, so every process on the host would share it"}
	}
	return nil
}

// LocalInstance describes this process: the host name, the given port and the
// process ID. The identity string defaults to "host:port".
func LocalInstance(port int) Instance {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return Instance{Host: host, Port: port, PID: os.Getpid()}
}

// Request asks a Holder for a worker ID.
type Request struct {
	Namespace string
	Table     string
	Instance  Instance
	// WorkerBits bounds the worker IDs: a lease's ID is in
	// [0, 1<<WorkerBits - Reserved).
	WorkerBits int
	// Reserved is how many worker IDs at the top of the range no lease
	// takes: they are kept for database-side defaults, which compose keys
	// inside the database under a worker ID recorded for the database
	// (holder.database_workers in idsql's configuration).
	Reserved int64
}

// MaxWorkers returns how many worker IDs a lease may take: the layout's
// 1<<WorkerBits less the Reserved ones at the top.
func (r Request) MaxWorkers() int64 { return int64(1)<<r.WorkerBits - r.Reserved }

// Validate reports a request that no holder can serve.
func (r Request) Validate() error {
	switch {
	case r.Namespace == "":
		return errors.New("holder: request: namespace is empty")
	case r.Table == "":
		return errors.New("holder: request: table is empty")
	case r.WorkerBits < 1 || r.WorkerBits > 31:
		return fmt.Errorf("holder: request: worker bits %d out of range 1..31", r.WorkerBits)
	case r.Reserved < 0 || r.Reserved >= int64(1)<<r.WorkerBits:
		return fmt.Errorf("holder: request: %d reserved worker IDs leave none of the %d for leases", r.Reserved, int64(1)<<r.WorkerBits)
	}
	return nil
}

// A Holder hands out worker IDs so that no two live leases of one namespace
// share a worker ID.
type Holder interface {
	// Acquire returns a lease on a worker ID for req, recorded and with its
	// first horizon persisted. It waits while the worker ID it must hand
	// out (a sticky identity's) may still be held by another process, up to
	// the point where that process's lease has certainly expired.
	Acquire(ctx context.Context, req Request) (Lease, error)
}

// A Lease is one held worker ID. It satisfies snowflake.Lease, so a
// generator can issue IDs under it.
//
// Fencing is by deadline: the lease knows, on the clock its holder reads
// (Go's monotonic reading of time.Now unless the holder was given another
// clock), until when nobody else can hold its worker ID, and a generator
// issues no ID stamped at or after that deadline, whether or not Done was
// closed in time (a paused process cannot close anything). Uniqueness
// across successive holders of a worker ID rests on the horizon: before a
// generator may issue IDs up to a time, that time is persisted where the next
// holder of the worker ID reads it, and the next holder issues only after it.
type Lease interface {
	// WorkerID is the held worker ID.
	WorkerID() int64
	// After is the horizon the previous holders of the worker ID persisted:
	// every ID issued under this lease must be stamped strictly later. Zero
	// when nothing was persisted.
	After() time.Time
	// Validity reports how far the lease vouches for IDs now: no ID may be
	// stamped at or after deadline (a reading of the holder's clock), nor
	// later than horizon (wall time, persisted). A zero time means no limit.
	// err is non-nil, wrapping ErrLeaseLost or ErrReleased, once the lease
	// has ended, including when its deadline has passed.
	Validity() (deadline, horizon time.Time, err error)
	// Done is closed when the lease ends, lost or released. A lease built
	// on StaticLease also sets its EndFlag just before, which a generator
	// reads on every ID instead of receiving from Done.
	Done() <-chan struct{}
	// Err is nil while the lease holds, then ErrReleased or an error wrapping
	// ErrLeaseLost.
	Err() error
	// Release stops the lease and gives the worker ID back. last is the
	// stamp of the last ID issued under the lease, known once its generator
	// has stopped (snowflake.Generator.Stop); the holder then persists it as
	// the worker ID's horizon, so the next holder need not wait for the
	// horizon the lease had reserved. The zero time keeps that horizon.
	Release(ctx context.Context, last time.Time) error
}
