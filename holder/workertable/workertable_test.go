package workertable_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holdertest"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/holder/workertable"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

const heartbeat = 20 * time.Millisecond

// TTLs of the tests that time leases: short enough to keep the tests quick,
// long enough (a third of each is the margin) that a loaded machine's
// stalls do not end a lease whose process is alive.
const (
	shortTTL = time.Second      // unchanged by the move from holder/postgres: a test lease, not a tolerance
	churnTTL = 10 * time.Second // unchanged by the move: the churn test's lease, not a tolerance
)

// backend is a database the holder runs on, for tests.
type backend struct {
	name string
	// dialect is the worker table's dialect, which the holder's errors name.
	dialect string
	open    func(t *testing.T) *sql.DB
	// settings are added to every registry's: the MySQL test server flushes
	// commits lazily (innodb_flush_log_at_trx_commit = 2).
	settings func(registry.Settings) registry.Settings
	// lockLease locks a lease's row (lease ID) until its transaction ends.
	lockLease string
	// left is how many microseconds a lease's row (lease ID) has left
	// before it expires, on the database clock.
	left string
	// expired reports whether a lease's row (lease ID) is released and
	// past its expiry, on the database clock.
	expired string
}

var (
	postgreSQL = backend{
		name:    "PostgreSQL",
		dialect: "postgres",
		open: func(t *testing.T) *sql.DB {
			db, _ := pgtest.Open(t)
			return db
		},
		settings:  func(s registry.Settings) registry.Settings { return s },
		lockLease: `SELECT 1 FROM idsql_workers WHERE lease_id = $1 FOR UPDATE`,
		left:      `SELECT (extract(epoch FROM expires - clock_timestamp()) * 1e6)::bigint FROM idsql_workers WHERE lease_id = $1`,
		expired:   `SELECT released IS NOT NULL AND expires <= clock_timestamp() FROM idsql_workers WHERE lease_id = $1`,
	}
	mySQL = backend{
		name:    "MySQL",
		dialect: "mysql",
		open: func(t *testing.T) *sql.DB {
			db, _ := mysqltest.Open(t)
			return db
		},
		settings: func(s registry.Settings) registry.Settings {
			s.AcceptLazyCommits = true
			return s
		},
		lockLease: `SELECT 1 FROM idsql_workers WHERE lease_id = ? FOR UPDATE`,
		left:      `SELECT TIMESTAMPDIFF(MICROSECOND, SYSDATE(6), expires) + TIMESTAMPDIFF(MICROSECOND, UTC_TIMESTAMP(6), NOW(6)) FROM idsql_workers WHERE lease_id = ?`,
		expired:   `SELECT released IS NOT NULL AND expires <= UTC_TIMESTAMP(6) FROM idsql_workers WHERE lease_id = ?`,
	}
)

// cases run on every backend, as subtests of TestPostgreSQL and TestMySQL
// (go test -run MySQL selects the MySQL ones).
var cases = []struct {
	name string
	run  func(t *testing.T, b backend)
}{
	{"Conformance", testConformance},
	{"StickyKeepsWorkerID", testStickyKeepsWorkerID},
	{"DisposableExhaustion", testDisposableExhaustion},
	{"LeaseFencedBeforeExpiry", testLeaseFencedBeforeExpiry},
	{"ChurnLookup", testChurnLookup},
	{"StickySecondLiveProcessRefused", testStickySecondLiveProcessRefused},
	{"StickyTakesOverExpiredIdentity", testStickyTakesOverExpiredIdentity},
	{"StickyRefusesIdentityWithoutPort", testStickyRefusesIdentityWithoutPort},
	{"KindNamesDialect", testKindNamesDialect},
}

func TestPostgreSQL(t *testing.T) { runCases(t, postgreSQL) }

func TestMySQL(t *testing.T) { runCases(t, mySQL) }

func runCases(t *testing.T, b backend) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, b)
		})
	}
}

// dbs gives every (sub)test one database (PostgreSQL: schema) shared by all
// its holders.
var dbs sync.Map // *testing.T -> *sql.DB

func database(t *testing.T, b backend) *sql.DB {
	t.Helper()
	if db, ok := dbs.Load(t); ok {
		return db.(*sql.DB)
	}
	db := b.open(t)
	if err := registry.New(db, b.settings(registry.Settings{})).Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	dbs.Store(t, db)
	t.Cleanup(func() { dbs.Delete(t) })
	return db
}

func newHolder(t *testing.T, b backend, now func() time.Time, s workertable.Settings) (*workertable.Holder, *registry.Registry) {
	t.Helper()
	reg := registry.New(database(t, b), b.settings(registry.Settings{Now: now, Heartbeat: heartbeat}))
	h, err := workertable.New(reg, s)
	if err != nil {
		t.Fatal(err)
	}
	return h, reg
}

func testConformance(t *testing.T, b backend) {
	for _, c := range []struct {
		mode workertable.Mode
		opts holdertest.Options
	}{
		{workertable.Sticky, holdertest.Options{WorkerBits: 5}},
		{workertable.Disposable, holdertest.Options{WorkerBits: 8, Fresh: true}},
		{workertable.Lease, holdertest.Options{}},
	} {
		t.Run(string(c.mode), func(t *testing.T) {
			t.Parallel()
			holdertest.Run(t, func(t *testing.T, now func() time.Time) holder.Holder {
				h, _ := newHolder(t, b, now, workertable.Settings{Mode: c.mode, TTL: 3 * time.Second}) // not a tolerance: the conformance suite's lease length, as before the move
				return h
			}, c.opts)
		})
	}
}

func req(table, id string, bits int) holder.Request {
	return holder.Request{Namespace: "ns", Table: table, Instance: holder.Instance{ID: id}, WorkerBits: bits}
}

func testStickyKeepsWorkerID(t *testing.T, b backend) {
	ctx := context.Background()
	h, _ := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Sticky})
	got := map[string]int64{}
	for round := 0; round < 2; round++ {
		for _, key := range []string{"orders@a", "users@a", "orders@b"} {
			table, id, _ := strings.Cut(key, "@")
			l, err := h.Acquire(ctx, req(table, id, 4))
			if err != nil {
				t.Fatal(err)
			}
			if w, ok := got[key]; ok && w != l.WorkerID() {
				t.Errorf("%s: worker %d after restart, was %d", key, l.WorkerID(), w)
			}
			got[key] = l.WorkerID()
			l.Release(ctx, time.Time{})
		}
	}
	if got["orders@a"] == got["users@a"] || got["orders@a"] == got["orders@b"] || got["users@a"] == got["orders@b"] {
		t.Errorf("sticky workers collide: %v", got)
	}
}

func testDisposableExhaustion(t *testing.T, b backend) {
	ctx := context.Background()
	h, _ := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Disposable})
	for i := 0; i < 4; i++ {
		l, err := h.Acquire(ctx, req("t", "a", 2))
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		if l.WorkerID() != int64(i) {
			t.Errorf("start %d: worker %d", i, l.WorkerID())
		}
		l.Release(ctx, time.Time{})
	}
	_, err := h.Acquire(ctx, req("t", "a", 2))
	if !errors.Is(err, workertable.ErrExhausted) || !strings.Contains(err.Error(), "4 disposable worker IDs (2^2") {
		t.Fatalf("fifth start: err = %v, want ErrExhausted naming the limit", err)
	}
	if !strings.HasPrefix(err.Error(), b.dialect+": ") {
		t.Errorf("fifth start: err = %v, want it to name the worker table's database, %s", err, b.dialect)
	}
}

func TestSettingsErrors(t *testing.T) {
	reg := registry.New(nil, registry.Settings{Heartbeat: time.Second})
	for _, s := range []workertable.Settings{
		{Mode: "forever"},
		{TTL: time.Second},
		{TTL: 10 * time.Second, Margin: 9500 * time.Millisecond},
	} {
		if _, err := workertable.New(reg, s); err == nil {
			t.Errorf("New accepted %+v", s)
		}
	}
}

// TestLeaseFencedBeforeExpiry blocks a lease's heartbeats by locking its
// row: the holder must end the lease while the row has not yet expired on
// the database clock, and nobody may take the worker ID before it expires.
func testLeaseFencedBeforeExpiry(t *testing.T, b backend) {
	ctx := context.Background()
	s := workertable.Settings{Mode: workertable.Lease, TTL: shortTTL}
	h1, reg := newHolder(t, b, time.Now, s)
	h2, _ := newHolder(t, b, time.Now, s)
	l1, err := h1.Acquire(ctx, req("orders", "one", 1))
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release(ctx, time.Time{})
	lock, err := reg.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Rollback()
	lease1 := l1.(*registry.Lease).Record().LeaseID
	if _, err := lock.ExecContext(ctx, b.lockLease, lease1); err != nil {
		t.Fatal(err)
	}
	<-l1.Done()
	ended := time.Now()
	// How long the row had left when Done closed, by the database clock:
	// what it has left now plus the time since.
	var leftUS int64
	if err := reg.DB().QueryRowContext(ctx, b.left, lease1).Scan(&leftUS); err != nil {
		t.Fatal(err)
	}
	if left := time.Duration(leftUS)*time.Microsecond + time.Since(ended); left <= 0 {
		t.Fatal("the lease ended only after its row had expired: another instance could have taken the worker ID while it issued")
	}
	if !errors.Is(l1.Err(), holder.ErrLeaseLost) {
		t.Errorf("Err = %v, want ErrLeaseLost", l1.Err())
	}
	lock.Rollback()
	// Acquire until some lease gets the worker ID of the fenced one: its
	// row must have expired by then.
	for i := 0; ; i++ {
		l2, err := h2.Acquire(ctx, req("t", fmt.Sprint("other", i), 1))
		if errors.Is(err, workertable.ErrExhausted) {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		defer l2.Release(ctx, time.Time{})
		if l2.WorkerID() != l1.WorkerID() {
			continue
		}
		var expired bool
		if err := reg.DB().QueryRowContext(ctx, b.expired, lease1).Scan(&expired); err != nil {
			t.Fatal(err)
		}
		if !expired {
			t.Error("the old row was taken over before it expired")
		}
		return
	}
}

func testChurnLookup(t *testing.T, b backend) {
	var holders []holder.Holder
	var reg *registry.Registry
	for i := 0; i < 8; i++ {
		h, r := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Lease, TTL: churnTTL})
		holders = append(holders, h)
		reg = r
	}
	holdertest.Churn(t, holders, reg, holdertest.ChurnOptions{Busy: workertable.ErrExhausted})
}

// Two live processes with one sticky identity never share its worker ID: the
// second one waits, sees the first renew its lease, and refuses.
func testStickySecondLiveProcessRefused(t *testing.T, b backend) {
	ctx := context.Background()
	s := workertable.Settings{Mode: workertable.Sticky, TTL: shortTTL}
	first, _ := newHolder(t, b, time.Now, s)
	second, _ := newHolder(t, b, time.Now, s)
	l1, err := first.Acquire(ctx, req("orders", "pod-0", 4))
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release(ctx, time.Time{})
	l2, err := second.Acquire(ctx, req("orders", "pod-0", 4))
	if err == nil {
		l2.Release(ctx, time.Time{})
		t.Fatalf("second process got worker %d while the first holds %d (first lease: %v)", l2.WorkerID(), l1.WorkerID(), l1.Err())
	}
	var in *holder.IdentityInUseError
	if !errors.As(err, &in) || !strings.Contains(err.Error(), "pod-0") || !strings.Contains(err.Error(), "holder.instance") {
		t.Fatalf("second Acquire = %v, want an IdentityInUseError naming the identity and the fix", err)
	}
	if l1.Err() != nil {
		t.Fatalf("the first lease ended: %v", l1.Err())
	}
}

// A sticky identity whose process died (no release, heartbeats stopped)
// comes back once its row expired, with the same worker ID, starting after
// the horizon the dead lease had persisted.
func testStickyTakesOverExpiredIdentity(t *testing.T, b backend) {
	ctx := context.Background()
	s := workertable.Settings{Mode: workertable.Sticky, TTL: shortTTL}
	first, reg := newHolder(t, b, time.Now, s)
	l1, err := first.Acquire(ctx, req("orders", "pod-1", 4))
	if err != nil {
		t.Fatal(err)
	}
	_, hz1, err := l1.Validity()
	if err != nil {
		t.Fatal(err)
	}
	// "Kill" the first process: its heartbeats stop, nothing is released.
	lock, err := reg.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(ctx, b.lockLease, l1.(*registry.Lease).Record().LeaseID); err != nil {
		t.Fatal(err)
	}
	<-l1.Done() // fenced: its heartbeats cannot get through
	_, hz1, _ = l1.Validity()
	lock.Rollback()
	second, _ := newHolder(t, b, time.Now, s)
	// A heartbeat of the first that was blocked on the row lock when it
	// was let go may still renew the row once; the newcomer is then
	// refused as a twin until that renewal expires, and takes over after.
	var l2 holder.Lease
	for deadline := time.Now().Add(3*shortTTL + 5*time.Second); ; {
		l2, err = second.Acquire(ctx, req("orders", "pod-1", 4))
		if err == nil {
			break
		}
		if !errors.Is(err, holder.ErrIdentityInUse) || time.Now().After(deadline) {
			t.Fatalf("Acquire after the first died = %v", err)
		}
		time.Sleep(shortTTL / 10)
	}
	defer l2.Release(ctx, time.Time{})
	if l2.WorkerID() != l1.WorkerID() {
		t.Errorf("worker %d after the restart, was %d", l2.WorkerID(), l1.WorkerID())
	}
	if l2.After().Before(hz1) {
		t.Errorf("After = %s, before the dead lease's horizon %s", l2.After(), hz1)
	}
}

func testStickyRefusesIdentityWithoutPort(t *testing.T, b backend) {
	h, _ := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Sticky})
	holdertest.StickyRefusesUnidentified(t, h)
}

// Lease rows and horizons commit durably even on a server running with
// synchronous_commit off: StartTx switches it on for its transaction.
func TestStartTxCommitsDurably(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, reg := newHolder(t, postgreSQL, time.Now, workertable.Settings{})
	tx, err := reg.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.StartTx(ctx, tx, registry.Start{Namespace: "ns", WorkerID: 1, Table: "t",
		Instance: holder.Instance{ID: "x"}, Kind: "test"}); err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := tx.QueryRowContext(ctx, `SHOW synchronous_commit`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Fatalf("synchronous_commit in the lease transaction = %q, want on", setting)
	}
}

// A claim paused while it holds the namespace lock (a registry
// transaction that took it and then sent nothing, as a process stopped by
// SIGSTOP right after LockNamespace would) holds the other claims of the
// namespace only until the server ends its idle transaction, a heartbeat
// (at least a second) later: another process's Acquire goes through within
// that idle timeout (plus pauseSlack), and the paused claim fails without
// committing. Before, the others waited for as long as the paused
// process's connection lived.
func TestPausedClaimFreesNamespace(t *testing.T) {
	for _, b := range []backend{postgreSQL, mySQL} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			testPausedClaimFreesNamespace(t, b)
		})
	}
}

func testPausedClaimFreesNamespace(t *testing.T, b backend) {
	ctx := context.Background()
	h, reg := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Lease})
	// The idle timeout registry.InTx gives its transactions: max(Heartbeat,
	// 1 s), in whole seconds on MariaDB (idle_transaction_timeout).
	// Not a tolerance: the setting's own value, which the bound below
	// is measured against.
	idle := (max(heartbeat, time.Second) + time.Second - 1).Truncate(time.Second)
	// pauseSlack is what the wait may take beyond idle, measured from
	// before the paused claim sent LockNamespace (so no later than the
	// server's idle timer started): that statement's round trip, the
	// server ending the session once its timer fires, and the rest of the
	// waiting Acquire once it has the lock (a few statements and a
	// durable commit). It measured 5-17 ms in 16 runs on a quiet 2-core
	// machine, alone and with the package's other tests, with and without
	// -race; 500 ms leaves room for a loaded CI machine's scheduling and
	// still fails a wait that lasts until another timeout (a 3 s one
	// waited 3.02 s) or the connection's end. It bounds what a server
	// timeout does, not a speed.
	const pauseSlack = 500 * time.Millisecond
	var sentAt time.Time // before LockNamespace was sent; read after locked
	locked, resume := make(chan struct{}), make(chan struct{})
	paused := make(chan error, 1)
	go func() {
		paused <- reg.InTx(ctx, func(tx *sql.Tx) error {
			sentAt = time.Now()
			if err := reg.LockNamespace(ctx, tx, "ns"); err != nil {
				return err
			}
			close(locked)
			<-resume // paused: sends nothing while the others claim
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-paused:
		t.Fatalf("the claim to pause did not take the lock: %v", err)
	}
	// The context only ends a wait that never ends (without the idle
	// timeout the Acquire waits until it); the bound is checked below.
	actx, cancel := context.WithTimeout(ctx, idle+30*time.Second)
	defer cancel()
	l, err := h.Acquire(actx, req("t", "other", 4))
	waited := time.Since(sentAt)
	close(resume)
	if err != nil {
		t.Fatalf("Acquire behind a paused claim, %s after the claim sent LockNamespace: %v", waited, err)
	}
	l.Release(ctx, time.Time{})
	t.Logf("Acquire went through %s after the paused claim sent LockNamespace (idle timeout %s)", waited, idle)
	if waited > idle+pauseSlack {
		t.Errorf("Acquire behind a paused claim went through %s after the claim sent LockNamespace, want within the idle timeout %s + %s: "+
			"the server did not end the idle transaction a heartbeat later", waited, idle, pauseSlack)
	}
	if err := <-paused; err == nil {
		t.Error("the paused claim committed: the server did not end its idle transaction")
	}
}

// On MySQL, where a transaction cannot ask for a durable commit, a server
// that does not flush every commit is refused unless the registry accepts
// it.
func TestMySQLAcquireRefusesLazyCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := database(t, mySQL)
	var flush, logBin, syncBinlog int
	if err := db.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).
		Scan(&flush, &logBin, &syncBinlog); err != nil {
		t.Fatal(err)
	}
	lazy := (flush != 1 && flush != 3) || (logBin != 0 && syncBinlog != 1)
	h, err := workertable.New(registry.New(db, registry.Settings{Heartbeat: heartbeat}), workertable.Settings{Mode: workertable.Lease})
	if err != nil {
		t.Fatal(err)
	}
	l, err := h.Acquire(ctx, req("t", "a", 4))
	if err == nil {
		l.Release(ctx, time.Time{})
	}
	switch {
	case lazy && !errors.Is(err, registry.ErrNotDurable):
		t.Fatalf("Acquire on a server with innodb_flush_log_at_trx_commit = %d, sync_binlog = %d: err = %v, want ErrNotDurable", flush, syncBinlog, err)
	case !lazy && err != nil:
		t.Fatalf("Acquire on a durable server: %v", err)
	}
}

// The rows say which database holder wrote them.
func testKindNamesDialect(t *testing.T, b backend) {
	ctx := context.Background()
	h, reg := newHolder(t, b, time.Now, workertable.Settings{Mode: workertable.Lease})
	want := map[string]string{"PostgreSQL": "postgres/lease", "MySQL": "mysql/lease"}[b.name]
	if h.Kind() != want {
		t.Errorf("Kind() = %q, want %q", h.Kind(), want)
	}
	l, err := h.Acquire(ctx, req("t", "a", 4))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx, time.Time{})
	recs, err := reg.Leases(ctx, "ns", true)
	if err != nil || len(recs) != 1 || recs[0].Kind != want {
		t.Fatalf("Leases = %+v, %v; want one row of kind %q", recs, err, want)
	}
}
