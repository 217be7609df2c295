package etcd_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/etcd"
	"github.com/idsql/idsql/holder/holdertest"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/clocktest"
	"github.com/idsql/idsql/internal/etcdtest"
)

// prefixes gives every (sub)test one key prefix shared by all its holders.
var prefixes sync.Map // *testing.T -> string

func newHolder(t *testing.T, s etcd.Settings) *etcd.Holder {
	t.Helper()
	if s.Endpoints == nil {
		s.Endpoints = etcdtest.Endpoints(t)
		p, ok := prefixes.Load(t)
		if !ok {
			_, p = etcdtest.Prefix(t)
			prefixes.Store(t, p)
			t.Cleanup(func() { prefixes.Delete(t) })
		}
		s.Prefix = p.(string)
	}
	if s.TTL == 0 {
		s.TTL = 3 * time.Second
	}
	h, err := etcd.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestConformance(t *testing.T) {
	holdertest.RunModes(t, func(t *testing.T, now func() time.Time, sticky bool) holder.Holder {
		mode := etcd.Recycle
		if sticky {
			mode = etcd.Sticky
		}
		return newHolder(t, etcd.Settings{Mode: mode, Now: now})
	})
}

// TestChurnLookup: 6 recorded recycle holders x 4 tables on 16 worker IDs.
func TestChurnLookup(t *testing.T) {
	t.Parallel()
	holdertest.ChurnRecorded(t, 6, "etcd/recycle", etcd.ErrExhausted, func(t *testing.T) holder.Holder {
		return newHolder(t, etcd.Settings{Mode: etcd.Recycle})
	})
}

// The deadline counts from the granted TTL, measured from before the grant
// was asked for: with the clock frozen at t0 it is t0 + TTL - Margin.
func TestDeadlineFromGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := clocktest.New(time.Now())
	t0 := clock.Now()
	h := newHolder(t, etcd.Settings{Mode: etcd.Recycle, TTL: 4 * time.Second, Margin: time.Second, Now: clock.Now})
	l, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "orders", Instance: holdertest.Identity(0), WorkerBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx, time.Time{})
	deadline, horizon, err := l.Validity()
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(3 * time.Second); !deadline.Equal(want) {
		t.Errorf("deadline = t0%+v, want t0+3s (TTL 4s - margin 1s from the grant's send time)", deadline.Sub(t0))
	}
	if !horizon.After(deadline) {
		t.Errorf("horizon t0%+v is not past the deadline t0%+v", horizon.Sub(t0), deadline.Sub(t0))
	}
	// Past the deadline, the lease ends even though etcd still holds it.
	clock.Set(t0.Add(3 * time.Second))
	if _, _, err := l.Validity(); !errors.Is(err, holder.ErrLeaseLost) {
		t.Errorf("Validity at the deadline: err = %v, want ErrLeaseLost", err)
	}
}

// A twin on a live sticky identity is refused at once, naming the owner,
// and the owner goes on issuing; after the owner releases, the twin gets
// the same worker ID.
func TestStickyTwinRefusedAtOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := holder.Request{Namespace: "ns", Table: "orders", WorkerBits: 4,
		Instance: holder.Instance{ID: "web-3", Host: "node-a", Port: 80, PID: 4242}}
	owner, err := newHolder(t, etcd.Settings{Mode: etcd.Sticky, TTL: 6 * time.Second}).Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := snowflake.New(ctx, owner, snowflake.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	twinReq := req
	twinReq.Instance.Host, twinReq.Instance.PID = "node-b", 77
	start := time.Now()
	_, err = newHolder(t, etcd.Settings{Mode: etcd.Sticky, TTL: 6 * time.Second}).Acquire(ctx, twinReq)
	took := time.Since(start)
	var inUse *holder.IdentityInUseError
	if !errors.As(err, &inUse) {
		t.Fatalf("twin Acquire: err = %v, want *holder.IdentityInUseError", err)
	}
	for _, want := range []string{"instance web-3", "host node-a", "pid 4242", "since "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("twin's error %q does not say %q", err, want)
		}
	}
	if took >= 6*time.Second {
		t.Errorf("twin refused after %s, not at once (the TTL is 6s)", took)
	}
	if owner.Err() != nil {
		t.Fatalf("owner's lease ended by the twin: %v", owner.Err())
	}
	if _, err := gen.NextID(ctx); err != nil {
		t.Fatalf("owner's NextID after the twin: %v", err)
	}
	w := owner.WorkerID()
	if err := owner.Release(ctx, gen.Stop()); err != nil {
		t.Fatal(err)
	}
	again, err := newHolder(t, etcd.Settings{Mode: etcd.Sticky}).Acquire(ctx, twinReq)
	if err != nil {
		t.Fatalf("Acquire after the owner released: %v", err)
	}
	defer again.Release(ctx, time.Time{})
	if again.WorkerID() != w {
		t.Errorf("sticky identity got worker %d after a restart, had %d", again.WorkerID(), w)
	}
}

func TestStickyRefusesIdentityWithoutPort(t *testing.T) {
	t.Parallel()
	holdertest.StickyRefusesUnidentified(t, newHolder(t, etcd.Settings{Mode: etcd.Sticky}))
}

func TestRecycleExhausted(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHolder(t, etcd.Settings{Mode: etcd.Recycle})
	req := holder.Request{Namespace: "ns", Table: "t", WorkerBits: 1, Instance: holdertest.Identity(0)}
	for i := 0; i < 2; i++ {
		l, err := h.Acquire(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Release(ctx, time.Time{})
	}
	if _, err := h.Acquire(ctx, req); !errors.Is(err, etcd.ErrExhausted) {
		t.Fatalf("third Acquire on 2 worker IDs: err = %v, want ErrExhausted", err)
	}
}

func TestSettings(t *testing.T) {
	for _, c := range []struct {
		s    etcd.Settings
		want string
	}{
		{etcd.Settings{}, "Endpoints is empty"},
		{etcd.Settings{Endpoints: []string{"x:1"}, Mode: "lease"}, `Mode "lease"`},
		{etcd.Settings{Endpoints: []string{"x:1"}, TTL: 2 * time.Second, Margin: 2 * time.Second}, "Margin"},
		{etcd.Settings{Endpoints: []string{"x:1"}, TTL: 3 * time.Second, Report: 2 * time.Second}, "Report"},
	} {
		_, err := etcd.New(c.s)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error about %s", c.s, err, c.want)
		}
	}
}
