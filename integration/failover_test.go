package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // pgx's multi-host DSNs follow the primary

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/pgtest"
)

// failoverWriter is one process of a failover run: its acknowledged keys
// by table, and its longest time without an acknowledgement.
type failoverWriter struct {
	name    string
	keys    map[string][]int64
	acks    []time.Time // when each key was acknowledged
	longest time.Duration
	errs    []string // distinct errors, with the time first seen
}

// after returns how many keys the writer acknowledged at or after at.
func (w *failoverWriter) after(at time.Time) int {
	n := 0
	for _, a := range w.acks {
		if !a.Before(at) {
			n++
		}
	}
	return n
}

// runFailoverWriters inserts through a wrapper per writer, each with its
// own worker lease, until stop closes, each INSERT RETURNING its key; wait
// returns once every writer has stopped.
func runFailoverWriters(t *testing.T, dsn string, cfgFor func(string) *keyset.Config, names []string, stop <-chan struct{}) (writers []*failoverWriter, wait func()) {
	t.Helper()
	var wg sync.WaitGroup
	out := make([]*failoverWriter, len(names))
	for i, name := range names {
		w := &failoverWriter{name: name, keys: map[string][]int64{}}
		out[i] = w
		var db *sql.DB
		if name == "plain" { // not idsql's: the database-side defaults key its rows
			plain, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { plain.Close() })
			db = plain
		} else {
			wrapped, err := idsql.Open("pgx", dsn, cfgFor(name), idsql.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { wrapped.Close() })
			db = wrapped.DB.DB
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := time.Now()
			for n := 0; ; n++ {
				select {
				case <-stop:
					w.longest = max(w.longest, time.Since(last))
					return
				default:
				}
				table := []string{"orders", "users"}[n%2]
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second) // not a tolerance: a statement's deadline, so a writer stuck on the killed server tries again; no check reads it
				var id int64
				err := db.QueryRowContext(ctx, "INSERT INTO "+table+" (src, n) VALUES ($1, $2) RETURNING id", name, n).Scan(&id)
				cancel()
				if err != nil {
					msg := err.Error()
					if len(w.errs) == 0 || !strings.HasSuffix(w.errs[len(w.errs)-1], msg) {
						w.errs = append(w.errs, time.Now().Format("15:04:05.000 ")+msg)
					}
					time.Sleep(20 * time.Millisecond)
					continue
				}
				now := time.Now()
				w.longest = max(w.longest, now.Sub(last))
				last = now
				w.keys[table] = append(w.keys[table], id)
				w.acks = append(w.acks, now)
			}
		}()
	}
	t.Cleanup(wg.Wait)
	return out, wg.Wait
}

// pause returns the writer's pause across a failover: from its last
// acknowledgement before killed to its first at or after promoted; ok is
// false when it acknowledged nothing before or nothing after.
func (w *failoverWriter) pause(killed, promoted time.Time) (time.Duration, bool) {
	var last time.Time
	for _, a := range w.acks {
		if a.Before(killed) {
			last = a
		} else if !a.Before(promoted) {
			return a.Sub(last), !last.IsZero()
		}
	}
	return 0, false
}

// failoverResume bounds how long a writer takes to acknowledge a key
// again once the topology takes writes again (the standby promoted, a
// Galera cluster's dead member evicted): its next attempt comes 20-50 ms
// after a failed one, and connects (a multi-host DSN skips the dead
// primary at once, connection refused) to a server whose leases and
// ranges carried over. Measured: 0-10 ms beyond the promotion and
// eviction. The bound leaves room for a process that waits for the
// machine, never for a retry back-off or a lease's end, which take
// seconds.
const failoverResume = time.Second // not a tolerance: bounds a writer's retry (20-50 ms) and reconnect; measured 0-10 ms beyond the failover's own time

// checkAcked fails the test for a key of table acknowledged to two
// writers (acked: each writer's keys), and for acknowledged keys missing
// from stored, the table's keys as read back from where.
func checkAcked(t *testing.T, table string, acked map[string][]int64, stored map[int64]int, where string) {
	t.Helper()
	seen := map[int64]string{}
	lost := 0
	for name, keys := range acked {
		for _, k := range keys {
			if other, dup := seen[k]; dup {
				t.Errorf("%s: key %d acknowledged to %s and %s", table, k, other, name)
			}
			seen[k] = name
			if stored[k] == 0 {
				lost++
			}
		}
	}
	if lost > 0 {
		t.Errorf("%s: %d of %d acknowledged keys are not %s", table, lost, len(seen), where)
	}
}

// failoverConfig is the configuration of a failover run's process
// instance: its worker leases from the worker table, a snowflake and a
// segment table; holder adds to the holder's settings.
func failoverConfig(t *testing.T, instance, holder string) *keyset.Config {
	t.Helper()
	cfg, err := keyset.Parse("failover.yaml", []byte("namespace: fo\nholder: {kind: postgres, mode: sticky, instance: "+instance+", database_workers: 1"+holder+"}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 10}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// failoverSchema creates a failover run's tables on primary and migrates
// them, their database-side defaults included; it returns each process
// instance's configuration.
func failoverSchema(t *testing.T, primary *pgtest.Server) func(instance string) *keyset.Config {
	t.Helper()
	raw, err := sql.Open("postgres", primary.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, src text, n int); "+
		"CREATE TABLE users (id bigint PRIMARY KEY, src text, n int)"); err != nil {
		t.Fatal(err)
	}
	cfgFor := func(instance string) *keyset.Config { return failoverConfig(t, instance, "") }
	if err := idsql.MigrateWith(ctx, raw, cfgFor("admin"), idsql.MigrateOptions{DBDefaults: true}); err != nil {
		t.Fatal(err)
	}
	return cfgFor
}

// checkAllAcked runs checkAcked on both tables of a failover run, read
// back from db at where.
func checkAllAcked(t *testing.T, writers []*failoverWriter, db *sql.DB, where string) {
	t.Helper()
	for _, table := range []string{"orders", "users"} {
		acked := map[string][]int64{}
		for _, w := range writers {
			acked[w.name] = w.keys[table]
		}
		checkAcked(t, table, acked, storedKeys(t, db, table), where)
	}
}

// TestFailoverPostgresSync: a PostgreSQL primary streams synchronously to
// a standby (synchronous_standby_names, synchronous_commit on); four
// processes insert through the wrapper over pgx with a multi-host DSN
// that follows the writable server, each with its lease from the worker
// table, into a snowflake and a segment table, and a fifth inserts
// without idsql, its keys from the database-side defaults. The primary is killed
// (immediate shutdown) and the standby promoted. No key is acknowledged
// twice, every acknowledged row is on the promoted server, and each
// process issues again after the failover.
func TestFailoverPostgresSync(t *testing.T) {
	primary := pgtest.StartServer(t)
	standby := primary.StartStandby(true)
	cfgFor := failoverSchema(t, primary)
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=read-write&connect_timeout=2",
		primary.Port(), standby.Port())
	stop := make(chan struct{})
	writers, wait := runFailoverWriters(t, dsn, cfgFor, []string{"w1", "w2", "w3", "w4", "plain"}, stop)
	stopWriters := sync.OnceFunc(func() { close(stop) })
	t.Cleanup(stopWriters) // runs before the writers' wait, also when the test stops early

	time.Sleep(1500 * time.Millisecond)
	killed := time.Now()
	primary.Crash()
	if old, err := sql.Open("postgres", primary.DSN()); err == nil {
		if err := old.Ping(); err == nil {
			t.Fatal("the old primary still answers after its kill: the failover did not happen")
		}
		old.Close()
	}
	standby.Promote()
	promoted := time.Now()
	var inRecovery bool
	sdb, err := sql.Open("postgres", standby.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	if err := sdb.QueryRow("SELECT pg_is_in_recovery()").Scan(&inRecovery); err != nil || inRecovery {
		t.Fatalf("the standby after pg_promote: in recovery %v, %v", inRecovery, err)
	}
	time.Sleep(3 * time.Second) // not a tolerance: how long the writers run on the promoted server (they resumed within 75 ms in every run)
	stopWriters()
	wait()
	stopped := time.Now()
	t.Logf("primary killed at %s, standby promoted %s later", killed.Format("15:04:05.000"), promoted.Sub(killed))

	checkAllAcked(t, writers, sdb, "on the promoted server")
	checkFailoverPauses(t, writers, killed, promoted, stopped)
}

// checkFailoverPauses logs what each writer did and fails one that issued
// nothing after the failover (the kill at killed, writes taken again at
// served, the writers stopped at stopped), or paused across it more than
// failoverResume beyond the failover's own time.
func checkFailoverPauses(t *testing.T, writers []*failoverWriter, killed, served, stopped time.Time) {
	t.Helper()
	failover := served.Sub(killed)
	for _, w := range writers {
		t.Logf("%s: %d orders, %d users acknowledged, %d after the failover; longest pause between two keys %s (the failover's included); errors:\n%s",
			w.name, len(w.keys["orders"]), len(w.keys["users"]), w.after(served), w.longest, strings.Join(w.errs, "\n"))
		switch p, ok := w.pause(killed, served); {
		case !ok:
			t.Errorf("%s issued no key before the kill or none in the %s after the failover", w.name, stopped.Sub(served).Round(time.Millisecond))
		case p > failover+failoverResume:
			t.Errorf("%s paused %s across the failover, more than its %s and %s", w.name, p.Round(time.Millisecond), failover.Round(time.Millisecond), failoverResume)
		default:
			t.Logf("%s paused %s across the failover (%s from the kill until writes were taken again)", w.name, p.Round(time.Millisecond), failover.Round(time.Millisecond))
		}
	}
}

// TestFailoverPostgresBehindPgBouncer is TestFailoverPostgresSync with
// the processes behind PgBouncer in transaction mode, which the operator
// moves to the promoted standby (the configuration rewritten, RELOAD):
// PgBouncer keeps the clients' connections, so the processes resume on
// the connections they hold once it reaches the new primary.
func TestFailoverPostgresBehindPgBouncer(t *testing.T) {
	primary := pgtest.StartServer(t)
	standby := primary.StartStandby(true)
	bouncer := primary.StartBouncer()
	cfgFor := failoverSchema(t, primary)
	// pgx must not cache named statements behind a transaction pooler.
	dsn := bouncer.DSN() + "&default_query_exec_mode=exec&connect_timeout=2"
	stop := make(chan struct{})
	writers, wait := runFailoverWriters(t, dsn, cfgFor, []string{"w1", "w2", "w3", "plain"}, stop)
	stopWriters := sync.OnceFunc(func() { close(stop) })
	t.Cleanup(stopWriters) // runs before the writers' wait, also when the test stops early

	time.Sleep(1500 * time.Millisecond)
	killed := time.Now()
	primary.Crash()
	standby.Promote()
	promoted := time.Now()
	bouncer.Repoint(standby)
	repointed := time.Now()
	t.Logf("promoted %s after the kill, PgBouncer serving from the standby %s after that", promoted.Sub(killed).Round(time.Millisecond), repointed.Sub(promoted).Round(time.Millisecond))
	time.Sleep(3 * time.Second) // not a tolerance: how long the writers run on the promoted server (they resumed 1-9 ms after the pooler's move in three runs)
	stopWriters()
	wait()
	stopped := time.Now()
	t.Logf("primary killed at %s, standby promoted and PgBouncer moved to it %s later", killed.Format("15:04:05.000"), repointed.Sub(killed))

	sdb, err := sql.Open("postgres", standby.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	checkAllAcked(t, writers, sdb, "on the promoted server")
	checkFailoverPauses(t, writers, killed, repointed, stopped)
}

// TestFailoverPostgresAsyncRefused: a primary streaming to an
// asynchronous standby, which a failover may promote without the last
// worker leases and segment allocations, is refused for snowflake keys
// and segment ranges with errors that name the standby and
// synchronous_standby_names; holder.accept_lazy_commits takes the risk,
// and listing the standby in synchronous_standby_names (no restart)
// mends it.
func TestFailoverPostgresAsyncRefused(t *testing.T) {
	primary := pgtest.StartServer(t)
	primary.StartStandby(false)
	raw, err := sql.Open("postgres", primary.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, src text, n int); "+
		"CREATE TABLE users (id bigint PRIMARY KEY, src text, n int)"); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, failoverConfig(t, "admin", "")); err != nil {
		t.Fatal(err)
	}
	// insert inserts a row into each table through a process of its own,
	// and returns the errors.
	insert := func(instance, holder string) (snowflakeErr, segmentErr error) {
		db, err := idsql.Open("postgres", primary.DSN(), failoverConfig(t, instance, holder), idsql.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_, snowflakeErr = db.ExecContext(ctx, "INSERT INTO orders (src, n) VALUES ($1, 1)", instance)
		_, segmentErr = db.ExecContext(ctx, "INSERT INTO users (src, n) VALUES ($1, 1)", instance)
		return snowflakeErr, segmentErr
	}
	sfErr, segErr := insert("a", "")
	if !errors.Is(sfErr, registry.ErrNotDurable) || !strings.Contains(sfErr.Error(), "standby (async)") ||
		!strings.Contains(sfErr.Error(), "synchronous_standby_names") {
		t.Fatalf("a snowflake key on a primary with an asynchronous standby: %v; want ErrNotDurable naming the standby and the setting", sfErr)
	}
	if !errors.Is(segErr, segment.ErrNotDurable) || !strings.Contains(segErr.Error(), "standby (async)") ||
		!strings.Contains(segErr.Error(), "synchronous_standby_names") {
		t.Fatalf("a segment range on a primary with an asynchronous standby: %v; want segment.ErrNotDurable naming the standby and the setting", segErr)
	}
	for _, table := range []string{"orders", "users"} {
		var rows int
		if err := raw.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&rows); err != nil || rows != 0 {
			t.Errorf("%s: %d rows written by a refused INSERT (%v)", table, rows, err)
		}
	}
	if sfErr, segErr := insert("b", ", accept_lazy_commits: true"); sfErr != nil || segErr != nil {
		t.Errorf("with accept_lazy_commits: %v; %v", sfErr, segErr)
	}
	if _, err := raw.ExecContext(ctx, "ALTER SYSTEM SET synchronous_standby_names = 'standby'"); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.ExecContext(ctx, "SELECT pg_reload_conf()"); err != nil {
		t.Fatal(err)
	}
	// The standby reports itself sync once the primary has read the
	// setting and the standby answered: wait for that, then claim.
	deadline := time.Now().Add(10 * time.Second) // not a tolerance: the poll's limit for a state change, which took 55 ms (logged)
	waitStart := time.Now()
	for {
		var state string
		raw.QueryRowContext(ctx, "SELECT coalesce(max(sync_state), '') FROM pg_stat_replication").Scan(&state)
		if state == "sync" {
			t.Logf("the standby reported sync %s after the reload", time.Since(waitStart).Round(time.Millisecond))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the standby's sync_state is %q 10 s after synchronous_standby_names named it", state)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sfErr, segErr := insert("c", ""); sfErr != nil || segErr != nil {
		t.Errorf("with the standby synchronous: %v; %v", sfErr, segErr)
	}
}
