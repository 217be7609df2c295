//go:build linux

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/etcdtest"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/zktest"
)

// The twin and clock tests run a few chaos helpers on the shared servers,
// each drawing keys of one snowflake table without inserting rows (-draw),
// so that each key's time is when it was issued. The checker reads every
// key each process printed: duplicates, and the longest gap in the keys
// of a process the fault did not touch.

// faultHeartbeat is holder.heartbeat of the twin and clock tests. A
// lease's horizon runs three heartbeats ahead of its last one, so a
// process issues through a stall of its database's commits shorter than
// that: a second keeps the shared test servers' stalls (under the load of
// every other test on the machine) from showing as gaps.
const faultHeartbeat = time.Second

// faultMaxGap is the longest pause allowed to a process a fault did not
// touch (issue 28).
const faultMaxGap = 100 * time.Millisecond

// faultSoak is how long the twin and clock-step tests keep their faults
// going: IDSQL_CHAOS_DURATION, for a soak; zero (once) when unset.
func faultSoak(t *testing.T) time.Duration {
	t.Helper()
	v := os.Getenv(EnvChaosDuration)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		t.Fatalf("%s=%q: want a duration such as 10m", EnvChaosDuration, v)
	}
	return d
}

// faultHolder is a holder kind and mode on a database, as a twin or clock
// test runs it.
type faultHolder struct {
	name   string // row label: "local, worker table on PostgreSQL"
	driver string // postgres or mysql: where the worker table lives
	yaml   string // the holder section's settings, less instance and cache_dir
	zk     bool   // needs ZooKeeper
	etcd   bool   // needs etcd
	// exclusive: a second process with the same identity must be refused
	// (false for modes that hand it another worker ID).
	exclusive bool
	// uuid7: the leased table is a uuid7 table (its keys drawn as the
	// keys its UUIDs carry).
	uuid7 bool
}

// faultHolders are the holders the twin and clock tests cover.
var faultHolders = []faultHolder{
	{name: "local, worker table on PostgreSQL", driver: "postgres", exclusive: true,
		yaml: "  kind: local\n  workers: {twin: 9, other: 10, clock: 11, control: 12}\n"},
	{name: "local, worker table on MariaDB", driver: "mysql", exclusive: true,
		yaml: "  kind: local\n  workers: {twin: 9, other: 10, clock: 11, control: 12}\n"},
	{name: "postgres/sticky", driver: "postgres", exclusive: true,
		yaml: "  kind: postgres\n  mode: sticky\n  session_timeout: 10s\n"},
	{name: "mysql/sticky on MariaDB", driver: "mysql", exclusive: true,
		yaml: "  kind: mysql\n  mode: sticky\n  session_timeout: 10s\n"},
	{name: "postgres/lease", driver: "postgres",
		yaml: "  kind: postgres\n  mode: lease\n  session_timeout: 10s\n"},
	{name: "postgres/disposable", driver: "postgres",
		yaml: "  kind: postgres\n  mode: disposable\n  session_timeout: 10s\n"},
	{name: "mysql/lease on MariaDB, uuid7", driver: "mysql", uuid7: true,
		yaml: "  kind: mysql\n  mode: lease\n  session_timeout: 10s\n"},
	{name: "mysql/disposable on MariaDB", driver: "mysql",
		yaml: "  kind: mysql\n  mode: disposable\n  session_timeout: 10s\n"},
	{name: "zookeeper/recycle", driver: "postgres", zk: true,
		yaml: "  kind: zookeeper\n  mode: recycle\n  session_timeout: 2s\n  tick_time: 500ms\n"},
	{name: "zookeeper/sticky", driver: "postgres", zk: true, exclusive: true,
		yaml: "  kind: zookeeper\n  mode: sticky\n  session_timeout: 2s\n  tick_time: 500ms\n"},
	// etcd's lease TTL cannot be shorter than about 2 s.
	{name: "etcd/recycle", driver: "postgres", etcd: true,
		yaml: "  kind: etcd\n  mode: recycle\n  session_timeout: 2s\n"},
	{name: "etcd/sticky", driver: "postgres", etcd: true, exclusive: true,
		yaml: "  kind: etcd\n  mode: sticky\n  session_timeout: 2s\n"},
}

// eachHolder builds the chaos helper and runs f for each holder as a
// subtest, all at once: they mostly wait, and go test runs no more
// parallel subtests at a time than it has CPUs (-parallel). t.Run may be
// called from several goroutines.
func eachHolder(t *testing.T, hs []faultHolder, f func(*faultRun)) {
	bin := niced(t, buildChaosProc(t, t.TempDir()))
	var wg sync.WaitGroup
	for _, h := range hs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(strings.NewReplacer(" ", "_", ",", "", "/", "_").Replace(h.name), func(t *testing.T) { f(newFaultRun(t, h, bin)) })
		}()
	}
	wg.Wait()
}

// faultRun is one twin or clock test's world: the database holding the
// worker table (a schema of the shared PostgreSQL or a database of the
// shared MariaDB), the helper binary, and the processes it ran.
type faultRun struct {
	t   *testing.T
	c   *chaosProc // the control: a process no fault touches
	h   faultHolder
	bin string
	dir string
	db  *sql.DB // the worker table's database
	dsn string
	ns  string
	zk  string // ZooKeeper servers, for a zookeeper holder
	etc string // etcd endpoints, for an etcd holder
	mu  sync.Mutex
	all []*chaosProc

	// The slew of the process whose clock setClock moves: the rate, since
	// when, and what it gained before.
	slew     float64
	slewFrom time.Time
	slewed   time.Duration
}

// faultSeq numbers the runs of a test binary.
var faultSeq atomic.Int64

func newFaultRun(t *testing.T, h faultHolder, bin string) *faultRun {
	t.Helper()
	r := &faultRun{t: t, h: h, bin: bin, dir: memDir(t)}
	switch h.driver {
	case "mysql":
		r.db, r.dsn = mysqltest.Open(t)
	default:
		r.db, r.dsn = pgtest.Open(t)
	}
	if h.zk {
		servers := zktest.Servers(t)
		r.zk = strings.Join(servers, ", ")
	}
	if h.etcd {
		r.etc = strings.Join(etcdtest.Endpoints(t), ", ")
	}
	// A namespace of its own: ZooKeeper paths are named after it.
	r.ns = fmt.Sprintf("f%d_%d_%d", os.Getpid(), time.Now().Unix()%1e6, faultSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := registry.New(r.db, registry.Settings{AcceptLazyCommits: true}).Migrate(ctx); err != nil {
		t.Fatalf("migrate the worker table: %v", err)
	}
	t.Cleanup(func() {
		for _, p := range r.procs() {
			p.kill()
		}
	})
	return r
}

// niced returns a command that runs bin ahead of the machine's other work
// (nice -10) where the test may (as root, with nice(1)), so that a gap in
// a process's keys shows a pause of idsql's, not one of a scheduler busy
// with the other tests on the machine; a pause that waits for a server
// or a lock is as long at any priority. Every thread of the process has
// the priority from its start (nice applies to one thread, and the Go
// runtime starts its threads early). Elsewhere bin itself.
func niced(t *testing.T, bin string) string { return nicedBy(t, bin, -10) }

// nicedBy returns a command that runs bin at niceness n where the test
// may set it (see niced), elsewhere bin itself.
//
// Where the kernel groups tasks by session for scheduling (autogroup,
// /proc/sys/kernel/sched_autogroup_enabled), it shares the CPU between
// sessions first and applies nice values only inside one: a niced process
// in the test's session would run behind the test's other processes but
// level with each PostgreSQL backend, every one of which is a session of
// its own. So the command also starts a session (setsid, which keeps the
// process ID) and gives its group the niceness n (/proc/self/autogroup;
// ignored where the kernel has no autogroup). The sentry's machine view
// showed why: victims at nice 10 in the test's session, their backends
// 33-52 runnable at once, CPU pressure 70-99 %.
func nicedBy(t *testing.T, bin string, n int) string {
	nice, err := exec.LookPath("nice")
	if err != nil || n < 0 && os.Geteuid() != 0 {
		return bin
	}
	path := fmt.Sprintf("%s-nice%d", bin, n)
	script := fmt.Sprintf("#!/bin/sh\nexec %s -n %d %s \"$@\"\n", nice, n, bin)
	if setsid, err := exec.LookPath("setsid"); err == nil {
		script = fmt.Sprintf("#!/bin/sh\nexec %s /bin/sh -c 'echo %d >/proc/self/autogroup 2>/dev/null; exec %s -n %d %s \"$@\"' sh \"$@\"\n",
			setsid, n, nice, n, bin)
	}
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// memDir returns a directory for the processes' files that lives in
// memory (/dev/shm) where the machine has one: a write to a file on a
// disk file system waits, now and then, for its journal (tens to hundreds
// of milliseconds while the database servers sync), which would show as a
// gap in the keys of every process at once.
func memDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "idsql-fault-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// config writes process name's configuration: identity, and a cache
// directory of its own (a host of its own).
func (r *faultRun) config(name, identity string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace: %s\nlayout: leaf\nholder:\n%s", r.ns, r.h.yaml)
	fmt.Fprintf(&b, "  instance: %s\n  heartbeat: %s\n  cache_dir: %q\n", identity, faultHeartbeat, filepath.Join(r.dir, "cache-"+name))
	if r.h.zk {
		fmt.Fprintf(&b, "  servers: [%s]\n", r.zk)
	}
	if r.h.etcd {
		fmt.Fprintf(&b, "  endpoints: [%s]\n", r.etc)
	}
	if r.h.driver == "mysql" {
		b.WriteString("  accept_lazy_commits: true\n") // the test server flushes lazily
	}
	fmt.Fprintf(&b, "tables:\n  %s: {strategy: %s}\n", sfTable, sfStrategy(r.h.uuid7))
	path := filepath.Join(r.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return path
}

// start launches a process drawing keys on identity; clockAt, when not
// zero, is its clock's first reading (-clock-start).
func (r *faultRun) start(name, identity string, clockAt time.Time, extra ...string) *chaosProc {
	r.t.Helper()
	args := append([]string{"-driver", r.h.driver, "-draw", "-workers", "1", "-batch", "1", "-pause", "5ms"}, extra...)
	p, err := startProc(r.bin, r.dir, r.dsn, r.config(name, identity), name, identity, clockAt, args)
	if err != nil {
		r.t.Fatalf("launch %s: %v", name, err)
	}
	r.mu.Lock()
	r.all = append(r.all, p)
	r.mu.Unlock()
	return p
}

func (r *faultRun) procs() []*chaosProc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*chaosProc(nil), r.all...)
}

// ready waits for p's first key and ends the test if none comes.
func (r *faultRun) ready(p *chaosProc) {
	r.t.Helper()
	if !p.waitSnowflake(0, chaosReady) {
		r.t.Fatalf("%s issued no key within %s: %s\n%s", p.name, chaosReady, p.outcome(), p.logTail())
	}
}

// keys returns p's keys so far.
func (p *chaosProc) keys() []int64 {
	_ = p.scan()
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]int64(nil), p.sf...)
}

// duplicates counts the keys that more than one process, or one process
// twice, printed; with a few examples.
func (r *faultRun) duplicates() (int, []string) {
	seen := map[int64]string{}
	n := 0
	var ex []string
	for _, p := range r.procs() {
		for _, k := range p.keys() {
			if o, dup := seen[k]; dup {
				n++
				if len(ex) < 3 {
					ex = append(ex, describeKey(sfTable, k, 2, o+","+p.name))
				}
				continue
			}
			seen[k] = p.name
		}
	}
	return n, ex
}

// control starts the control process, which no fault touches: a pause
// in its keys is one of the machine or of the shared servers (a loaded
// machine stalls every process at once), against which untouched
// processes' gaps are judged.
func (r *faultRun) control() {
	r.t.Helper()
	r.c = r.start("c", "control", time.Time{})
	r.ready(r.c)
}

// sentry watches p, which no fault touches, against the control, and
// captures what p waits on when it goes quiet while the control issues.
func (r *faultRun) sentry(p *chaosProc) {
	server := pgView(r.dsn)
	if r.h.driver == "mysql" {
		server = mysqlView(r.db)
	}
	watchStalls(r.t, func() *chaosProc { return r.c }, func() []*chaosProc {
		if p.running() {
			return []*chaosProc{p}
		}
		return nil
	}, server)
}

// checkGap checks that p, which the fault did not touch, issued keys in
// [from, to] with no gap longer than faultMaxGap beyond the control's
// longest gap in the same window (stallWindow either side: a loaded
// machine or a stalled shared server stops every process, and lets them
// run again one after the other) and the time p noted it did not run
// (-draw's probe). It returns p's longest gap and the part of it the
// control did not share.
func (r *faultRun) checkGap(p *chaosProc, from, to time.Time, what string) (gap, excess time.Duration) {
	r.t.Helper()
	gap, excess, at := gapBeyond(p, r.c, from, to)
	switch {
	case excess > faultMaxGap:
		r.t.Errorf("%s: %s issued nothing for %s from %s, the control %s only %s of it (allowed: %s); its slow keys (a pause inside idsql): %s\n%s",
			what, p.name, gap.Round(time.Millisecond), fmtTick(at), r.c.name, (gap - excess).Round(time.Millisecond), faultMaxGap, slowKeys(p), p.logTail())
	case gap > faultMaxGap:
		r.t.Logf("%s: %s issued nothing for %s from %s, and nor did the control for %s of it: the machine stalled",
			what, p.name, gap.Round(time.Millisecond), fmtTick(at), (gap - excess).Round(time.Millisecond))
	}
	return gap, excess
}

// stallWindow is how close to an untouched process's pause, or to the
// end of its worker lease, the control's must be to excuse it: the same
// stall of the machine or of a shared server reaches processes a little
// apart (each at its next key, or its next heartbeat).
const stallWindow = time.Second

// gapBeyond returns p's longest gap in [from, to], by its keys' times,
// where it began, and the part of it that counts against a fault: what
// is left of it after the longer of two measured causes that are not
// idsql's: the longest gap of the control c (nil: none) in the same
// window (stallWindow either side: the machine or a shared server
// stalled), and the time p itself noted it did not run or waited, with
// every goroutine, for the database to answer its own statements
// (chaosproc's notes).
func gapBeyond(p, c *chaosProc, from, to time.Time) (gap, excess time.Duration, at time.Time) {
	gap, at = longestGap(p, from, to)
	var cg time.Duration
	if c != nil {
		cg, _ = longestGap(c, at.Add(-stallWindow), at.Add(gap+stallWindow))
	}
	own := stalled(p, at, at.Add(gap)) + databaseWaits(p, at, at.Add(gap))
	return gap, max(gap-max(cg, own), 0), at
}

// checkUntouched fails the test when p, which no fault touched in [from,
// to], paused in it for more than allowed beyond its control c's pause
// around the same time (gapBeyond's rule), and logs its longest gap. It
// returns that gap and its part counted against the fault.
func checkUntouched(t *testing.T, p, c *chaosProc, from, to time.Time, allowed time.Duration, what string) (gap, excess time.Duration) {
	t.Helper()
	gap, excess, at := gapBeyond(p, c, from, to)
	if excess > allowed {
		t.Errorf("%s: %s, untouched, issued nothing for %s from %s (of %s..%s), the control %s only %s of it (allowed: %s beyond it)\n%s",
			what, p.name, gap.Round(time.Millisecond), fmtTick(at), fmtTick(from), fmtTick(to), c.name, (gap - excess).Round(time.Millisecond), allowed, p.logTail())
	} else {
		t.Logf("%s: %s, untouched, longest gap %s (%s beyond the control's) in %s", what, p.name, gap.Round(time.Millisecond), excess.Round(time.Millisecond), to.Sub(from).Round(time.Millisecond))
	}
	return gap, excess
}

// stalled returns how long, within [from, to], p noted that it did not
// run.
func stalled(p *chaosProc, from, to time.Time) time.Duration {
	var sum time.Duration
	for _, l := range strings.Split(p.log(), "\n") {
		_, note, ok := strings.Cut(l, "note: stalled ")
		if !ok {
			continue
		}
		d, start, _ := strings.Cut(note, " from ")
		dur, err1 := time.ParseDuration(d)
		clock, err2 := time.Parse("15:04:05.000", start)
		if err1 != nil || err2 != nil {
			continue
		}
		y, m, day := from.UTC().Date()
		s := time.Date(y, m, day, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC)
		e := s.Add(dur)
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if e.After(s) {
			sum += e.Sub(s)
		}
	}
	return sum
}

// databaseWaits returns how long, within [from, to], every inserting
// goroutine of p at once noted it was waiting for the database to answer
// its own statements (chaosproc -db-waits): the time p waited for the
// server, not for idsql.
func databaseWaits(p *chaosProc, from, to time.Time) time.Duration {
	log := p.log()
	workers := 0
	byG := map[string][][2]time.Time{}
	for _, l := range strings.Split(log, "\n") {
		if i := strings.LastIndex(l, ", workers "); i >= 0 && workers == 0 {
			workers, _ = strconv.Atoi(l[i+len(", workers "):])
		}
		_, note, ok := strings.Cut(l, "note: g")
		if !ok {
			continue
		}
		f := strings.Fields(note) // "1 database 35ms from 15:04:05.000"
		if len(f) != 5 || f[1] != "database" || f[3] != "from" {
			continue
		}
		d, err1 := time.ParseDuration(f[2])
		clock, err2 := time.Parse("15:04:05.000", f[4])
		if err1 != nil || err2 != nil {
			continue
		}
		y, m, day := from.UTC().Date()
		s := time.Date(y, m, day, clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC)
		byG[f[0]] = append(byG[f[0]], [2]time.Time{later(s, from), earliest(s.Add(d), to)})
	}
	if workers == 0 || len(byG) < workers {
		return 0 // some goroutine never waited: the process was not all waiting
	}
	// The times all goroutines waited: intersect their waits.
	var all [][2]time.Time
	first := true
	for _, ws := range byG {
		if first {
			all, first = ws, false
			continue
		}
		var both [][2]time.Time
		for _, a := range all {
			for _, w := range ws {
				if s, e := later(a[0], w[0]), earliest(a[1], w[1]); e.After(s) {
					both = append(both, [2]time.Time{s, e})
				}
			}
		}
		all = both
	}
	var sum time.Duration
	for _, w := range all {
		if w[1].After(w[0]) {
			sum += w[1].Sub(w[0])
		}
	}
	return sum
}

// earliest returns the earlier of two times.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// slowKeys returns the last of p's notes on keys that took long.
func slowKeys(p *chaosProc) string {
	var out []string
	for _, l := range strings.Split(p.log(), "\n") {
		if _, note, ok := strings.Cut(l, "note: a key took "); ok {
			out = append(out, note)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out[max(len(out)-3, 0):], "; ")
}

// checkLease fails the test for every worker lease p, which the fault
// did not touch, lost in [from, to], unless the control lost one within
// stallWindow of it (a stall of the shared server ends both).
func (r *faultRun) checkLease(p *chaosProc, from, to time.Time, what string) {
	r.t.Helper()
	for _, e := range unexcusedLeaseEnds(p, r.c, from, to) {
		r.t.Errorf("%s: %s lost its worker lease at %s, and the control lost none within %s of it: %s\n%s", what, p.name, fmtTick(e), stallWindow, leaseEndLine(p, e), p.logTail())
	}
}

// unexcusedLeaseEnds returns when, in [from, to], p lost a worker lease
// while the control c lost none within stallWindow, and logs nothing.
func unexcusedLeaseEnds(p, c *chaosProc, from, to time.Time) []time.Time {
	var out []time.Time
	ctl := leaseEnds(c)
	for _, e := range leaseEnds(p) {
		if e.Before(from) || e.After(to) {
			continue
		}
		excused := false
		for _, ce := range ctl {
			if d := ce.Sub(e); d >= -stallWindow && d <= stallWindow {
				excused = true
			}
		}
		if !excused {
			out = append(out, e)
		}
	}
	return out
}

// leaseEndLine returns p's log line saying it lost a worker lease at at
// (to the millisecond), with its cause.
func leaseEndLine(p *chaosProc, at time.Time) string {
	stamp := "(at " + fmtTick(at) + ")"
	for _, l := range strings.Split(p.log(), "\n") {
		if strings.Contains(l, "worker lease ended") && strings.HasSuffix(l, stamp) {
			return l
		}
	}
	return "(no log line at " + fmtTick(at) + ")"
}

// leaseEnds returns when p lost a worker lease, as its log says (idsql's
// "worker lease ended" lines, which chaosproc stamps "(at 15:04:05.000)").
func leaseEnds(p *chaosProc) []time.Time {
	if p == nil {
		return nil
	}
	var out []time.Time
	day := p.launched.UTC()
	for _, l := range strings.Split(p.log(), "\n") {
		if !strings.Contains(l, "worker lease ended") {
			continue
		}
		i := strings.LastIndex(l, "(at ")
		if i < 0 {
			continue
		}
		clock, err := time.Parse("15:04:05.000", strings.TrimSuffix(l[i+len("(at "):], ")"))
		if err != nil {
			continue
		}
		at := time.Date(day.Year(), day.Month(), day.Day(), clock.Hour(), clock.Minute(), clock.Second(), clock.Nanosecond(), time.UTC)
		if at.Before(day.Add(-time.Hour)) { // past midnight
			at = at.Add(24 * time.Hour)
		}
		out = append(out, at)
	}
	return out
}

// longestGap returns the longest time in [from, to] in which p issued no
// key, by the keys' times (the edges count: a process that stopped has a
// gap up to to), and where it began.
func longestGap(p *chaosProc, from, to time.Time) (time.Duration, time.Time) {
	var ticks []time.Time
	for _, k := range p.keys() {
		if t := chaosLayout.Decompose(k).Time; !t.Before(from) && !t.After(to) {
			ticks = append(ticks, t)
		}
	}
	sort.Slice(ticks, func(i, j int) bool { return ticks[i].Before(ticks[j]) })
	prev := from
	var gap time.Duration
	at := from
	for _, t := range append(ticks, to) {
		if d := t.Sub(prev); d > gap {
			gap, at = d, prev
		}
		prev = t
	}
	return gap, at
}

// workers returns the worker IDs of p's keys.
func workers(p *chaosProc) map[int64]bool {
	ws := map[int64]bool{}
	for _, k := range p.keys() {
		ws[chaosLayout.Decompose(k).Worker] = true
	}
	return ws
}

// row logs a row of RELIABILITY.md's table.
func (r *faultRun) row(fault string, keys, dups int, gap, excess time.Duration, recovery string) {
	r.t.Logf("reliability | %s | %s | %d | %d | %s (%s) | %s |", fault, r.h.name, keys, dups,
		gap.Round(time.Millisecond), excess.Round(time.Millisecond), recovery)
}

// totalKeys counts the keys every process printed.
func (r *faultRun) totalKeys() int {
	n := 0
	for _, p := range r.procs() {
		n += len(p.keys())
	}
	return n
}

// watch samples p's key count every 5 ms until the test ends, so that the
// test can tell how long, in true time, a process whose clock it moved
// issued nothing (its keys' times are on its own clock).
func (r *faultRun) watch(p *chaosProc) *watcher {
	return watch(r.t, func() int {
		_ = p.scan()
		n, _ := p.counts()
		return n
	})
}

// watch samples count every 5 ms until the test ends and notes when it
// grew: when, in true time, a process printed keys.
func watch(t *testing.T, count func() int) *watcher {
	w := &watcher{count: count, stop: make(chan struct{})}
	w.wg.Add(1)
	go w.run()
	t.Cleanup(w.close)
	return w
}

// A watcher notes when a process's output grew.
type watcher struct {
	count func() int
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once

	mu    sync.Mutex
	moves []time.Time // when the count was seen to grow
}

func (w *watcher) run() {
	defer w.wg.Done()
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	last := 0
	for {
		select {
		case <-w.stop:
			return
		case now := <-t.C:
			if n := w.count(); n > last {
				last = n
				w.mu.Lock()
				w.moves = append(w.moves, now)
				w.mu.Unlock()
			}
		}
	}
}

func (w *watcher) close() {
	w.once.Do(func() { close(w.stop) })
	w.wg.Wait()
}

// gap returns the longest true time in [from, to] in which the process
// printed no key (the edges count), to 5 ms.
func (w *watcher) gap(from, to time.Time) time.Duration {
	g, _ := w.longest(from, to)
	return g
}

// longest returns the longest true time in [from, to] in which the
// process printed no key (the edges count), to 5 ms, and where it began.
func (w *watcher) longest(from, to time.Time) (time.Duration, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	prev := from
	var gap time.Duration
	at := from
	for _, m := range append(append([]time.Time(nil), w.moves...), to) {
		if m.Before(from) {
			continue
		}
		if m.After(to) {
			m = to
		}
		if d := m.Sub(prev); d > gap {
			gap, at = d, prev
		}
		prev = m
	}
	return gap, at
}

// since returns when the process first printed a key after t; false if it
// has not.
func (w *watcher) since(t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.moves {
		if m.After(t) {
			return m, true
		}
	}
	return time.Time{}, false
}
