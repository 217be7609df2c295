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
	// WorkerBits bounds the worker IDs: a lease's ID is in [0, 1<<WorkerBits).
	WorkerBits int
}

// MaxWorkers returns how many worker IDs the request's layout allows.
func (r Request) MaxWorkers() int64 { return int64(1) << r.WorkerBits }

// Validate reports a request that no holder can serve.
func (r Request) Validate() error {
	switch {
	case r.Namespace == "":
		return errors.New("holder: request: namespace is empty")
	case r.Table == "":
		return errors.New("holder: request: table is empty")
	case r.WorkerBits < 1 || r.WorkerBits > 31:
		return fmt.Errorf("holder: request: worker bits %d out of range 1..31", r.WorkerBits)
	}
	return nil
}

// A Holder hands out worker IDs so that no two live leases of one namespace
// share a worker ID.
type Holder interface {
	// Acquire returns a lease on a worker ID for req. It refuses with a
	// *ClockBehindError when the wall clock is behind the last timestamp
	// persisted for the worker ID it would hand out.
	Acquire(ctx context.Context, req Request) (Lease, error)
}

// A Lease is one held worker ID. A generator issues IDs under it only while
// Done is open; the holder closes Done before the worker ID can be handed to
// anyone else (the fencing promise).
type Lease interface {
	// WorkerID is the held worker ID.
	WorkerID() int64
	// LastTime is the latest timestamp persisted for this worker ID before
	// this lease was granted; the zero time when none was.
	LastTime() time.Time
	// Track registers the generator's high-water mark: the time of the last
	// tick it issued or reserved. Holders that persist timestamps call it at
	// each heartbeat and store the result.
	Track(highWater func() time.Time)
	// Done is closed when the lease ends, lost or released.
	Done() <-chan struct{}
	// Err is nil while the lease holds, then ErrReleased or an error wrapping
	// ErrLeaseLost.
	Err() error
	// Release stops the lease and gives the worker ID back.
	Release(ctx context.Context) error
}

// ClockBehindError reports a wall clock behind the last timestamp persisted
// for a worker ID: issuing IDs now could repeat IDs issued before.
type ClockBehindError struct {
	WorkerID int64
	Now      time.Time // the wall clock at the check
	Last     time.Time // the persisted timestamp
}

func (e *ClockBehindError) Error() string {
	return fmt.Sprintf("holder: clock is behind worker %d's last persisted timestamp: now %s, last %s (%s behind)",
		e.WorkerID, e.Now.UTC().Format(time.RFC3339Nano), e.Last.UTC().Format(time.RFC3339Nano), e.Last.Sub(e.Now))
}

// CheckClock returns a *ClockBehindError when now is before last.
func CheckClock(workerID int64, now, last time.Time) error {
	if !last.IsZero() && now.Before(last) {
		return &ClockBehindError{WorkerID: workerID, Now: now, Last: last}
	}
	return nil
}
