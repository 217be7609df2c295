package etcd

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/etcdtest"
)

// An owner that crashed (its client gone, its lease left to run out) is
// waited for, not refused: a restart on its identity gets its worker ID
// once etcd expires the lease, and not before.
func TestStickyWaitsForSilentOwner(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	endpoints, prefix := etcdtest.Prefix(t)
	newHolder := func() *Holder {
		h, err := New(Settings{Endpoints: endpoints, Prefix: prefix, TTL: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { h.Close() })
		return h
	}
	req := holder.Request{Namespace: "ns", Table: "orders", WorkerBits: 4,
		Instance: holder.Instance{ID: "web-0", Host: "node-a", PID: 1}}
	crashed := newHolder()
	first, err := crashed.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	_, hz, _ := first.Validity()
	crashed.cli.Close() // no more keep-alives, no release: a crash
	crashedAt := time.Now()
	// Once the owner has missed more than a keep-alive, it counts as
	// silent: until then the restart is refused as a twin, and asks again.
	req.Instance.PID = 2
	restart := newHolder()
	var l holder.Lease
	for deadline := time.Now().Add(crashed.s.TTL + 10*time.Second); ; time.Sleep(50 * time.Millisecond) {
		l, err = restart.Acquire(ctx, req)
		if !errors.Is(err, holder.ErrIdentityInUse) || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("Acquire after the owner went silent: %v", err)
	}
	defer l.Release(ctx, time.Time{})
	if l.WorkerID() != first.WorkerID() {
		t.Errorf("restart got worker %d, the crashed owner had %d", l.WorkerID(), first.WorkerID())
	}
	// The last keep-alive was at most a report before the crash.
	if d, least := time.Since(crashedAt), crashed.s.TTL-crashed.s.Report; d < least {
		t.Errorf("restart got the identity %s after the crash, before etcd could expire the lease (%s at least)", d, least)
	}
	if l.After().Before(hz) {
		t.Errorf("restart's After %s is before the crashed owner's horizon %s", l.After(), hz)
	}
}
