package registry_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/clocktest"
)

func newRegistry(t *testing.T, b backend, clock *clocktest.Fake) *registry.Registry {
	t.Helper()
	reg := registry.New(b.open(t), b.settings(registry.Settings{Now: clock.Now, Heartbeat: 20 * time.Millisecond, Slack: time.Minute}))
	ctx := context.Background()
	for i := 0; i < 2; i++ { // idempotent
		if err := reg.Migrate(ctx); err != nil {
			t.Fatalf("Migrate #%d: %v", i+1, err)
		}
	}
	return reg
}

func testFindAcrossRecycling(t *testing.T, b backend) {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := newRegistry(t, b, clock)
	h := registry.Recorded(holder.Fixed(3), reg, "fixed")
	inst := holder.Instance{Host: "a", Port: 1, PID: 9}

	type issued struct {
		id    int64
		table string
	}
	var ids []issued
	for _, table := range []string{"orders", "users", "orders", "items"} {
		lease, err := h.Acquire(ctx, holder.Request{Namespace: "shop", Table: table, Instance: inst, WorkerBits: 10})
		if err != nil {
			t.Fatalf("Acquire %s: %v", table, err)
		}
		gen, err := snowflake.New(ctx, lease, snowflake.Settings{Clock: clock})
		if err != nil {
			t.Fatalf("snowflake.New: %v", err)
		}
		for i := 0; i < 5000; i++ { // more than one tick's sequence
			id, err := gen.NextID(ctx)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, issued{id, table})
		}
		if err := lease.Release(ctx, gen.Stop()); err != nil {
			t.Fatalf("Release: %v", err)
		}
		// No time passes between leases: the boundary is the tick.
	}
	for i, is := range ids {
		if i%97 != 0 && i%5000 != 0 && i%5000 != 4999 {
			continue // a sample, plus each lease's first and last IDs
		}
		p := snowflake.Leaf.Decompose(is.id)
		rec, err := reg.Find(ctx, "shop", p.Worker, p.Time)
		if err != nil {
			t.Fatalf("Find(%d): %v", is.id, err)
		}
		if rec.Table != is.table {
			t.Fatalf("Find(%d) = table %q, want %q", is.id, rec.Table, is.table)
		}
	}
	first := snowflake.Leaf.Decompose(ids[0].id)
	for _, c := range []struct {
		name   string
		worker int64
		at     time.Time
	}{
		{"before any lease", 3, first.Time.Add(-time.Hour)},
		{"after the last release", 3, clock.Now().Add(time.Hour)},
		{"unknown worker", 4, first.Time},
	} {
		_, err := reg.Find(ctx, "shop", c.worker, c.at)
		var nle *registry.NoLeaseError
		if !errors.Is(err, registry.ErrNoLease) || !errors.As(err, &nle) {
			t.Errorf("%s: Find err = %v, want ErrNoLease", c.name, err)
		}
	}
}

// A released lease's final horizon is what the next lease of the worker ID
// starts after; a clock behind it keeps the generator from starting.
func testRecordedClockBehind(t *testing.T, b backend) {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := newRegistry(t, b, clock)
	h := registry.Recorded(holder.Fixed(1), reg, "fixed")
	req := holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "x"}, WorkerBits: 4}
	lease, err := h.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	ahead := clock.Now().Add(time.Hour)
	if err := lease.Release(ctx, ahead); err != nil {
		t.Fatal(err)
	}
	lease, err = h.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if lease.After().Before(ahead) {
		t.Errorf("After %s before the persisted %s", lease.After(), ahead)
	}
	_, err = snowflake.New(ctx, lease, snowflake.Settings{Clock: clock})
	var cb *snowflake.ClockBehindError
	if !errors.As(err, &cb) {
		t.Fatalf("snowflake.New with the clock an hour behind: err = %v, want *snowflake.ClockBehindError", err)
	}
	lease.Release(ctx, time.Time{})
	clock.Set(ahead.Add(time.Millisecond))
	lease, err = h.Acquire(ctx, req)
	if err != nil {
		t.Fatalf("Acquire after clock caught up: %v", err)
	}
	defer lease.Release(ctx, time.Time{})
	if _, err := snowflake.New(ctx, lease, snowflake.Settings{Clock: clock}); err != nil {
		t.Fatalf("snowflake.New after the clock caught up: %v", err)
	}
}

// The row's horizon is persisted before Acquire returns and raised by each
// heartbeat, and it always covers the lease's own horizon.
func testHeartbeatRaisesHorizon(t *testing.T, b backend) {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := newRegistry(t, b, clock)
	lease, err := registry.Recorded(holder.Fixed(2), reg, "fixed").Acquire(ctx,
		holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "x"}, WorkerBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx, time.Time{})
	stored := func() time.Time {
		t.Helper()
		recs, err := reg.Leases(ctx, "ns", true)
		if err != nil || len(recs) != 1 {
			t.Fatalf("Leases = %+v, %v", recs, err)
		}
		return recs[0].LastTimestamp
	}
	_, first, err := lease.Validity()
	if err != nil {
		t.Fatal(err)
	}
	if first.IsZero() || stored().Before(first) {
		t.Fatalf("lease horizon %s, stored %s: the stored one must cover it", first, stored())
	}
	clock.Add(5 * time.Second)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		_, hz, err := lease.Validity()
		if err != nil {
			t.Fatal(err)
		}
		if hz.After(first) {
			if s := stored(); s.Before(hz) {
				t.Fatalf("lease horizon %s moved past the stored %s", hz, s)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("horizon never raised: still %s", hz)
		}
	}
}

// A lease whose row another lease of its worker ID ended learns it at its
// next heartbeat, with the clock standing still (a heartbeat that changes no
// value is still a heartbeat of a live row).
func testHeartbeatSeesRowEnded(t *testing.T, b backend) {
	ctx := context.Background()
	clock := clocktest.New(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := newRegistry(t, b, clock)
	req := holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "x"}, WorkerBits: 4}
	l1, err := registry.Recorded(holder.Fixed(5), reg, "fixed").Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release(ctx, time.Time{})
	// Wait for three heartbeats that change nothing the registry reads. They
	// still write the row: on PostgreSQL every UPDATE makes a new row
	// version (a new xmin); on MySQL last_heartbeat moves a microsecond.
	recs, err := reg.Leases(ctx, "ns", true)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Leases = %+v, %v", recs, err)
	}
	mark := `SELECT xmin::text FROM idsql_workers WHERE lease_id = $1`
	if b.name == mySQL.name {
		mark = `SELECT CAST(last_heartbeat AS CHAR) FROM idsql_workers WHERE lease_id = ?`
	}
	var last string
	deadline := time.Now().Add(10 * time.Second)
	for beats := -1; beats < 3; {
		var m string
		if err := reg.DB().QueryRowContext(ctx, mark, recs[0].LeaseID).Scan(&m); err != nil {
			t.Fatal(err)
		}
		if m != last {
			beats, last = beats+1, m
		}
		if err := l1.Err(); err != nil {
			t.Fatalf("a live lease ended after %d heartbeats: %v", beats, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d heartbeats in 10 s", beats)
		}
		time.Sleep(reg.Settings().Heartbeat / 4)
	}
	if err := l1.Err(); err != nil {
		t.Fatalf("a live lease ended: %v", err)
	}
	rec, err := reg.Begin(ctx, registry.Start{Namespace: "ns", WorkerID: 5, Table: "t", Instance: holder.Instance{ID: "y"}, Kind: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Release(ctx, rec.LeaseID, time.Time{})
	select {
	case <-l1.Done():
		if !errors.Is(l1.Err(), holder.ErrLeaseLost) {
			t.Errorf("Err = %v, want ErrLeaseLost", l1.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the superseded lease never noticed")
	}
}

// A lease whose claim took longer than a heartbeat (it queued for the
// namespace lock, or for the server) heartbeats at once: each heartbeat
// is due a heartbeat after the previous one was sent, the first after the
// claim was, not a heartbeat after the lease started (here an hour, which
// the test would wait out).
func testFirstHeartbeatAfterSlowClaim(t *testing.T, b backend) {
	ctx := context.Background()
	const hb = time.Hour
	reg := registry.New(b.open(t), b.settings(registry.Settings{Heartbeat: hb, Slack: 3 * hb}))
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	sent := time.Now().Add(-hb - time.Second) // the fault: a claim sent a heartbeat (and a second) ago
	rec, err := reg.Begin(ctx, registry.Start{Namespace: "ns", WorkerID: 3, Table: "t",
		Instance: holder.Instance{ID: "slow", Host: "h", PID: 1}, Kind: "fixed", Horizon: reg.Horizon(sent, registry.LeaseOptions{Sent: sent})})
	if err != nil {
		t.Fatal(err)
	}
	beat := func() time.Time { return storedHeartbeat(t, reg, "ns") }
	recorded := beat()
	lease := registry.StartLease(reg, rec, nil, registry.LeaseOptions{Sent: sent})
	defer lease.Release(ctx, time.Time{})
	// The heartbeat is due at once (tens of ms here); the old schedule put
	// it an hour out. 30 s only ends a wait for one that never comes.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if beat().After(recorded) {
			return
		}
		if err := lease.Err(); err != nil {
			t.Fatalf("the lease ended before its first heartbeat: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("no heartbeat within 30 s of a lease whose claim was sent a heartbeat (%s) ago", hb)
		}
	}
}

// syncBuffer is a bytes.Buffer that a logger and the test share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// A heartbeat still running a heartbeat after it was sent is reported
// while it runs, naming the worker and lease: here it waits for the lease's
// row, which another transaction holds locked. Once that lets go, the
// heartbeat completes and the lease lives on.
func testSlowHeartbeatWarns(t *testing.T, b backend) {
	ctx := context.Background()
	const hb = 100 * time.Millisecond
	db := b.open(t)
	var logged syncBuffer
	reg := registry.New(db, b.settings(registry.Settings{Heartbeat: hb, Slack: time.Minute,
		Logger: slog.New(slog.NewTextHandler(&logged, nil))}))
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rec, err := reg.Begin(ctx, registry.Start{Namespace: "ns", WorkerID: 4, Table: "t",
		Instance: holder.Instance{ID: "slow-beat", Host: "h", PID: 1}, Kind: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	stored := func() time.Time { return storedHeartbeat(t, reg, "ns") } // read past any row lock (MVCC)
	recorded := stored()
	// The fault: the lease's row locked by a transaction that stays open.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SELECT lease_id FROM idsql_workers WHERE namespace = 'ns' FOR UPDATE"); err != nil {
		t.Fatal(err)
	}
	lease := registry.StartLease(reg, rec, nil, registry.LeaseOptions{})
	defer func() {
		tx.Rollback() // first: the release waits for the row too
		lease.Release(ctx, time.Time{})
	}()
	// The warning comes a heartbeat (100 ms) after the first heartbeat is
	// sent, while the row lock above holds that heartbeat.
	// 30 s: not a tolerance: only ends a wait for a warning that never comes.
	const want = "a heartbeat to idsql_workers is still running"
	if !waitFor(30*time.Second, func() bool { return strings.Contains(logged.String(), want) }) {
		t.Fatalf("no warning of the blocked heartbeat within 30 s; log:\n%s", logged.String())
	}
	line := logged.String()
	for _, attr := range []string{"worker=4", "lease=", "table=t", "running=", "deadline_in="} {
		if !strings.Contains(line, attr) {
			t.Errorf("the warning lacks %s: %s", attr, line)
		}
	}
	if now := stored(); !now.Equal(recorded) {
		t.Fatalf("the heartbeat went through the lock: last heartbeat %s, recorded %s", now, recorded)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// The blocked heartbeat completes as soon as the lock goes (its
	// deadline is a minute out).
	// 30 s: not a tolerance: only ends a wait for a heartbeat that never comes.
	if !waitFor(30*time.Second, func() bool { return stored().After(recorded) }) {
		t.Fatal("no heartbeat completed within 30 s of the lock's release")
	}
	if err := lease.Err(); err != nil {
		t.Fatalf("the lease ended: %v", err)
	}
}

// waitFor polls cond every 10 ms until it holds (true) or within passes.
func waitFor(within time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(within); ; time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// storedHeartbeat returns the last heartbeat the table stores (as it rounds
// it) for the one live lease of namespace.
func storedHeartbeat(t *testing.T, reg *registry.Registry, namespace string) time.Time {
	t.Helper()
	recs, err := reg.Leases(context.Background(), namespace, true)
	if err != nil || len(recs) != 1 {
		t.Fatalf("Leases = %+v, %v", recs, err)
	}
	return recs[0].LastHeartbeat
}
