//go:build linux

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/zktest"
)

// The chaos tests run a fleet of helper processes (internal/chaosproc)
// that insert rows through idsql into a table with a snowflake key and one
// with a segment key, on a private PostgreSQL (and ZooKeeper) the test
// restarts. While they run, the test kills, pauses and restarts them, and
// plays the scenarios of issue 11. Then it counts duplicate keys (the
// tables have no unique constraint), checks that every key a process
// acknowledged is stored, and checks each scenario's own promise. See
// doc.go for the variables that lengthen the run.

// Timings: short, so that leases expire within the test's few minutes.
const (
	chaosTimeout   = 2 * time.Second        // ZooKeeper session timeout, PostgreSQL lease TTL
	chaosHeartbeat = 500 * time.Millisecond // holder.heartbeat
	chaosTickTime  = 500 * time.Millisecond // zktest's tickTime: timeouts within [1s, 10s]
	// chaosExpired is how long after a process stops (SIGSTOP, SIGKILL)
	// its session or lease has surely expired.
	chaosExpired = 2*chaosTimeout + time.Second
	// chaosReady bounds how long a process may take to its first key (or
	// its refusal). Generous: a healthy process takes a second, but on a
	// loaded two-core machine starting one can take many; the waits end
	// as soon as the event comes.
	chaosReady = 60 * time.Second
	// chaosFleet is how many processes issue keys at all times.
	chaosFleet = 6
	// chaosSoak is the default length of the random-fault phase.
	chaosSoak = 15 * time.Second
	// chaosPause is each helper goroutine's pause between INSERTs: enough
	// load to catch overlaps, little enough for a two-core machine
	// running two chaos tests at once.
	chaosPause = "15ms"
)

// chaosNamespace is the namespace of the chaos configuration.
const chaosNamespace = "chaos"

// EnvChaosDuration and EnvChaosSeed tune the chaos tests (see doc.go).
const (
	EnvChaosDuration = "IDSQL_CHAOS_DURATION"
	EnvChaosSeed     = "IDSQL_CHAOS_SEED"
)

// chaosMode is a holder kind and mode under test.
type chaosMode struct {
	kind, mode string
	// sticky: an identity keeps its worker ID (sticky modes, local).
	sticky bool
	// reuse: a worker ID passes from one identity to another (recycle,
	// lease).
	reuse bool
	// expires: a dead or paused owner's claim expires after the timeout
	// (everything but local, whose map is static).
	expires bool
	// uuid7: the leased table (sfTable) is a uuid7 table on a uuid
	// column, whose keys the processes read back from their UUIDs.
	uuid7 bool
}

func (m chaosMode) String() string {
	if m.mode == "" {
		return m.kind
	}
	return m.kind + "/" + m.mode
}

// TestChaos runs the chaos scenarios of each holder kind and mode, one
// after another: each runs a fleet, its control, five busy victims and
// their successors, about 25 processes at the busiest, and two at once on
// a two-core machine kept the database's backends waiting for the CPU
// (the sentry's machine view: 40 to 90 threads runnable, CPU pressure
// 75-99 %) until a fleet heartbeat missed its fence. The other
// integration tests still run beside them.
func TestChaos(t *testing.T) {
	t.Parallel()
	for _, m := range []chaosMode{
		{kind: "zookeeper", mode: "sticky", sticky: true, expires: true},
		{kind: "zookeeper", mode: "recycle", reuse: true, expires: true},
		{kind: "postgres", mode: "sticky", sticky: true, expires: true},
		{kind: "postgres", mode: "lease", reuse: true, expires: true},
		{kind: "postgres", mode: "disposable", expires: true, uuid7: true},
		{kind: "local", sticky: true},
	} {
		t.Run(m.testName(), func(t *testing.T) { runChaos(t, m) })
	}
}

// testName names m's subtest of TestChaos: ZooKeeperSticky, Local, ...
func (m chaosMode) testName() string {
	name := map[string]string{"zookeeper": "ZooKeeper", "postgres": "Postgres", "local": "Local"}[m.kind]
	if m.mode != "" {
		name += strings.ToUpper(m.mode[:1]) + m.mode[1:]
	}
	if m.uuid7 {
		name += "UUID7"
	}
	return name
}

// chaos is one chaos test's world: servers, processes, fault counts and
// the scenarios to check at the end.
type chaos struct {
	t   *testing.T
	m   chaosMode
	r   *rand.Rand
	bin string
	// hotBin runs bin behind the others (nice 10): the busy victims
	// (hotArgs). When five of them resume at once, their spinning
	// goroutines would otherwise take both cores from the fleet and the
	// server serving it; the sentry found untouched processes waiting in
	// their own INSERTs and COMMITs for the server then, not in idsql.
	hotBin string
	dir    string
	dsn    string
	pg     *pgtest.Server
	zk     *zktest.Server
	base   time.Time // when the fleet started

	mu     sync.Mutex
	procs  []*chaosProc            // every process launched, in order
	slots  []*chaosProc            // the fleet: one identity each
	runs   map[string]int          // launches per identity, for names
	faults map[string]int          // faults injected, by kind
	notes  []string                // what happened, for the report
	cases  []func(*chaosData) bool // scenario checks, run on the stored rows
	resume sync.WaitGroup          // pending SIGCONTs of the soak phase

	// The untouched processes' gaps: ctl is the control, which no fault
	// but the servers' restarts touches; touched has when a fault first
	// touched each process (a pause, a kill); restarts are the times the
	// servers restarted, which touch every process.
	ctl      *chaosProc
	touched  map[*chaosProc]time.Time
	restarts [][2]time.Time
	end      time.Time // when the faults ended and everyone issued again
}

func runChaos(t *testing.T, m chaosMode) {
	// Leave time for the scripted scenarios and the checks before the
	// test binary's -timeout.
	soak, seed := chaosSoakSeed(t, 3*time.Minute)
	c := newChaos(t, m, seed)
	t.Logf("chaos %s: seed %d (%s=%d repeats the fault choices), soak %s", m, seed, EnvChaosSeed, seed, soak)
	c.script()
	c.soak(soak)
	c.finish()
}

// chaosSoakSeed returns the length of the random-fault phase and the seed
// of the fault choices: IDSQL_CHAOS_DURATION and IDSQL_CHAOS_SEED, or the
// defaults, the soak cut short to end reserve before the test timeout.
func chaosSoakSeed(t *testing.T, reserve time.Duration) (time.Duration, uint64) {
	t.Helper()
	soak := chaosSoak
	if v := os.Getenv(EnvChaosDuration); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			t.Fatalf("%s=%q: want a duration such as 10m", EnvChaosDuration, v)
		}
		soak = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv(EnvChaosSeed); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: want an unsigned integer", EnvChaosSeed, v)
		}
		seed = s
	}
	if dl, ok := t.Deadline(); ok {
		if left := time.Until(dl) - reserve; soak > left {
			soak = max(left, 0)
			t.Logf("soak shortened to %s to end before the test timeout", soak.Round(time.Second))
		}
	}
	return soak, seed
}

func newChaos(t *testing.T, m chaosMode, seed uint64) *chaos {
	t.Helper()
	c := &chaos{t: t, m: m, r: rand.New(rand.NewPCG(seed, 11)), dir: t.TempDir(),
		runs: map[string]int{}, faults: map[string]int{}, touched: map[*chaosProc]time.Time{}}
	if m.kind == "zookeeper" {
		c.zk = zktest.StartServer(t)
	}
	c.pg = pgtest.StartServer(t)
	c.dsn = c.pg.DSN()
	c.bin = buildChaosProc(t, c.dir)
	c.hotBin = nicedBy(t, c.bin, 10)

	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	createChaosTables(t, db, m.uuid7)
	// Registered after the servers' cleanups, so it runs before them.
	t.Cleanup(func() {
		c.mu.Lock()
		procs := append([]*chaosProc(nil), c.procs...)
		c.mu.Unlock()
		for _, p := range procs {
			p.kill()
		}
	})
	return c
}

// config writes the YAML configuration of one process and returns its path.
// Processes of one host share a cache directory (holder.cache_dir), where
// holders keep files and locks; another host has its own.
func (c *chaos) config(name, identity, host string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "namespace: %s\nlayout: leaf\nholder:\n", chaosNamespace)
	fmt.Fprintf(&b, "  kind: %s\n", c.m.kind)
	if c.m.mode != "" {
		fmt.Fprintf(&b, "  mode: %s\n", c.m.mode)
	}
	if identity != "" {
		fmt.Fprintf(&b, "  instance: %s\n", identity)
	}
	switch c.m.kind {
	case "zookeeper":
		fmt.Fprintf(&b, "  servers: [%s]\n  session_timeout: %s\n  tick_time: %s\n", c.zk.Addr(), chaosTimeout, chaosTickTime)
	case "postgres":
		fmt.Fprintf(&b, "  session_timeout: %s\n", chaosTimeout)
	case "local":
		b.WriteString("  workers:\n")
		for i := 1; i <= 16; i++ {
			fmt.Fprintf(&b, "    chaos-p%d: %d\n", i, i)
		}
		for i := 1; i <= chaosVictims; i++ {
			fmt.Fprintf(&b, "    chaos-v%d: %d\n", i, 20+i)
		}
		b.WriteString("    chaos-ctl: 30\n")
	}
	cache := filepath.Join(c.dir, "cache")
	if host != "" {
		cache += "-" + host
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		c.t.Error(err)
	}
	fmt.Fprintf(&b, "  heartbeat: %s\n  cache_dir: %q\n", chaosHeartbeat, cache)
	fmt.Fprintf(&b, "tables:\n  %s: {strategy: %s}\n  %s: {strategy: segment, step: 50}\n", sfTable, sfStrategy(c.m.uuid7), segTable)
	path := filepath.Join(c.dir, name+".yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		c.t.Fatal(err)
	}
	return path
}

// start launches a process on identity; name is derived from base and the
// identity's launch count. clockAt, when not zero, is its snowflake
// clock's first reading (see chaosproc's -clock-start). It never ends the
// test, so goroutines may call it; a process that cannot be launched is
// reported and nil returned.
func (c *chaos) start(base, identity string, clockAt time.Time, extra ...string) *chaosProc {
	return c.startOn("", base, identity, clockAt, extra...)
}

// startOn is start on another host: a process with a cache directory of
// its own (host "" is the test's usual host).
func (c *chaos) startOn(host, base, identity string, clockAt time.Time, extra ...string) *chaosProc {
	return c.launch(c.bin, host, base, identity, clockAt, extra...)
}

// launch is startOn with bin, the helper or a command running it.
func (c *chaos) launch(bin, host, base, identity string, clockAt time.Time, extra ...string) *chaosProc {
	c.mu.Lock()
	c.runs[base]++
	name := base
	if n := c.runs[base]; n > 1 {
		name = base + "." + strconv.Itoa(n)
	}
	c.mu.Unlock()
	p, err := startProc(bin, c.dir, appDSN(c.dsn, name), c.config(name, identity, host), name, identity, clockAt,
		append([]string{"-pause", chaosPause, "-db-waits"}, extra...))
	if err != nil {
		c.t.Errorf("launch %s: %v", name, err)
		return nil
	}
	p.host = host
	c.mu.Lock()
	c.procs = append(c.procs, p)
	c.mu.Unlock()
	return p
}

// mustReady waits for p's first snowflake key and ends the test if none
// comes.
func (c *chaos) mustReady(p *chaosProc) {
	c.t.Helper()
	if p == nil {
		c.t.FailNow()
	}
	if !p.waitSnowflake(0, chaosReady) {
		c.t.Fatalf("%s (identity %q) issued no snowflake key within %s: %s\n%s", p.name, p.identity, chaosReady, p.outcome(), p.logTail())
	}
}

func (c *chaos) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	c.mu.Lock()
	now := time.Now()
	c.notes = append(c.notes, fmt.Sprintf("%6.1fs (%s) %s", now.Sub(c.base).Seconds(), fmtTick(now), msg))
	c.mu.Unlock()
}

// touch notes that a fault touched p now (a pause, a kill): its gaps
// from then on are the fault's.
func (c *chaos) touch(p *chaosProc) {
	c.mu.Lock()
	if _, ok := c.touched[p]; !ok {
		c.touched[p] = time.Now()
	}
	c.mu.Unlock()
}

// kill kills p, which must be running, and fails the test unless it is
// gone afterwards.
func (c *chaos) kill(p *chaosProc, what string) {
	c.t.Helper()
	c.touch(p)
	if !p.kill() {
		c.t.Errorf("%s: %s had exited before SIGKILL: %s\n%s", what, p.name, p.outcome(), p.logTail())
	}
	if p.alive() {
		c.t.Errorf("%s: %s still runs after SIGKILL", what, p.name)
	}
}

// restarted notes a restart of a server from stopped to now, and fails
// the test unless the server's uptime says it did restart.
func (c *chaos) restarted(what string, stopped time.Time, uptime func() (time.Duration, error)) {
	c.t.Helper()
	c.mu.Lock()
	c.restarts = append(c.restarts, [2]time.Time{stopped, time.Now()})
	c.mu.Unlock()
	if err := restarted(what, stopped, uptime); err != nil {
		c.t.Error(err)
	}
}

func (c *chaos) fault(kind string) {
	c.mu.Lock()
	c.faults[kind]++
	c.mu.Unlock()
}

// check adds a scenario check, run on the stored rows at the end. It
// reports whether the scenario's promise held.
func (c *chaos) check(f func(*chaosData) bool) {
	c.mu.Lock()
	c.cases = append(c.cases, f)
	c.mu.Unlock()
}

// startSlot launches the fleet process of slot i (identity chaos-p<i+1>).
func (c *chaos) startSlot(i int) *chaosProc {
	base := "p" + strconv.Itoa(i+1)
	p := c.start(base, "chaos-"+base, time.Time{})
	c.mu.Lock()
	for len(c.slots) <= i {
		c.slots = append(c.slots, nil)
	}
	c.slots[i] = p
	c.mu.Unlock()
	return p
}

// hotArgs make a helper busy: goroutines that do CPU work before each
// INSERT of up to 10 rows, without a pause. A process stopped while its Ps
// run such goroutines resumes them first: a fence that waits for a timer
// or a heartbeat goroutine to run comes too late for them. How often that
// happens depends on GOMAXPROCS (one P cannot run the fence's timer while
// a goroutine spins; with several, the P holding the timer may spin while
// others issue), so the victims differ in it. The work (10 ms) keeps
// their Ps spinning most of the time, at nice 10 (hotBin), while their
// INSERTs, served by the shared server at full priority, stay few (hotBin
// puts them in a scheduling group of their own, behind the server's
// backends too). One goroutine more than Ps keeps every P spinning while
// one waits for the database; more only add connections, each a backend
// that competes for the CPU at full priority.
// Each INSERT takes a few keys, as the fleet's do: with 50 a statement emptied a segment of the
// configured step (50) before the adaptive step had grown, and five
// victims' refills, one per INSERT, queued every process's refill on the
// table's idsql_alloc row (the sentry found a fleet process's goroutines
// all in segment.(*Key).awaitLoad behind that queue).
func hotArgs(victim int) []string {
	procs := []int{1, 2, 4}[victim%3]
	return []string{"-workers", strconv.Itoa(procs + 1), "-batch", "10", "-pause", "0", "-work", "10ms", "-procs", strconv.Itoa(procs)}
}

// chaosVictims is how many busy processes the pause scenario stops.
const chaosVictims = 5

// script plays the scenarios of issue 11, one after another.
func (c *chaos) script() {
	c.base = time.Now()
	// The fleet: p1 first and alone, so that it holds the lowest worker ID
	// of the modes that hand out the lowest free one.
	c.mustReady(c.startSlot(0))
	for i := 1; i < chaosFleet; i++ {
		c.startSlot(i)
	}
	for _, p := range c.slots {
		c.mustReady(p)
	}
	var ws []string
	for _, p := range c.slots {
		ws = append(ws, fmt.Sprintf("%s=%d", p.name, p.lastWorker()))
	}
	c.note("fleet up; workers %s", strings.Join(ws, " "))
	ctl := c.start("ctl", "chaos-ctl", time.Time{})
	c.mustReady(ctl)
	c.mu.Lock()
	c.ctl = ctl
	c.mu.Unlock()
	watchStalls(c.t, c.control, c.untouched, pgView(c.dsn))

	c.pausedPastTimeout()
	if c.m.sticky {
		c.stickyTwin()
	}
	if c.m.sticky && c.m.kind != "local" {
		c.anonymousTwins()
	}
	if c.m.sticky || c.m.reuse {
		c.clockBehind()
	}
}

// pausedPastTimeout: five busy processes (goroutines doing CPU work between
// INSERTs, so that some are running when they stop, as in a GC pause or a
// VM freeze) are stopped with SIGSTOP past their session timeout or lease
// TTL. Successors start: for sticky modes ones with the same identities,
// as an orchestrator would replace them; otherwise new processes, which
// get the lowest free worker IDs, the stopped ones'. Then the stopped
// processes continue. After resuming, none may issue one key under its old
// worker ID inside the ticks a successor issued under it. Several victims
// at once, because a victim that was not running when stopped may well be
// fenced in time even without a deadline.
//
// Which successor gets which worker ID, and when, depends on timing: the
// scenario is played when at least one victim's worker ID went to a
// successor while it was stopped and that victim ran again afterwards
// (where the mode hands worker IDs over at all); every victim whose worker
// ID went to a successor is checked, the others are logged. The waits are
// for events, with generous bounds, not fixed times: on a loaded machine a
// process may take seconds to start.
func (c *chaos) pausedPastTimeout() {
	var vs []*chaosProc
	for i := 1; i <= chaosVictims; i++ {
		v := c.launch(c.hotBin, "", "v"+strconv.Itoa(i), "chaos-v"+strconv.Itoa(i), time.Time{}, hotArgs(i-1)...)
		if v == nil {
			c.t.FailNow()
		}
		// Busy by design (no pause between INSERTs, CPU work in each):
		// their gaps measure the machine, not idsql.
		c.touch(v)
		vs = append(vs, v)
	}
	// All at once: started one at a time (15 s on two cores), their
	// claims, slow at nice 10 while they hold the namespace lock, kept a
	// fleet process that had to claim again waiting for seconds.
	for _, v := range vs {
		c.mustReady(v)
	}
	time.Sleep(time.Second) // busy for a while
	for _, v := range vs {
		c.touch(v)
		if !v.pause() {
			c.t.Errorf("pause: SIGSTOP did not stop %s: %s", v.name, v.outcome())
			continue
		}
		c.fault("pause")
	}
	c.unlockStopped(vs)
	stopped := time.Now() // every victim is stopped, for the last time
	workers := map[string]int64{}
	var ws []int64
	for _, v := range vs {
		_ = v.scan()
		workers[v.name] = v.lastWorker()
		ws = append(ws, v.lastWorker())
		c.note("pause: SIGSTOP %s (worker %d)", v.name, workers[v.name])
	}
	if live := c.awaitExpired(ws, chaosReady); len(live) > 0 {
		c.note("pause: the claims on workers %v are still live %s after the stop", live, time.Since(stopped).Round(time.Millisecond))
	}
	// handover: the successors are to take the victims' worker IDs.
	handover := c.m.reuse || c.m.sticky && c.m.expires

	var ss []*chaosProc
	for i, v := range vs {
		var s *chaosProc
		switch {
		case c.m.sticky && c.m.expires:
			// The same identity on another host, as an orchestrator
			// replaces a pod that stopped answering: the stopped one's
			// claim has expired, so the replacement takes its worker ID.
			s = c.startOn("b", v.name, v.identity, time.Time{})
		case c.m.sticky:
			// The local map's identity on this host: the stopped process
			// still holds it.
			s = c.start(v.name, v.identity, time.Time{})
		default:
			s = c.start("s"+strconv.Itoa(i+1), "chaos-s"+strconv.Itoa(i+1), time.Time{})
		}
		if s != nil {
			// The scenario touches the successors too: their claims
			// and heartbeats may wait for locks a stopped victim holds.
			c.touch(s)
			ss = append(ss, s)
		}
	}
	c.awaitSuccessors(ss, vs, handover || !c.m.sticky)
	time.Sleep(time.Second) // the successors issue under the worker IDs for a while
	resumed := time.Now()   // no victim runs yet
	out := map[string]int64{}
	for _, v := range vs {
		out[v.name] = v.output()
		v.resume()
	}
	paused := resumed.Sub(stopped) // each victim was stopped at least this long
	c.note("pause: SIGCONT %d processes, stopped at least %s", len(vs), paused.Round(time.Millisecond))
	for _, s := range ss {
		c.note("pause: successor %s %s", s.name, s.outcome())
	}
	// Each resumed process runs (it prints keys or errors), then they and
	// the successors run side by side for a while.
	ran := map[string]bool{}
	for _, v := range vs {
		ran[v.name] = v.waitUntil(chaosReady-time.Since(resumed), func() bool { return v.output() > out[v.name] })
		if !ran[v.name] {
			c.note("pause: %s printed nothing within %s of SIGCONT: %s", v.name, chaosReady, v.outcome())
		}
	}
	time.Sleep(2 * time.Second)
	outcomes := map[string]string{}
	for _, v := range vs {
		outcomes[v.name] = v.outcome()
		c.kill(v, "pause")
	}
	for _, s := range ss {
		c.kill(s, "pause")
	}

	c.check(func(d *chaosData) bool {
		t := c.t
		if paused < chaosTimeout {
			t.Errorf("pause: stopped only %s, not past the %s timeout: scenario not played", paused, chaosTimeout)
			return false
		}
		ok := true
		played := 0
		for _, v := range vs {
			w := workers[v.name]
			resumedN, resumedW := d.since(v.name, resumed)
			var took []string
			bad := 0
			var examples []string
			for _, s := range ss {
				first, last, n := d.span(s.name, w)
				if n == 0 {
					continue
				}
				k, ex := d.inside(v.name, w, first, last)
				took = append(took, fmt.Sprintf("%s (%d keys in %s..%s)", s.name, n, fmtTick(first), fmtTick(last)))
				bad += k
				examples = append(examples, ex...)
			}
			if len(took) == 0 {
				switch {
				case handover:
					var went []string
					for _, s := range ss {
						went = append(went, fmt.Sprintf("%s %v", s.name, d.workersOf(s.name)))
					}
					t.Logf("pause: %s's worker %d went to no successor (they issued under: %s; under worker %d while %s was stopped: %s); %s not checked",
						v.name, w, strings.Join(went, ", "), w, v.name, orNone(d.usersOf(w, stopped, resumed, v.name)), v.name)
				case c.m.sticky:
					t.Logf("pause: %s's replacement on the same host did not issue keys under worker %d while %s was stopped (refused or waited)", v.name, w, v.name)
				default:
					t.Logf("pause: no successor took %s's worker %d (mode %s does not reuse worker IDs)", v.name, w, c.m)
				}
				continue
			}
			if ran[v.name] {
				played++
			}
			t.Logf("pause: %s (worker %d) stopped more than %s, timeout %s; worker %d taken by %s; after resuming %s issued %d keys (workers %v), %d of them under worker %d inside the successor's ticks; in the end it %s",
				v.name, w, paused.Round(time.Millisecond), chaosTimeout, w, strings.Join(took, ", "), v.name, resumedN, resumedW, bad, w, outcomes[v.name])
			if bad > 0 {
				if len(examples) > 3 {
					examples = examples[:3]
				}
				t.Errorf("pause: %s resumed and issued %d keys under worker %d, which a successor held by then (issue 11 §1), e.g. %s",
					v.name, bad, w, strings.Join(examples, "; "))
				ok = false
			}
		}
		if handover && played == 0 {
			t.Errorf("pause: no stopped process's worker ID went to a successor while it was stopped (and it ran again after): scenario not played; see the notes above")
			ok = false
		}
		return ok
	})
}

// unlockStopped makes sure that no stopped victim holds a lock which
// claims of worker IDs wait for. A victim stopped inside such a
// transaction (most often a heartbeat between its UPDATE and its COMMIT)
// keeps the lock while it is stopped; holder/workertable's claim of that
// worker ID waits for it while holding the namespace lock, and so does the
// registry's record of any holder's claim: no successor would get a worker
// ID before the victim resumes, and the scenario, which asks what a
// process issues after resuming, would not be played. Such a victim is
// continued for a moment and stopped again, until none holds such a lock
// (at most 25 times).
func (c *chaos) unlockStopped(vs []*chaosProc) {
	byName := map[string]*chaosProc{}
	var names []string
	for _, v := range vs {
		byName[v.name] = v
		names = append(names, v.name)
	}
	seen := map[string]bool{}
	for round := 1; ; round++ {
		// Statements in flight reach the server and end (a stopped
		// process's transaction is then idle in it).
		if !waitFor(10*time.Second, func() bool { n, err := c.active(names); return err == nil && n == 0 }) {
			c.note("pause: a stopped process's statement still runs on the server 10 s after the stop")
		}
		held, err := c.lockHolders(names)
		if err != nil {
			c.note("pause: cannot tell which stopped processes hold locks: %v", err)
			return
		}
		if len(held) == 0 {
			return
		}
		hs := make([]string, 0, len(held))
		for n := range held {
			hs = append(hs, n)
		}
		sort.Strings(hs)
		if round > 25 {
			for _, n := range hs {
				c.note("pause: %s stays stopped holding %s", n, held[n])
			}
			return
		}
		for _, n := range hs {
			if !seen[n] {
				seen[n] = true
				c.note("pause: %s stopped holding %s: continued for a moment and stopped again", n, held[n])
			}
			byName[n].resume()
		}
		time.Sleep(time.Duration(round) * 20 * time.Millisecond)
		for _, n := range hs {
			if byName[n].pause() {
				c.fault("pause-again")
			} else {
				c.t.Errorf("pause: SIGSTOP did not stop %s again: %s", n, byName[n].outcome())
			}
		}
	}
}

// awaitSuccessors waits until each successor has issued a snowflake key
// (or, unless keys are expected, reported an error), has exited, or is
// found waiting for a lock that a stopped victim holds, which no wait
// would end; at most chaosReady, or 10s where no key is expected.
func (c *chaos) awaitSuccessors(ss, vs []*chaosProc, keys bool) {
	victim := map[string]bool{}
	for _, v := range vs {
		victim[v.name] = true
	}
	within := chaosReady
	if !keys {
		within = 10 * time.Second
	}
	start := time.Now()
	deadline := start.Add(within)
	pending := append([]*chaosProc(nil), ss...)
	lastCheck := start
	for len(pending) > 0 {
		now := time.Now()
		if now.After(deadline) {
			break
		}
		check := now.Sub(lastCheck) >= 2*time.Second
		if check {
			lastCheck = now
		}
		var still []*chaosProc
		for _, s := range pending {
			_ = s.scan()
			sf, _ := s.counts()
			if sf > 0 || !s.alive() || !keys && len(s.errorLines(1)) > 0 {
				continue
			}
			if check {
				if desc, heads := c.lockWaits(s.name); len(heads) > 0 && allIn(heads, victim) {
					c.note("pause: successor %s waits for a lock a stopped process holds: %s", s.name, desc)
					continue
				}
			}
			still = append(still, s)
		}
		pending = still
		time.Sleep(100 * time.Millisecond)
	}
	for _, s := range pending {
		desc, _ := c.lockWaits(s.name)
		if keys {
			c.note("pause: successor %s issued no snowflake key within %s: %s %s", s.name, within, s.outcome(), desc)
		}
	}
}

// allIn reports whether every name is in set.
func allIn(names []string, set map[string]bool) bool {
	for _, n := range names {
		if !set[n] {
			return false
		}
	}
	return true
}

// orNone returns the names joined, or "none".
func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// stickyTwin: a second process with the identity of a running one must
// refuse to start with an error naming the identity, or wait; never issue
// keys while the first lives. One twin on the same host and, where the
// claim lives in a server (ZooKeeper, PostgreSQL), one on another host.
func (c *chaos) stickyTwin() {
	o := c.slots[1]
	_ = o.scan()
	oBefore, _ := o.counts()
	twins := []*chaosProc{c.start("t1", o.identity, time.Time{})}
	if c.m.expires {
		twins = append(twins, c.startOn("b", "t2", o.identity, time.Time{}))
	}
	for _, tw := range twins {
		if tw == nil {
			return
		}
		c.fault("twin")
	}
	// Each twin answers: an error naming the identity, a key, or an exit
	// (one that waits says nothing until the bound).
	var wg sync.WaitGroup
	for _, tw := range twins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tw.waitUntil(chaosReady/2, func() bool {
				sf, _ := tw.counts()
				return sf > 0 || strings.Contains(strings.Join(tw.errorLines(10), "\n"), o.identity)
			})
		}()
	}
	wg.Wait()
	time.Sleep(time.Second) // a twin that started issues for a while
	_ = o.scan()
	oAfter, _ := o.counts()
	ownerAlive := o.alive() && !o.isStopped()
	for _, tw := range twins {
		outcome := tw.outcome()
		errs := tw.errorLines(10)
		c.kill(tw, "twin")
		where := "the same host"
		if tw.host != "" {
			where = "another host"
		}
		c.note("twin: %s on %s with %s's identity %q: %s", tw.name, where, o.name, o.identity, outcome)
		c.check(func(d *chaosData) bool {
			t := c.t
			if !ownerAlive || oAfter == oBefore {
				t.Errorf("twin: owner %s was not issuing keys while its twin %s ran (%d keys before, %d after): scenario not played", o.name, tw.name, oBefore, oAfter)
				return false
			}
			n := d.count(tw.name)
			if n > 0 {
				t.Errorf("twin: %s on %s started with the identity %q of the running %s and issued %d snowflake keys (workers %v; %s holds %d), instead of refusing or waiting (issue 11 §2)",
					tw.name, where, o.identity, o.name, n, d.workersOf(tw.name), o.name, o.lastWorker())
				return false
			}
			if len(errs) == 0 {
				t.Logf("twin: %s on %s waited (no key, no error) while %s held identity %q", tw.name, where, o.name, o.identity)
				return true
			}
			for _, e := range errs {
				if strings.Contains(e, o.identity) {
					t.Logf("twin: %s on %s refused: %s", tw.name, where, e)
					return true
				}
			}
			t.Errorf("twin: %s on %s was refused, but no error names the identity %q: %s", tw.name, where, o.identity, strings.Join(errs, "; "))
			return false
		})
	}
}

// anonymousTwins: two processes with no identity (no instance, no port)
// in a sticky mode. Issue 11 §2: such an identity cannot be unique, so it
// is refused; in no case may the two share a worker ID.
func (c *chaos) anonymousTwins() {
	// One after the other: the second finds what the first claimed.
	a := c.start("a1", "", time.Time{})
	if a == nil {
		return
	}
	a.waitAnswer(chaosReady / 2)
	b := c.start("a2", "", time.Time{})
	if b == nil {
		a.kill()
		return
	}
	c.fault("anonymous-twins")
	b.waitAnswer(chaosReady / 2)
	time.Sleep(time.Second) // both issue for a while, if they started
	ao, bo := a.outcome(), b.outcome()
	aErr, bErr := a.errorLines(1), b.errorLines(1)
	c.kill(a, "anonymous twins")
	c.kill(b, "anonymous twins")
	c.note("anonymous twins: %s %s; %s %s", a.name, ao, b.name, bo)

	c.check(func(d *chaosData) bool {
		t := c.t
		shared := d.sharedWorkers(a.name, b.name)
		na, nb := d.count(a.name), d.count(b.name)
		ok := true
		if len(shared) > 0 {
			t.Errorf("anonymous twins: %s (%d keys) and %s (%d keys), both without an identity, issued under the same worker IDs %v at once (issue 11 §2)",
				a.name, na, b.name, nb, shared)
			ok = false
		}
		for _, x := range []struct {
			p   *chaosProc
			n   int
			err []string
		}{{a, na, aErr}, {b, nb, bErr}} {
			switch {
			case x.n > 0:
				t.Errorf("anonymous twins: %s started without an identity in sticky mode and issued %d keys; issue 11 §2 expects a refusal naming the identity", x.p.name, x.n)
				ok = false
			case len(x.err) > 0:
				t.Logf("anonymous twins: %s refused: %s", x.p.name, x.err[0])
			default:
				t.Errorf("anonymous twins: %s issued nothing and reported nothing in %s: neither refused nor started, scenario not played", x.p.name, chaosReady/2)
				ok = false
			}
		}
		return ok
	})
}

// clockBehind: a process is killed and a successor that gets its worker ID
// starts with its clock behind the predecessor's last keys: first a little
// (inside the last heartbeat), then 2s. Either it starts above every key
// issued under the worker ID before, or it refuses with an error about the
// clock. Issue 11 §4.
func (c *chaos) clockBehind() {
	var v *chaosProc
	slot := 2
	if c.m.reuse {
		// The holder of the lowest worker ID: once it is free it is the
		// one a newcomer gets.
		for i, p := range c.slots {
			_ = p.scan()
			if p.alive() && !p.isStopped() && (v == nil || p.lastWorker() < v.lastWorker()) {
				v, slot = p, i
			}
		}
	} else {
		v = c.slots[slot]
	}
	identity := func(n int) string {
		if c.m.sticky {
			return v.identity
		}
		return "chaos-c" + strconv.Itoa(n)
	}
	prev := v
	_ = v.scan()
	w := v.lastWorker()
	for n, behind := range []time.Duration{400 * time.Millisecond, 2 * time.Second} {
		c.kill(prev, "clock")
		c.fault("kill")
		_ = prev.scan()
		if pw := prev.lastWorker(); pw >= 0 {
			w = pw // a refused successor leaves the worker ID as it was
		}
		if c.m.expires {
			// The predecessor's claim has expired, so that the successor
			// gets its worker ID.
			if live := c.awaitExpired([]int64{w}, chaosReady); len(live) > 0 {
				c.note("clock: the claim on worker %d is still live after %s", w, chaosReady)
			}
		}
		// The successor's clock reads behind the last key acknowledged
		// under the worker ID (which may itself be behind the time) when
		// it first reads it, as it claims a worker ID, however long it
		// took to start.
		last, ok := c.lastTick(w)
		if !ok {
			c.t.Errorf("clock: no key acknowledged under worker %d", w)
			return
		}
		succ := c.start("c"+strconv.Itoa(n+1), identity(n+1), last.Add(-behind))
		if succ == nil {
			return
		}
		c.fault("clock-behind")
		// It starts, or refuses with an error about the clock.
		if succ.waitUntil(chaosReady, func() bool {
			sf, _ := succ.counts()
			return sf > 0 || strings.Contains(strings.ToLower(strings.Join(succ.errorLines(10), "\n")), "clock")
		}) {
			time.Sleep(2 * time.Second) // it issues for a while, or shows it keeps refusing
		}
		outcome := succ.outcome()
		errs := succ.errorLines(10)
		c.note("clock: %s killed (worker %d); %s started %s behind its last keys (clock offset %s): %s",
			prev.name, w, succ.name, behind, succ.clockOffset(), outcome)
		pred, s := prev, succ
		c.check(func(d *chaosData) bool { return c.checkClock(d, pred, s, w, behind, errs) })
		prev = succ
	}
	c.kill(prev, "clock")
	c.fault("kill")
	// The slot gets a process with a true clock again.
	np := c.start(baseName(v.name), v.identity, time.Time{})
	c.mu.Lock()
	c.slots[slot] = np
	c.mu.Unlock()
	c.mustReady(np)
}

// control returns the control process, nil until it issues.
func (c *chaos) control() *chaosProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ctl
}

// untouched returns the fleet's processes that no fault has touched, that
// run now and have issued keys.
func (c *chaos) untouched() []*chaosProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*chaosProc
	for _, p := range c.slots {
		if _, hit := c.touched[p]; p == nil || hit || !p.running() {
			continue
		}
		if sf, seg := p.counts(); sf+seg > 0 {
			out = append(out, p)
		}
	}
	return out
}

// launched returns every process launched so far, in launch order.
func (c *chaos) launched() []*chaosProc {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*chaosProc(nil), c.procs...)
}

// lastTick returns the latest tick of the snowflake keys acknowledged under
// worker so far, by any process.
func (c *chaos) lastTick(worker int64) (time.Time, bool) {
	procs := c.launched()
	var last time.Time
	found := false
	for _, p := range procs {
		_ = p.scan()
		p.mu.Lock()
		for _, id := range p.sf {
			if parts := chaosLayout.Decompose(id); parts.Worker == worker && (!found || parts.Time.After(last)) {
				last, found = parts.Time, true
			}
		}
		p.mu.Unlock()
	}
	return last, found
}

// baseName is a process name without its launch count: p3 for p3.2.
func baseName(name string) string {
	base, _, _ := strings.Cut(name, ".")
	return base
}

func (c *chaos) checkClock(d *chaosData, pred, succ *chaosProc, w int64, behind time.Duration, errs []string) bool {
	t := c.t
	n := d.count(succ.name)
	if n == 0 {
		if len(errs) == 0 {
			t.Errorf("clock: %s (clock %s behind %s's last keys) issued no key and reported no error: neither started nor refused", succ.name, behind, pred.name)
			return false
		}
		for _, e := range errs {
			if strings.Contains(strings.ToLower(e), "clock") {
				t.Logf("clock: %s (clock %s behind) refused: %s", succ.name, behind, e)
				return true
			}
		}
		t.Errorf("clock: %s was refused, but not with an error about the clock: %s", succ.name, strings.Join(errs, "; "))
		return false
	}
	ws := d.workersOf(succ.name)
	sw := ws[0]
	// Its predecessors: the processes launched before it. (One launched
	// later with its clock behind may have keys before its launch.)
	before := map[string]bool{}
	for _, p := range c.launched() {
		if p != succ && p.launched.Before(succ.launched) {
			before[p.name] = true
		}
	}
	predMax, predProc, ok := d.lastBefore(sw, before, succ.launched)
	if !ok {
		if c.m.reuse || sw == w {
			t.Errorf("clock: %s got worker %d, which no process used before it: scenario not played (%s had worker %d)", succ.name, sw, pred.name, w)
			return false
		}
		t.Logf("clock: %s got the fresh worker %d", succ.name, sw)
		return true
	}
	clockAtStart := succ.clockAt
	first := d.first(succ.name, sw)
	bad, examples := d.atOrBefore(succ.name, sw, predMax)
	t.Logf("clock: %s started on worker %d with its clock at %s, %s behind the last key under that worker (%s by %s); its first key is at %s; %d of its %d keys are at or before that last key",
		succ.name, sw, fmtTick(clockAtStart), predMax.Sub(clockAtStart).Round(time.Millisecond), fmtTick(predMax), predProc, fmtTick(first), bad, n)
	if predMax.Before(clockAtStart) {
		// A successor of a successor that was itself set behind may not be
		// behind its keys; the duplicate checks still cover it.
		t.Logf("clock: %s's clock was not behind the last key under worker %d (%s by %s): this step not played", succ.name, sw, fmtTick(predMax), predProc)
		return true
	}
	if bad > 0 {
		t.Errorf("clock: %s, started with its clock behind, issued %d keys under worker %d at or before the last key %s issued under it (issue 11 §4), e.g. %s",
			succ.name, bad, sw, predProc, strings.Join(examples, "; "))
		return false
	}
	return true
}

// soak injects random faults for d: kills and restarts, pauses shorter and
// longer than the timeout, server restarts and new processes. Every kind
// is played at least once, however short d is: a kind that could not be
// played when drawn (no process to stop, the fleet full) is tried again,
// and the test fails if one never was. Then every process of the fleet
// must issue keys again (issuesAfterLastFault).
func (c *chaos) soak(d time.Duration) {
	kinds := []string{"kill+restart", "pause", "postgres-restart", "spawn"}
	if c.zk != nil {
		kinds = append(kinds, "zookeeper-restart")
	}
	first := append([]string(nil), kinds...)
	c.r.Shuffle(len(first), func(i, j int) { first[i], first[j] = first[j], first[i] })
	played := map[string]int{}
	unplayed := func() []string {
		var out []string
		for _, k := range kinds {
			if played[k] == 0 {
				out = append(out, k)
			}
		}
		return out
	}
	deadline := time.Now().Add(d)
	for i := 0; i < len(first) || time.Now().Before(deadline) || len(unplayed()) > 0 && i < 4*len(kinds); i++ {
		kind := kinds[c.r.IntN(len(kinds))]
		switch left := unplayed(); {
		case i < len(first):
			kind = first[i]
		case len(left) > 0:
			kind = left[0]
		}
		if c.inject(kind) {
			played[kind]++
		} else {
			c.note("soak: %s not played this time", kind)
		}
		time.Sleep(time.Duration(500+c.r.IntN(1000)) * time.Millisecond)
	}
	c.resume.Wait()
	for _, k := range unplayed() {
		c.t.Errorf("soak: the fault %s was never played", k)
	}
	c.issuesAfterLastFault()
	c.end = time.Now()
}

// chaosAfter is how many keys of each table every process of the fleet
// must issue after the last fault.
const chaosAfter = 5

// issuesAfterLastFault waits until every process of the fleet (restarted
// and spawned ones included) has issued chaosAfter more keys of each table
// since the last fault, at most chaosReady; any that did not fails the
// test. Every key acknowledged is then checked as stored (checkStored).
func (c *chaos) issuesAfterLastFault() {
	last := time.Now()
	type mark struct{ sf, seg int }
	before := map[*chaosProc]mark{}
	var fleet []*chaosProc
	for _, p := range c.slots {
		if p == nil {
			continue
		}
		_ = p.scan()
		sf, seg := p.counts()
		before[p] = mark{sf, seg}
		fleet = append(fleet, p)
	}
	behind := func(p *chaosProc) (int, int, bool) {
		_ = p.scan()
		sf, seg := p.counts()
		sf, seg = sf-before[p].sf, seg-before[p].seg
		return sf, seg, sf < chaosAfter || seg < chaosAfter
	}
	pending := fleet
	for len(pending) > 0 && time.Since(last) < chaosReady {
		var still []*chaosProc
		for _, p := range pending {
			if _, _, b := behind(p); b && p.alive() {
				still = append(still, p)
			}
		}
		pending = still
		time.Sleep(100 * time.Millisecond)
	}
	ok := true
	for _, p := range fleet {
		if sf, seg, b := behind(p); b {
			ok = false
			c.t.Errorf("after the last fault: %s (identity %q, launched %.1fs into the test) issued %d %s and %d %s keys within %s, want at least %d of each: %s\n%s",
				p.name, p.identity, p.launched.Sub(c.base).Seconds(), sf, sfTable, seg, segTable, time.Since(last).Round(time.Second), chaosAfter, p.outcome(), p.logTail())
		}
	}
	if ok {
		c.note("after the last fault: all %d processes of the fleet issued at least %d keys of each table within %s", len(fleet), chaosAfter, time.Since(last).Round(time.Millisecond))
	}
}

// live returns the fleet's processes that run and are not stopped.
func (c *chaos) live() []int {
	var out []int
	for i, p := range c.slots {
		if p != nil && p.alive() && !p.isStopped() {
			out = append(out, i)
		}
	}
	return out
}

// inject plays one fault of kind and reports whether it did.
func (c *chaos) inject(kind string) bool {
	live := c.live()
	switch kind {
	case "kill+restart":
		if len(live) == 0 {
			return false
		}
		i := live[c.r.IntN(len(live))]
		p := c.slots[i]
		c.kill(p, "soak")
		c.fault("kill")
		delay := time.Duration(c.r.Int64N(int64(2 * chaosTimeout)))
		c.note("soak: SIGKILL %s (worker %d), restart after %s", p.name, p.lastWorker(), delay.Round(time.Millisecond))
		time.Sleep(delay)
		np := c.start(baseName(p.name), p.identity, time.Time{})
		if np == nil {
			return false
		}
		c.mu.Lock()
		c.slots[i] = np
		c.mu.Unlock()
	case "pause":
		if len(live) < 2 {
			return false
		}
		p := c.slots[live[c.r.IntN(len(live))]]
		d := chaosTimeout/2 + time.Duration(c.r.Int64N(int64(5*chaosTimeout/2)))
		c.touch(p)
		if !p.pause() {
			c.t.Errorf("soak: SIGSTOP did not stop %s: %s", p.name, p.outcome())
			return false
		}
		c.fault("pause")
		if d > chaosTimeout {
			c.fault("pause-past-timeout")
		}
		c.note("soak: SIGSTOP %s (worker %d) for %s", p.name, p.lastWorker(), d.Round(time.Millisecond))
		c.resume.Add(1)
		time.AfterFunc(d, func() {
			defer c.resume.Done()
			p.resume()
		})
	case "postgres-restart":
		stopped := time.Now()
		c.pg.Stop()
		down := time.Duration(c.r.IntN(1500)) * time.Millisecond
		time.Sleep(down)
		c.pg.Start()
		c.restarted("PostgreSQL", stopped, func() (time.Duration, error) { return pgUptime(c.dsn) })
		c.fault("postgres-restart")
		c.note("soak: PostgreSQL restarted (down %s more after stopping)", down)
	case "zookeeper-restart":
		stopped := time.Now()
		c.zk.Stop()
		down := time.Duration(c.r.IntN(3000)) * time.Millisecond
		time.Sleep(down)
		c.zk.Start()
		c.restarted("ZooKeeper", stopped, func() (time.Duration, error) { return zkUptime(c.zk.Addr()) })
		c.fault("zookeeper-restart")
		c.note("soak: ZooKeeper restarted (down %s more after stopping)", down)
	case "spawn":
		if len(c.slots) >= chaosFleet+3 {
			return false
		}
		p := c.startSlot(len(c.slots))
		if p == nil {
			return false
		}
		c.fault("spawn")
		c.note("soak: new process %s", p.name)
	}
	return true
}

// finish stops every process and checks what they stored.
func (c *chaos) finish() {
	t := c.t
	c.mu.Lock()
	procs := append([]*chaosProc(nil), c.procs...)
	c.mu.Unlock()
	for _, p := range procs {
		p.kill()
	}
	for _, p := range procs {
		if err := p.scan(); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	for _, n := range c.notes {
		t.Log(n)
	}
	var fs []string
	for k, n := range c.faults {
		fs = append(fs, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(fs)
	t.Logf("faults injected: %s", strings.Join(fs, ", "))

	d := loadChaosData(t, c.dsn, procs, c.m.uuid7)
	d.report(t, procs)
	d.checkStored(t, procs)
	for _, f := range c.cases {
		f(d)
	}
	c.checkUntouched(procs)
	for _, p := range procs {
		if p.killed.IsZero() {
			t.Errorf("%s exited by itself: %v\n%s", p.name, p.waitErr, p.logTail())
		}
	}
}

// createChaosTables makes the chaos tables on db, a PostgreSQL database,
// without a unique constraint (a duplicate is stored, to be counted), and
// the tables idsql needs for them, once, before any process starts.
func createChaosTables(t *testing.T, db *sql.DB, uuid7 bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, table := range []string{sfTable, segTable} {
		typ := "bigint"
		if table == sfTable && uuid7 {
			typ = "uuid"
		}
		q := `CREATE TABLE ` + table + ` (id ` + typ + ` NOT NULL, proc text NOT NULL, pid int NOT NULL,
			at timestamptz NOT NULL DEFAULT clock_timestamp())`
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("create %s: %v", table, err)
		}
	}
	cfg := &keyset.Config{Namespace: chaosNamespace, Tables: map[string]keyset.TableConfig{
		sfTable:  {Strategy: keyset.Strategy(sfStrategy(uuid7))},
		segTable: {Strategy: keyset.Segment, Step: 50},
	}}
	if err := idsql.Migrate(ctx, db, cfg); err != nil {
		t.Fatalf("migrate: %v", err)
	}
}

// sfStrategy is the strategy of the leased chaos table (sfTable): uuid7
// or snowflake.
func sfStrategy(uuid7 bool) string {
	if uuid7 {
		return string(keyset.UUID7)
	}
	return string(keyset.Snowflake)
}

// chaosRecover is how long after a server restart its processes may take
// to issue again: their sessions or leases may have expired while it was
// down, and they take new ones. Gaps then are the restart's, not counted.
const chaosRecover = chaosExpired

// chaosMaxGap is the longest pause, beyond its control's in the same
// window (gapBeyond), allowed to a process of the fleet no fault touched
// (runChaos; TestEtcdChaos; TestDBDefaultChaos): the promise that a fault
// in one process never stalls another. It is more than faultMaxGap, which
// the twin and clock tests' key draws hold, because a chaos process's
// keys are stamped before its INSERT and printed after its commit, on a
// PostgreSQL that a dozen processes share, five of them busy ones
// (hotArgs), on two cores; the sentry captures what a process waited on
// when it goes quiet this long.
const chaosMaxGap = sentryQuiet

// checkUntouched bounds the gaps of every process in the stretches no
// fault touched it: from its first key to its first pause or kill (or the
// end of the faults), less the servers' restarts and chaosRecover after
// each. In them it may pause no more than chaosMaxGap beyond the
// control's pause around the same time (gapBeyond's rule: a loaded
// machine stalls every process at once; nor does the time the process
// noted it was not scheduled count).
func (c *chaos) checkUntouched(procs []*chaosProc) {
	t := c.t
	if c.ctl == nil {
		return
	}
	ctlFrom, _ := firstKey(c.ctl)
	var worst []string
	checked := 0
	for _, p := range procs {
		if p == c.ctl || !p.clockAt.IsZero() {
			continue
		}
		from, ok := firstKey(p)
		if !ok {
			continue // a twin or a refused process: no keys
		}
		from = later(from, ctlFrom)
		to := c.end
		if at, ok := c.touched[p]; ok && at.Before(to) {
			to = at
		}
		if !p.killed.IsZero() && p.killed.Before(to) {
			to = p.killed
		}
		if !to.After(from) {
			continue // touched before its first key (a busy victim)
		}
		var gap, excess time.Duration
		var span time.Duration
		for _, w := range c.untouchedSpans(from, to) {
			g, e, _ := gapBeyond(p, c.ctl, w[0], w[1])
			span += w[1].Sub(w[0])
			if e > excess || e == excess && g > gap {
				gap, excess = g, e
			}
		}
		if span == 0 {
			continue
		}
		checked++
		// A lease ends its fence (less than chaosTimeout) after its last
		// heartbeat got through: one that ends up to chaosTimeout after a
		// restart's recovery lost its heartbeats to the restart.
		for _, w := range c.spansAfterRestarts(from, to, chaosRecover+chaosTimeout) {
			for _, e := range unexcusedLeaseEnds(p, c.ctl, w[0], w[1]) {
				t.Errorf("untouched: %s lost its worker lease at %s, and the control %s lost none within %s of it: %s\n%s",
					p.name, fmtTick(e), c.ctl.name, stallWindow, leaseEndLine(p, e), p.logTail())
			}
		}
		if excess > chaosMaxGap {
			g, e, at := c.worstSpan(p, from, to)
			t.Errorf("untouched: %s issued nothing for %s from %s, the control %s only %s of it (allowed: %s beyond it); its notes: %s",
				p.name, g.Round(time.Millisecond), fmtTick(at), c.ctl.name, (g - e).Round(time.Millisecond), chaosMaxGap, slowKeys(p))
		}
		worst = append(worst, fmt.Sprintf("%s %s (%s) in %s", p.name, gap.Round(time.Millisecond), excess.Round(time.Millisecond), span.Round(100*time.Millisecond)))
	}
	if checked == 0 {
		t.Errorf("untouched: no process issued keys in a stretch no fault touched: nothing checked")
	}
	t.Logf("untouched processes' longest gaps (beyond the control's), in their untouched stretches: %s", strings.Join(worst, ", "))
}

// untouchedSpans returns [from, to] less every server restart and
// chaosRecover after it.
func (c *chaos) untouchedSpans(from, to time.Time) [][2]time.Time {
	return c.spansAfterRestarts(from, to, chaosRecover)
}

// spansAfterRestarts returns [from, to] less every server restart and
// recover after it.
func (c *chaos) spansAfterRestarts(from, to time.Time, recover time.Duration) [][2]time.Time {
	spans := [][2]time.Time{{from, to}}
	for _, r := range c.restarts {
		cutFrom, cutTo := r[0], r[1].Add(recover)
		var next [][2]time.Time
		for _, s := range spans {
			if !cutTo.After(s[0]) || !cutFrom.Before(s[1]) {
				next = append(next, s)
				continue
			}
			if cutFrom.After(s[0]) {
				next = append(next, [2]time.Time{s[0], cutFrom})
			}
			if cutTo.Before(s[1]) {
				next = append(next, [2]time.Time{cutTo, s[1]})
			}
		}
		spans = next
	}
	return spans
}

// worstSpan returns p's gap with the largest excess in its untouched
// spans within [from, to], its excess, and where it began.
func (c *chaos) worstSpan(p *chaosProc, from, to time.Time) (gap, excess time.Duration, at time.Time) {
	for _, w := range c.untouchedSpans(from, to) {
		if g, e, a := gapBeyond(p, c.ctl, w[0], w[1]); e > excess {
			gap, excess, at = g, e, a
		}
	}
	return gap, excess, at
}

// firstKey returns the time of p's first snowflake key.
func firstKey(p *chaosProc) (time.Time, bool) {
	var first time.Time
	for _, k := range p.keys() {
		if tk := chaosLayout.Decompose(k).Time; first.IsZero() || tk.Before(first) {
			first = tk
		}
	}
	return first, !first.IsZero()
}
