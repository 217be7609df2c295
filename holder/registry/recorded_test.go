package registry_test

import (
	"context"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/local"
	"github.com/idsql/idsql/holder/registry"
)

// testRecordedFailureGivesHorizonBack: an Acquire whose recording fails
// (the database cannot be reached) gives the inner lease back with the
// horizon it was granted after: it issued nothing, so the next lease starts
// after the IDs of the earlier ones, not after the horizon the failed
// attempt reserved (the local holder's, two refresh periods ahead). Keeping
// that horizon made a process that retried while its database link was
// reset wait two seconds once the link healed.
func testRecordedFailureGivesHorizonBack(t *testing.T, b backend) {
	ctx := context.Background()
	settings := b.settings(registry.Settings{Heartbeat: 50 * time.Millisecond, Slack: time.Minute})
	reg := registry.New(b.open(t), settings)
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	lh, err := local.New(local.Settings{Workers: map[string]int64{"self": 6}, Dir: t.TempDir(), Refresh: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	req := holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "self", Host: "h", PID: 600}, WorkerBits: 4}

	first, err := registry.Recorded(lh, reg, "local").Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	last := time.Now().Truncate(time.Microsecond)
	if err := first.Release(ctx, last); err != nil {
		t.Fatal(err)
	}

	down := b.open(t)
	down.Close()
	if l, err := registry.Recorded(lh, registry.New(down, settings), "local").Acquire(ctx, req); err == nil {
		l.Release(ctx, time.Time{})
		t.Fatal("Acquire recorded a lease through a closed database")
	}

	next, err := registry.Recorded(lh, reg, "local").Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx, time.Time{})
	if next.After().Before(last) {
		t.Errorf("the next lease's After %s is before the last ID %s of the first", next.After(), last)
	}
	if now := time.Now(); next.After().After(now) {
		t.Errorf("the next lease issues only after %s, %s from now: the failed attempt kept the horizon it reserved",
			next.After(), next.After().Sub(now))
	}
}
