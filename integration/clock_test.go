//go:build linux

package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/registry"
)

// The clock tests move the clock of a running helper process (issue 28
// §2) without touching the machine's: the helper reads its clock through
// -clock-file (a step of the wall reading, as NTP makes, or a slew of
// both readings), or starts with it set behind (-clock-start). Go reads
// the clock through the vDSO, so libfaketime cannot do this.

// clockHolders are the holders the clock tests cover: the sticky ones,
// where a successor gets its predecessor's worker ID.
func clockHolders() []faultHolder {
	var hs []faultHolder
	for _, h := range faultHolders {
		if h.exclusive {
			hs = append(hs, h)
		}
	}
	return hs
}

// setClock writes the clock file of p and signals it, and returns once p
// has read it.
func (r *faultRun) setClock(p *chaosProc, path string, step time.Duration, slew float64) time.Time {
	r.t.Helper()
	const note = "note: clock step "
	before := strings.Count(p.log(), note)
	if err := os.WriteFile(path, []byte(fmt.Sprintf("%s %g\n", step, slew)), 0o644); err != nil {
		r.t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGUSR1); err != nil {
		r.t.Fatalf("signal %s: %v", p.name, err)
	}
	if !p.waitUntil(10*time.Second, func() bool { return strings.Count(p.log(), note) > before }) {
		r.t.Fatalf("%s did not read its clock file: %s", p.name, p.logTail())
	}
	now := time.Now()
	// The slew it has gained so far, as the helper counts it.
	r.slewed += time.Duration(float64(now.Sub(r.slewFrom)) * r.slew)
	r.slew, r.slewFrom = slew, now
	// The note says what its clock read then: the fault took effect.
	log := p.log()
	_, reading, _ := strings.Cut(log[strings.LastIndex(log, note):], ": it reads ")
	reading, _, _ = strings.Cut(reading, "\n")
	read, err := time.Parse(time.RFC3339Nano, reading)
	want := now.Add(step + r.slewed)
	if off := read.Sub(want); err != nil || off < -time.Second || off > time.Second {
		r.t.Fatalf("%s's clock read %q after being stepped to %s (slewed %s), want about %s (%v)", p.name, reading, step, r.slewed, want.UTC().Format(time.RFC3339Nano), err)
	}
	return now
}

// TestClockStep steps the wall clock of a running process back 5 s, then
// forward 30 s, then slews it back (it runs 5 % slow), while a process
// with a true clock runs beside it. A step changes the wall reading only,
// as NTP's does: the generator counts time on the monotonic clock from
// its start, but the holders persist horizons read from the wall clock.
// Expected (ARCHITECTURE.md, Clock faults): no key twice; the stepped
// process stops for about the length of a backward step and issues again
// once its wall clock is past what it issued; a forward step and a slew
// cost nothing; the process beside it never pauses.
func TestClockStep(t *testing.T) {
	t.Parallel()
	eachHolder(t, clockHolders(), runClockStep)
}

func runClockStep(r *faultRun) {
	t := r.t
	clockFile := filepath.Join(r.dir, "clock")
	if err := os.WriteFile(clockFile, []byte("0s 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := r.start("a", "clock", time.Time{}, "-clock-file", clockFile)
	b := r.start("b", "other", time.Time{})
	r.ready(a)
	r.ready(b)
	r.control()
	wa, wc := r.watch(a), r.watch(r.c)
	time.Sleep(500 * time.Millisecond)
	phases := []struct {
		fault string
		step  time.Duration // added to the clock's step
		slew  float64
		hold  time.Duration // how long the phase lasts: the longest outage allowed, and more
	}{
		{"wall clock stepped back 5 s", -5 * time.Second, 0, 12 * time.Second},
		{"wall clock stepped forward 30 s", 30 * time.Second, 0, 3 * time.Second},
		{"clock slewed back (5 % slow)", 0, -0.05, 3 * time.Second},
	}
	// The phases once, or over and over for IDSQL_CHAOS_DURATION.
	type total struct {
		keys                int
		gap, excess, outage time.Duration
		rounds              int
	}
	totals := make([]total, len(phases))
	var step time.Duration
	soak := faultSoak(t)
	for start := time.Now(); totals[0].rounds == 0 || time.Since(start) < soak; {
		for i, ph := range phases {
			aBefore, bBefore := len(a.keys()), len(b.keys())
			step += ph.step
			at := r.setClock(a, clockFile, step, ph.slew)
			time.Sleep(ph.hold)
			end := time.Now()
			if !a.alive() || !b.alive() {
				t.Fatalf("%s: a process exited: a %s; b %s", ph.fault, a.outcome(), b.outcome())
			}
			outage, outAt := wa.longest(at, end)
			if miss, tooLong := r.checkOutage(a, wc, ph.fault, ph.step, outage, outAt); miss != "" {
				// A stop longer than its bound is a timing goal, which a
				// loaded machine can miss: the short form plays the phase
				// once more (the same change again) and fails if that
				// misses too, judged in its own window. A soak counts
				// every round. A stop shorter than a backward step (keys
				// stamped behind the process's own last ones) no load can
				// cause: it fails at once, as do duplicates.
				again := ""
				if soak == 0 && tooLong {
					step += ph.step
					at2 := r.setClock(a, clockFile, step, ph.slew)
					time.Sleep(ph.hold)
					out2, outAt2 := wa.longest(at2, time.Now())
					again, _ = r.checkOutage(a, wc, ph.fault+" (played again)", ph.step, out2, outAt2)
				}
				if soak > 0 || !tooLong || again != "" {
					t.Errorf("%s", miss)
					if again != "" {
						t.Errorf("%s", again)
					}
				} else {
					t.Logf("%s (met when played again)", miss)
				}
			}
			bGap, excess := r.checkGap(b, at, end, ph.fault)
			r.checkLease(b, at, end, ph.fault)
			dups, ex := r.duplicates()
			if dups > 0 {
				t.Fatalf("%s: %d keys issued twice, e.g. %s", ph.fault, dups, strings.Join(ex, "; "))
			}
			// The stepped process issues again within the phase, and
			// keeps issuing at its end. When the control lost its worker
			// lease in the phase (the shared server stalled past its
			// deadline, which ends a's lease too, and a new lease first
			// waits out the horizon the last one reserved), the short form
			// gives a one more hold, without changing its clock, and fails
			// if it is still not issuing then.
			if g := wa.gap(end.Add(-time.Second), end); g >= 500*time.Millisecond {
				miss := fmt.Sprintf("%s: a does not issue again %s after the fault (nothing for the last %s): %s\n%s", ph.fault, ph.hold, g.Round(time.Millisecond), a.outcome(), a.logTail())
				if soak > 0 || !lostLease(r.c, at, end) {
					t.Errorf("%s", miss)
				} else {
					time.Sleep(ph.hold)
					later := time.Now()
					if g2 := wa.gap(later.Add(-time.Second), later); g2 >= 500*time.Millisecond {
						t.Errorf("%s", miss)
						t.Errorf("%s: a still does not issue %s later (nothing for the last %s)", ph.fault, ph.hold, g2.Round(time.Millisecond))
					} else {
						t.Logf("%s (the control lost its worker lease in the phase: the shared server stalled; a issued again within another %s)", miss, ph.hold)
					}
				}
			}
			tt := &totals[i]
			tt.keys += len(a.keys()) - aBefore + len(b.keys()) - bBefore
			tt.gap, tt.excess, tt.outage = max(tt.gap, bGap), max(tt.excess, excess), max(tt.outage, outage)
			tt.rounds++
		}
	}
	dups, _ := r.duplicates()
	for i, ph := range phases {
		tt := totals[i]
		t.Logf("%s (%d times): a stopped for at most %s; b's longest gap %s", ph.fault, tt.rounds, tt.outage.Round(time.Millisecond), tt.gap.Round(time.Millisecond))
		r.row(fmt.Sprintf("%s (%d×)", ph.fault, tt.rounds), tt.keys, dups, tt.gap, tt.excess, "stepped process stopped "+tt.outage.Round(10*time.Millisecond).String())
	}
}

// checkOutage checks the stepped process's longest pause in a phase
// (outage, from at, in true time) against RELIABILITY.md's claims for the
// phase's change of the step: a step back by d stops it for about d (its
// persisted horizons are wall readings: it issues again once its wall
// clock passes its last key), at least d less faultMaxGap and at most d
// plus one heartbeat (the lease it then takes, on the shared servers),
// plus what the control paused in the same window; a step forward or a
// slew (step 0) costs nothing: no pause beyond faultMaxGap more than the
// control's in the same window and the time the process noted it did not
// run (the rule of checkGap). Both pauses are read by the test's
// watchers, so a stall of the test process shows in both. It returns the
// miss, or "", and whether the miss was a stop too long (which a stall
// can cause) rather than too short (which none can).
func (r *faultRun) checkOutage(a *chaosProc, wc *watcher, fault string, step, outage time.Duration, at time.Time) (string, bool) {
	r.t.Helper()
	cg, _ := wc.longest(at.Add(-stallWindow), at.Add(outage+stallWindow))
	if step < 0 {
		d := -step
		lo, hi := d-faultMaxGap, d+faultHeartbeat+cg
		if outage < lo || outage > hi {
			return fmt.Sprintf("%s: a stopped for %s from %s; a step back by %s should stop it for about that: between %s and %s (the control paused %s)",
				fault, outage.Round(time.Millisecond), fmtTick(at), d, lo, hi.Round(time.Millisecond), cg.Round(time.Millisecond)), outage > hi
		}
		return "", false
	}
	excess := max(outage-cg-stalled(a, at, at.Add(outage)), 0)
	if excess > faultMaxGap {
		return fmt.Sprintf("%s: a stopped for %s from %s, the control only %s of it (allowed: %s beyond it): a forward step or a slew should cost nothing; its slow keys: %s\n%s",
			fault, outage.Round(time.Millisecond), fmtTick(at), cg.Round(time.Millisecond), faultMaxGap, slowKeys(a), a.logTail()), true
	}
	return "", false
}

// lostLease reports whether p lost a worker lease in [from, to].
func lostLease(p *chaosProc, from, to time.Time) bool {
	for _, e := range leaseEnds(p) {
		if !e.Before(from) && !e.After(to) {
			return true
		}
	}
	return false
}

// persistedHorizon returns the latest time persisted in idsql_workers for
// worker: every key issued under it is before it.
func (r *faultRun) persistedHorizon(worker int64) time.Time {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := registry.New(r.db, registry.Settings{}).Leases(ctx, r.ns, false)
	if err != nil {
		r.t.Fatal(err)
	}
	var h time.Time
	for _, rec := range recs {
		if rec.WorkerID == worker {
			h = later(h, later(rec.IDsAfter, rec.LastTimestamp))
		}
	}
	if h.IsZero() {
		r.t.Fatalf("no lease of worker %d recorded", worker)
	}
	return h
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// lastKey returns the time and worker of p's latest key.
func lastKey(p *chaosProc) (time.Time, int64) {
	var last time.Time
	var w int64 = -1
	for _, k := range p.keys() {
		if parts := chaosLayout.Decompose(k); parts.Time.After(last) {
			last, w = parts.Time, parts.Worker
		}
	}
	return last, w
}

// TestClockSuccessor kills a process (no release: its horizon stays where
// its lease had put it) and starts its successor, on the same identity
// and so the same worker ID, with its clock 10 s behind that persisted
// horizon: it must wait for its clock to pass it (up to
// snowflake.DefaultMaxStartWait, 45 s) and issue only later keys. Then a
// second successor 60 s behind must refuse, saying its clock is behind.
// A process with a true clock runs beside them and never pauses.
func TestClockSuccessor(t *testing.T) {
	t.Parallel()
	eachHolder(t, clockHolders(), runClockSuccessor)
}

func runClockSuccessor(r *faultRun) {
	t := r.t
	a := r.start("a", "clock", time.Time{})
	b := r.start("b", "other", time.Time{})
	r.ready(a)
	r.ready(b)
	r.control()
	begin := time.Now()
	time.Sleep(500 * time.Millisecond)
	a.kill()
	aLast, w := lastKey(a)

	horizon := r.persistedHorizon(w)
	s := r.start("s", "clock", horizon.Add(-10*time.Second))
	launched := time.Now()
	if !s.waitSnowflake(0, chaosReady) {
		t.Fatalf("the successor s, its clock 10 s behind worker %d's horizon %s, issued nothing within %s: %s\n%s",
			w, fmtTick(horizon), chaosReady, s.outcome(), s.logTail())
	}
	waited := time.Since(launched) // to the 50 ms of waitSnowflake's polls
	time.Sleep(500 * time.Millisecond)
	s.kill()
	sFirst, sLast := time.Time{}, time.Time{}
	for _, k := range s.keys() {
		p := chaosLayout.Decompose(k)
		if p.Worker != w {
			t.Errorf("the successor s issued under worker %d, not its identity's worker %d", p.Worker, w)
		}
		if sFirst.IsZero() || p.Time.Before(sFirst) {
			sFirst = p.Time
		}
		sLast = later(sLast, p.Time)
	}
	t.Logf("a's last key %s, persisted horizon %s; s started 10 s behind it, issued its first key %s after launch, at %s (%s)",
		fmtTick(aLast), fmtTick(horizon), waited.Round(time.Millisecond), fmtTick(sFirst), s.outcome())
	if !sFirst.After(horizon) {
		t.Errorf("the successor's first key, at %s, is not after the persisted horizon %s", fmtTick(sFirst), fmtTick(horizon))
	}
	// It waited for its clock (which proves it was behind), and no longer
	// than that plus the takeover.
	if waited < 8*time.Second || waited > 30*time.Second {
		t.Errorf("the successor took %s to its first key; its clock was 10 s behind: want a wait of about that", waited)
	}
	dups, ex := r.duplicates()
	if dups > 0 {
		t.Errorf("%d keys issued twice, e.g. %s", dups, strings.Join(ex, "; "))
	}
	r.row("successor's clock 10 s behind the persisted horizon", len(a.keys())+len(s.keys()), dups, 0, 0, "first key after "+waited.Round(10*time.Millisecond).String())

	horizon = r.persistedHorizon(w)
	s2 := r.start("s2", "clock", horizon.Add(-time.Minute))
	launched = time.Now()
	refused := s2.waitUntil(chaosReady, func() bool {
		return len(s2.keys()) > 0 || strings.Contains(strings.Join(s2.errorLines(5), "\n"), "clock is behind")
	})
	answer := time.Since(launched)
	time.Sleep(time.Second) // it keeps refusing
	end := time.Now()
	s2.kill()
	b.kill()
	if n := len(s2.keys()); n > 0 || !refused {
		t.Errorf("the successor s2, its clock a minute behind worker %d's horizon, issued %d keys or did not refuse: %s", w, n, s2.outcome())
	} else {
		t.Logf("s2, a minute behind, refused after %s: %s", answer.Round(time.Millisecond), s2.errorLines(1)[0])
	}
	bGap, excess := r.checkGap(b, begin, end, "successors behind")
	r.checkLease(b, begin, end, "successors behind")
	dups, ex = r.duplicates()
	if dups > 0 {
		t.Errorf("%d keys issued twice, e.g. %s", dups, strings.Join(ex, "; "))
	}
	r.row("successor's clock 60 s behind the persisted horizon", len(s2.keys()), dups, bGap, excess, "refused after "+answer.Round(10*time.Millisecond).String())
}
