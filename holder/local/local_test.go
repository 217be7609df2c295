package local_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holdertest"
	"github.com/idsql/idsql/holder/local"
)

func workers() map[string]int64 {
	m := map[string]int64{}
	for i := 0; i < 16; i++ {
		m[holdertest.Identity(i).Key()] = int64(i)
	}
	return m
}

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	holdertest.Run(t, func(t *testing.T, now func() time.Time) holder.Holder {
		h, err := local.New(local.Settings{Workers: workers(), Dir: dir, Now: now, Refresh: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return h
	}, holdertest.Options{})
}

func TestSettingsErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		s    local.Settings
	}{
		{"no workers", local.Settings{Dir: t.TempDir()}},
		{"no dir", local.Settings{Workers: map[string]int64{"a": 1}}},
		{"duplicate", local.Settings{Workers: map[string]int64{"a": 1, "b": 1}, Dir: t.TempDir()}},
		{"negative", local.Settings{Workers: map[string]int64{"a": -1}, Dir: t.TempDir()}},
	} {
		if _, err := local.New(c.s); err == nil {
			t.Errorf("%s: New accepted %+v", c.name, c.s)
		}
	}
}

func TestPerTableKeyAndDoubleLease(t *testing.T) {
	ctx := context.Background()
	h, err := local.New(local.Settings{Dir: t.TempDir(), Workers: map[string]int64{"orders@a:1": 1, "a:1": 2}})
	if err != nil {
		t.Fatal(err)
	}
	inst := holder.Instance{Host: "a", Port: 1}
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: inst, WorkerBits: 4}
	l1, err := h.Acquire(ctx, req)
	if err != nil || l1.WorkerID() != 1 {
		t.Fatalf("orders: worker %v, err %v; want 1", l1, err)
	}
	req.Table = "users"
	l2, err := h.Acquire(ctx, req)
	if err != nil || l2.WorkerID() != 2 {
		t.Fatalf("users: err %v; want worker 2", err)
	}
	req.Table = "items" // falls back to "a:1" = 2, which is leased
	if _, err := h.Acquire(ctx, req); err == nil {
		t.Fatal("worker 2 leased twice")
	}
	l1.Release(ctx)
	l2.Release(ctx)
	if _, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{Host: "b"}, WorkerBits: 4}); err == nil || errors.Is(err, holder.ErrLeaseLost) {
		t.Fatalf("unknown identity: err = %v", err)
	}
}
