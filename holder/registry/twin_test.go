package registry_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
)

// Two processes granted one worker ID by holders that cannot see each
// other (a local map copied to two hosts): the newcomer is refused with an
// error naming the process that holds it, and the incumbent's lease lives
// on. A row whose process is gone is taken over.
func TestRecordedTwin(t *testing.T) {
	for _, b := range []backend{postgreSQL, mySQL} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testRecordedTwin(t, b)
		})
	}
}

func testRecordedTwin(t *testing.T, b backend) {
	ctx := context.Background()
	const hb = 50 * time.Millisecond
	reg := registry.New(b.open(t), b.settings(registry.Settings{Heartbeat: hb, Slack: time.Minute}))
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	req := func(pid int) holder.Request {
		return holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "copied", Host: "h", PID: pid}, WorkerBits: 4}
	}
	// Each process has its own holder: neither sees the other's lease.
	incumbent, err := registry.Recorded(holder.Fixed(9), reg, "fixed").Acquire(ctx, req(100))
	if err != nil {
		t.Fatal(err)
	}
	defer incumbent.Release(ctx, time.Time{})

	started := time.Now()
	twin, err := registry.Recorded(holder.Fixed(9), reg, "fixed").Acquire(ctx, req(200))
	took := time.Since(started)
	if err == nil {
		twin.Release(ctx, time.Time{})
		t.Fatalf("the twin got worker %d while the incumbent holds it (incumbent: %v)", twin.WorkerID(), incumbent.Err())
	}
	var in *holder.IdentityInUseError
	if !errors.As(err, &in) {
		t.Fatalf("twin's Acquire = %v, want a *holder.IdentityInUseError", err)
	}
	for _, want := range []string{"copied", "worker 9", "pid 100", "host h", "since "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("twin's error does not say %q: %v", want, err)
		}
	}
	t.Logf("twin refused after %s: %v", took.Round(time.Millisecond), err)
	// Contend refuses on seeing the row renewed (a heartbeat, 50 ms, on a
	// quiet machine); a twin that waited for the row to go stale instead
	// would wait out the slack (a minute). The bound tells the two apart
	// without timing the machine: under -race on a loaded two-core
	// machine the refusal took 103 ms, the incumbent's heartbeat late.
	if slack := reg.Settings().Slack; took >= slack/4 {
		t.Errorf("twin refused after %s, want well before the row's slack (%s) runs out: on seeing it renewed", took, slack)
	}
	// The incumbent's row was never ended: it keeps renewing.
	time.Sleep(4 * hb)
	if err := incumbent.Err(); err != nil {
		t.Fatalf("the incumbent's lease ended: %v", err)
	}
	live, err := reg.Leases(ctx, "ns", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(live) != 1 || live[0].PID != 100 {
		t.Fatalf("live leases = %+v, want only the incumbent's", live)
	}

	// A row whose process is gone (no release, no heartbeat) is taken over
	// after three heartbeats, and the new lease starts after its horizon.
	gone, err := reg.Begin(ctx, registry.Start{Namespace: "ns", WorkerID: 4, Table: "t",
		Instance: holder.Instance{ID: "gone", Host: "h", PID: 300}, Kind: "fixed", Horizon: time.Now().Add(time.Second).Truncate(time.Microsecond)})
	if err != nil {
		t.Fatal(err)
	}
	started = time.Now()
	next, err := registry.Recorded(holder.Fixed(4), reg, "fixed").Acquire(ctx, req(400))
	if err != nil {
		t.Fatalf("taking over the row of a process that is gone: %v", err)
	}
	defer next.Release(ctx, time.Time{})
	if took := time.Since(started); took < 3*hb {
		t.Errorf("took over a row after %s, before three heartbeats (%s) could show its owner alive", took, 3*hb)
	}
	if next.After().Before(gone.LastTimestamp) {
		t.Errorf("the new lease's After %s is before the gone lease's horizon %s", next.After(), gone.LastTimestamp)
	}
}

// A process whose own lease of a table ended without its release reaching
// the table (the link was cut) takes its worker ID back at once: the row
// is its own, not a twin's, and it is not watched for three heartbeats.
// With an hour's heartbeat, watching would outlast the test's deadline.
func TestRecordedRetakesOwnRow(t *testing.T) {
	for _, b := range []backend{postgreSQL, mySQL} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			reg := registry.New(b.open(t), b.settings(registry.Settings{Heartbeat: time.Hour, Slack: time.Minute}))
			if err := reg.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			self := holder.Instance{ID: "self", Host: "h", PID: 500}
			own, err := reg.Begin(ctx, registry.Start{Namespace: "ns", WorkerID: 5, Table: "t", Instance: self, Kind: "fixed",
				Horizon: time.Now().Add(time.Second).Truncate(time.Microsecond)})
			if err != nil {
				t.Fatal(err)
			}
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			again, err := registry.Recorded(holder.Fixed(5), reg, "fixed").Acquire(actx,
				holder.Request{Namespace: "ns", Table: "t", Instance: self, WorkerBits: 4})
			if err != nil {
				t.Fatalf("retaking its own row: %v", err)
			}
			defer again.Release(ctx, time.Time{})
			if again.After().Before(own.LastTimestamp) {
				t.Errorf("the new lease's After %s is before the old lease's horizon %s", again.After(), own.LastTimestamp)
			}
			live, err := reg.Leases(ctx, "ns", true)
			if err != nil {
				t.Fatal(err)
			}
			if len(live) != 1 || live[0].LeaseID == own.LeaseID {
				t.Fatalf("live leases = %+v, want only the new one (the old row %d ended)", live, own.LeaseID)
			}
		})
	}
}
