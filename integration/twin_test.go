//go:build linux

package integration

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTwin: a process started with a copy of a running one's configuration
// (the same identity, so the same entry of the local worker map or the
// same sticky claim; a cache directory of its own, as on another host)
// must not disturb it (issue 28 §3). Where the identity is exclusive the
// twin is refused, with an error naming the process that holds the worker
// ID and since when, and issues no key; elsewhere it gets another worker
// ID. Either way the incumbent issues on without a pause longer than
// faultMaxGap, measured from its keys' times, while the twin starts and
// keeps retrying.
func TestTwin(t *testing.T) {
	t.Parallel()
	eachHolder(t, faultHolders, runTwin)
}

func runTwin(r *faultRun) {
	t, h := r.t, r.h
	r.control()
	a := r.start("a", "twin", time.Time{})
	r.ready(a)
	r.sentry(a)
	time.Sleep(500 * time.Millisecond) // a issues alone for a while
	twinAt := time.Now()
	b := r.start("b", "twin", time.Time{})
	answered := b.waitAnswer(chaosReady)
	answer := time.Since(twinAt)
	// The twin keeps retrying (each insert acquires anew) while the
	// incumbent issues; for IDSQL_CHAOS_DURATION in a soak.
	time.Sleep(max(4*faultHeartbeat, faultSoak(t)))
	end := time.Now()
	aAlive := a.alive()
	a.kill()
	b.kill()

	if !aAlive {
		t.Fatalf("the incumbent a exited: %s\n%s", a.outcome(), a.logTail())
	}
	gap, excess := r.checkGap(a, twinAt, end, "twin")
	r.checkLease(a, twinAt, end, "twin")
	dups, ex := r.duplicates()
	aKeys, bKeys := len(a.keys()), len(b.keys())
	t.Logf("incumbent a: %s, longest gap %s; twin b (answered after %s): %s", a.outcome(), gap, answer.Round(time.Millisecond), b.outcome())
	if dups > 0 {
		t.Errorf("%d keys issued twice, e.g. %s", dups, strings.Join(ex, "; "))
	}
	if !answered {
		t.Errorf("the twin b neither issued a key nor reported an error within %s", chaosReady)
	}
	if h.exclusive {
		if bKeys > 0 {
			t.Errorf("the twin b issued %d keys (workers %v) with the identity the running a holds (workers %v)", bKeys, workers(b), workers(a))
		}
		errs := b.errorLines(1)
		pid := "pid " + strconv.Itoa(a.cmd.Process.Pid)
		switch {
		case len(errs) == 0:
			t.Errorf("the twin b reported no error")
		case !strings.Contains(errs[0], "twin") || !strings.Contains(errs[0], pid) || !strings.Contains(errs[0], "since "):
			t.Errorf("the twin's error does not name the identity, the holder (%s) and since when: %s", pid, errs[0])
		default:
			t.Logf("the twin was refused: %s", errs[0])
		}
	} else {
		for w := range workers(b) {
			if workers(a)[w] {
				t.Errorf("the twin b issued under worker %d, the incumbent's", w)
			}
		}
		if bKeys == 0 {
			t.Errorf("the twin b issued no key: %s", b.outcome())
		}
	}
	r.row("twin started and retrying", aKeys+bKeys, dups, gap, excess, "twin answered after "+answer.Round(10*time.Millisecond).String())
}
