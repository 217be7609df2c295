package workertable_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/mysqltest"
)

// Kind mysql is the worker table of a MySQL or MariaDB database, with the
// same checks as kind postgres.
func TestRegistersMySQL(t *testing.T) {
	k, err := holderkind.Lookup("mysql")
	if err != nil {
		t.Fatalf("holderkind.Lookup(mysql): %v", err)
	}
	if k.WorkerTable != "mysql" || !k.Records || len(k.Modes) == 0 {
		t.Errorf("kind mysql: WorkerTable %q, Records %v, Modes %v; want the mysql worker table, recorded, with modes", k.WorkerTable, k.Records, k.Modes)
	}
	if _, err := k.New(holderkind.Settings{Now: time.Now}); err == nil || !strings.Contains(err.Error(), "worker registry") {
		t.Errorf("New without a registry: %v, want an error naming the worker registry", err)
	}
	// Input of the check under test (a lease shorter than two heartbeats), not a bound.
	if err := k.Check(holderkind.Settings{Heartbeat: 3 * time.Second, SessionTimeout: time.Second}); err == nil ||
		!strings.Contains(err.Error(), "session_timeout") {
		t.Errorf("Check of a lease shorter than two heartbeats: %v, want a session_timeout error", err)
	}
}

// The registered kind hands out worker IDs from idsql_workers on the
// MariaDB test server, and names itself mysql in the rows.
func TestMySQLLeaseOnMariaDB(t *testing.T) {
	ctx := context.Background()
	db, _ := mysqltest.Open(t)
	reg := registry.New(db, registry.Settings{AcceptLazyCommits: true})
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	k, err := holderkind.Lookup("mysql")
	if err != nil {
		t.Fatal(err)
	}
	h, err := k.New(holderkind.Settings{Mode: "lease", Heartbeat: registry.DefaultHeartbeat, Now: time.Now, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{ID: "a"}, WorkerBits: 4})
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	defer l.Release(ctx, time.Time{})
	var kind string
	if err := db.QueryRowContext(ctx, "SELECT holder_kind FROM idsql_workers WHERE worker_id = ? AND released IS NULL", l.WorkerID()).Scan(&kind); err != nil {
		t.Fatalf("read the lease row: %v", err)
	}
	if kind != "mysql/lease" {
		t.Errorf("lease row kind %q, want mysql/lease", kind)
	}
}
