//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idsql/idsql/internal/etcdtest"
	"github.com/idsql/idsql/internal/pgtest"
)

// The etcd holder across processes: chaosproc helpers with holder.kind
// etcd on an etcd of the test's own, killed with SIGKILL, stopped with
// SIGSTOP past their lease TTL, joined by a twin on a live sticky
// identity, and etcd restarted under them. At the end no key is stored
// twice and every acknowledged key is stored. Short timings keep both
// modes, run in parallel, well under a minute.
const (
	etcdTTL   = 2 * time.Second  // session_timeout: the lease TTL (etcd's minimum is about 2s)
	etcdReady = 30 * time.Second // bound on a process's first key; a healthy one takes a second
)

func TestEtcdChaos(t *testing.T) {
	bin := buildChaosProc(t, t.TempDir())
	for _, mode := range []string{"recycle", "sticky"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newEtcdChaos(t, bin, mode)
			e.run()
			e.finish()
		})
	}
}

type etcdChaos struct {
	t     *testing.T
	mode  string
	bin   string
	dir   string
	dsn   string
	etcd  *etcdtest.Server
	procs []*chaosProc
	runs  map[string]int
	cli   *clientv3.Client // to see the holders' keys

	// The untouched processes' gaps, as in runChaos: the control, when a
	// fault first touched each process, and etcd's restart.
	ctl     *chaosProc
	touched map[*chaosProc]time.Time
	restart [2]time.Time
	end     time.Time
}

func newEtcdChaos(t *testing.T, bin, mode string) *etcdChaos {
	e := &etcdChaos{t: t, mode: mode, bin: bin, dir: t.TempDir(), runs: map[string]int{}, touched: map[*chaosProc]time.Time{}}
	e.etcd = etcdtest.StartServer(t)
	e.cli = etcdtest.Client(t, []string{e.etcd.Addr()})
	db, dsn := pgtest.Open(t)
	e.dsn = dsn
	createChaosTables(t, db, false)
	t.Cleanup(func() {
		for _, p := range e.procs {
			p.kill()
		}
	})
	return e
}

// start launches a helper on identity, named after base and its launch
// count.
func (e *etcdChaos) start(base, identity string) *chaosProc {
	e.t.Helper()
	e.runs[base]++
	name := base
	if n := e.runs[base]; n > 1 {
		name = fmt.Sprintf("%s.%d", base, n)
	}
	y := fmt.Sprintf("namespace: %s\nlayout: leaf\nholder:\n  kind: etcd\n  endpoints: [%s]\n  mode: %s\n  instance: %s\n"+
		"  session_timeout: %s\n  heartbeat: 500ms\n  cache_dir: %q\ntables:\n  %s: {strategy: snowflake}\n  %s: {strategy: segment, step: 50}\n",
		chaosNamespace, e.etcd.Addr(), e.mode, identity, etcdTTL, filepath.Join(e.dir, "cache"), sfTable, segTable)
	cfg := filepath.Join(e.dir, name+".yaml")
	if err := os.WriteFile(cfg, []byte(y), 0o644); err != nil {
		e.t.Fatal(err)
	}
	p, err := startProc(e.bin, e.dir, appDSN(e.dsn, name), cfg, name, identity, time.Time{}, []string{"-pause", "10ms"})
	if err != nil {
		e.t.Fatalf("launch %s: %v", name, err)
	}
	e.procs = append(e.procs, p)
	return p
}

func (e *etcdChaos) ready(p *chaosProc) {
	e.t.Helper()
	if !p.waitSnowflake(0, etcdReady) {
		e.t.Fatalf("%s (identity %s) issued no snowflake key within %s: %s\n%s", p.name, p.identity, etcdReady, p.outcome(), p.logTail())
	}
}

// issuesAgain waits until p acknowledges a snowflake key beyond those
// parsed now.
func (e *etcdChaos) issuesAgain(p *chaosProc, after string) {
	e.t.Helper()
	_ = p.scan()
	sf, _ := p.counts()
	if !p.waitSnowflake(sf, etcdReady) {
		e.t.Errorf("%s issued no snowflake key within %s after %s: %s\n%s", p.name, etcdReady, after, p.outcome(), p.logTail())
	}
}

// kill kills p, which must be running, and fails the test unless it is
// gone afterwards.
func (e *etcdChaos) kill(p *chaosProc, what string) {
	e.t.Helper()
	if _, ok := e.touched[p]; !ok {
		e.touched[p] = time.Now()
	}
	if !p.kill() {
		e.t.Errorf("%s: %s had exited before SIGKILL: %s\n%s", what, p.name, p.outcome(), p.logTail())
	}
	if p.alive() {
		e.t.Errorf("%s: %s still runs after SIGKILL", what, p.name)
	}
}

// leaseKeys returns the keys of the holders' that p's records name (its
// pid) and a live etcd lease holds.
func (e *etcdChaos) leaseKeys(p *chaosProc) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r, err := e.cli.Get(ctx, "/idsql/"+chaosNamespace+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	pid := fmt.Sprintf(`"pid":%d,`, p.cmd.Process.Pid)
	var keys []string
	for _, kv := range r.Kvs {
		if kv.Lease != 0 && strings.Contains(string(kv.Value), pid) {
			keys = append(keys, string(kv.Key))
		}
	}
	return keys, nil
}

// awaitExpired waits until etcd has expired the leases of p, which must
// hold some when called, at most etcdReady.
func (e *etcdChaos) awaitExpired(p *chaosProc) {
	e.t.Helper()
	keys, err := e.leaseKeys(p)
	if err != nil || len(keys) == 0 {
		e.t.Fatalf("%s holds no key on a lease in etcd (%v)", p.name, err)
	}
	start := time.Now()
	if !waitFor(etcdReady, func() bool {
		keys, err = e.leaseKeys(p)
		return err == nil && len(keys) == 0
	}) {
		e.t.Fatalf("etcd still holds %s's keys %v (%v) %s after it stopped", p.name, keys, err, etcdReady)
	}
	e.t.Logf("etcd expired %s's lease %s after it stopped (TTL %s)", p.name, time.Since(start).Round(time.Millisecond), etcdTTL)
}

func (e *etcdChaos) run() {
	t := e.t
	fleet := []*chaosProc{e.start("p1", "etcd-p1"), e.start("p2", "etcd-p2"), e.start("p3", "etcd-p3")}
	for _, p := range fleet {
		e.ready(p)
	}
	// The control: no fault but etcd's restart touches it.
	e.ctl = e.start("ctl", "etcd-ctl")
	e.ready(e.ctl)

	// SIGKILL: the restarted identity issues again, on its worker ID in
	// sticky mode, once the dead process's lease has run out.
	killed := fleet[0]
	w := killed.lastWorker()
	e.kill(killed, "SIGKILL")
	re := e.start("p1", killed.identity)
	e.ready(re)
	if e.mode == "sticky" && re.lastWorker() != w {
		t.Errorf("sticky identity %s restarted after SIGKILL on worker %d, had %d", re.identity, re.lastWorker(), w)
	}
	fleet[0] = re

	// SIGSTOP past the TTL: a successor starts once the stopped lease has
	// expired and takes its worker ID: the same identity in sticky mode;
	// in recycle mode two new identities, which get the two lowest free
	// worker IDs, the killed process's and the stopped one's. The stopped
	// process then continues. The checks at the end say whether it issued
	// under its old worker ID in a tick its successor used.
	paused := fleet[1]
	pw := paused.lastWorker()
	e.touched[paused] = time.Now()
	if !paused.pause() {
		t.Fatalf("SIGSTOP did not stop %s: %s", paused.name, paused.outcome())
	}
	e.awaitExpired(paused)
	var succ *chaosProc
	if e.mode == "sticky" {
		succ = e.start("s1", paused.identity)
		e.ready(succ)
	} else {
		s1, s2 := e.start("s1", "etcd-s1"), e.start("s2", "etcd-s2")
		e.ready(s1)
		e.ready(s2)
		succ = s1
		if s2.lastWorker() == pw {
			succ = s2
		}
	}
	if succ.lastWorker() != pw {
		t.Errorf("no successor of the stopped %s got its worker %d (%s has %d)", paused.name, pw, succ.name, succ.lastWorker())
	}
	paused.resume()
	if e.mode == "sticky" {
		// The identity is the successor's now: the resumed process is
		// refused, naming it, and the successor goes on.
		if !paused.waitUntil(etcdReady, func() bool { return e.refusedBy(paused, succ) }) {
			t.Errorf("resumed %s was not refused for identity %s held by %s: %s\n%s", paused.name, paused.identity, succ.name, paused.outcome(), paused.logTail())
		}
		e.issuesAgain(succ, "the stopped process resumed")
		// It would take the identity back whenever the successor loses
		// it (as in the etcd restart below): a replaced pod is gone.
		e.kill(paused, "SIGSTOP past the TTL")
	} else {
		e.issuesAgain(paused, "it resumed past its TTL")
	}

	// A twin on a live sticky identity is refused at once, naming the
	// holder, and the holder does not pause.
	if e.mode == "sticky" {
		owner := fleet[2]
		twin := e.start("twin", owner.identity)
		start := time.Now()
		if !twin.waitUntil(etcdReady, func() bool { return e.refusedBy(twin, owner) }) {
			t.Errorf("twin of %s was not refused naming it: %s\n%s", owner.name, twin.outcome(), twin.logTail())
		} else {
			t.Logf("twin refused %s after launch: %s", time.Since(start).Round(time.Millisecond), twin.errorLines(1)[0])
		}
		if sf, _ := twin.counts(); sf > 0 {
			t.Errorf("twin of %s issued %d snowflake keys", owner.name, sf)
		}
		// The twin keeps retrying (each insert asks anew) while the owner
		// issues 50 more keys.
		_ = owner.scan()
		have, _ := owner.counts()
		if !owner.waitSnowflake(have+49, etcdReady) {
			t.Errorf("%s issued no 50 keys within %s while its twin retried: %s\n%s", owner.name, etcdReady, owner.outcome(), owner.logTail())
		}
		e.kill(twin, "twin")
		// The owner did not pause while its twin tried.
		checkUntouched(t, owner, e.ctl, start, time.Now(), faultMaxGap, "twin refused")
	}

	// etcd restarted: every live process issues again afterwards.
	stopped := time.Now()
	e.etcd.Stop()
	time.Sleep(time.Second) // down for a second
	e.etcd.Start()
	e.restart = [2]time.Time{stopped, time.Now()}
	if err := restarted("etcd", stopped, func() (time.Duration, error) { return etcdUptime(e.etcd.Addr()) }); err != nil {
		t.Error(err)
	}
	for _, p := range []*chaosProc{fleet[0], fleet[2], succ, e.ctl} {
		e.issuesAgain(p, "etcd restarted")
	}
	e.end = time.Now()
}

// refusedBy reports whether p logged the sticky refusal naming owner's pid.
func (e *etcdChaos) refusedBy(p, owner *chaosProc) bool {
	want := fmt.Sprintf("pid %d,", owner.cmd.Process.Pid)
	for _, l := range p.errorLines(20) {
		if strings.Contains(l, "sticky identity") && strings.Contains(l, want) {
			return true
		}
	}
	return false
}

func (e *etcdChaos) finish() {
	t := e.t
	for _, p := range e.procs {
		p.kill()
	}
	for _, p := range e.procs {
		if err := p.scan(); err != nil {
			t.Errorf("%s: %v", p.name, err)
		}
	}
	d := loadChaosData(t, e.dsn, e.procs, false)
	d.report(t, e.procs)
	d.checkStored(t, e.procs)
	e.checkUntouched()
}

// checkUntouched bounds every process's gaps while no fault touched it:
// from its first key to its kill or pause, or to etcd's stop, and from
// chaosRecover after etcd's restart to the end; no more than chaosMaxGap
// beyond the control's pause around the same time (gapBeyond's rule).
func (e *etcdChaos) checkUntouched() {
	t := e.t
	if e.ctl == nil || e.end.IsZero() {
		return
	}
	ctlFrom, _ := firstKey(e.ctl)
	checked := 0
	for _, p := range e.procs {
		if p == e.ctl {
			continue
		}
		from, ok := firstKey(p)
		if !ok {
			continue
		}
		from = later(from, ctlFrom)
		to := e.end
		if at, ok := e.touched[p]; ok && at.Before(to) {
			to = at
		}
		for _, w := range [][2]time.Time{{from, minTime(to, e.restart[0])}, {later(from, e.restart[1].Add(chaosRecover)), to}} {
			if w[1].Sub(w[0]) < 100*time.Millisecond {
				continue
			}
			checked++
			checkUntouched(t, p, e.ctl, w[0], w[1], chaosMaxGap, "untouched")
		}
	}
	if checked == 0 {
		t.Errorf("untouched: no process issued keys in a stretch no fault touched: nothing checked")
	}
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
