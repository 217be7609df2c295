//go:build linux

package integration

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/redistest"
)

// TestChaosRedisQueue runs a fleet of internal/redisqproc processes taking
// keys of two segment keys (the keys of two shards of one table, whose
// lists share the queue and the Redis server) through the Redis queue (idsql/segment/redisqueue)
// from a private Redis and a private PostgreSQL, while it kills processes
// (SIGKILL) and starts new ones, restarts PostgreSQL, and kills Redis
// (SIGKILL) after a SAVE taken a moment earlier, so that the restarted
// Redis reloads lists holding keys popped since. Then it counts the keys
// printed by every process plus the keys still waiting in Redis: none may
// appear twice, and each must lie in a range of the ledger
// (idsql_alloc_log). IDSQL_CHAOS_DURATION and IDSQL_CHAOS_SEED work as for
// the other chaos tests.
func TestChaosRedisQueue(t *testing.T) {
	t.Parallel()
	soak, seed := chaosSoakSeed(t, 2*time.Minute)
	r := rand.New(rand.NewPCG(seed, 17))
	t.Logf("chaos redis queue: seed %d (%s=%d repeats the fault choices), soak %s", seed, EnvChaosSeed, seed, soak)

	pg := pgtest.StartServer(t)
	rs := redistest.StartServer(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "redisqproc")
	if out, err := exec.Command("go", "build", "-o", bin, "./internal/redisqproc").CombinedOutput(); err != nil {
		t.Fatalf("build the helper: %v\n%s", err, out)
	}
	db, err := sql.Open("postgres", pg.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := segment.NewPostgresStore(db)
	ctx := context.Background()
	if err := store.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr(), MaxRetries: -1})
	defer rdb.Close()
	// The second shard's numbers start far above the first's, so that
	// the keys of both are checked as one set.
	const ns = "chaos"
	shards := []segment.KeySpec{{Key: "orders#0", Step: 10}, {Key: "orders#1", Step: 10, Start: 1 << 40}}
	for _, spec := range shards {
		if err := store.CreateKey(ctx, spec); err != nil {
			t.Fatal(err)
		}
	}
	// lists returns the keys waiting in the lists of Redis run rid.
	lists := func(rid string) ([]string, error) {
		var out []string
		for _, spec := range shards {
			v, err := rdb.LRange(ctx, ns+":q:"+spec.Key+":"+rid, 0, -1).Result()
			if err != nil {
				return out, fmt.Errorf("LRANGE %s: %w", spec.Key, err)
			}
			out = append(out, v...)
		}
		return out, nil
	}

	var procs []*rqProc
	t.Cleanup(func() {
		for _, p := range procs {
			p.stop(syscall.SIGKILL)
		}
	})
	start := func() *rqProc {
		t.Helper()
		p, err := startRQProc(bin, dir, fmt.Sprintf("p%d", len(procs)+1), pg.DSN(), rs.Addr())
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
		return p
	}
	const fleet = 4
	for range fleet {
		start()
	}
	// The control: never killed; no fault but Redis's and PostgreSQL's
	// restarts touches it.
	ctl := procs[0]
	// Every process hands out keys before the faults start.
	for _, p := range procs {
		if !waitFor(chaosReady, func() bool { return p.count() > 0 }) {
			t.Fatalf("%s handed out no key within %v\n%s", p.name, chaosReady, p.log())
		}
	}

	// handed returns every key handed out so far.
	handedSoFar := func() map[string]bool {
		out := map[string]bool{}
		for _, p := range procs {
			ids, _ := p.keys()
			for _, id := range ids {
				out[strconv.FormatInt(id, 10)] = true
			}
		}
		return out
	}
	const (
		killProc     = "process killed"
		killRedis    = "Redis killed and restarted from an older snapshot"
		restartPG    = "PostgreSQL restarted"
		maxReloadTry = 5 // extra Redis restarts to get a reload holding keys handed out
	)
	faults := map[string]int{}
	staleReloads := 0
	reloaded := map[string]bool{} // keys of lists of earlier runs found after restarts
	danger := map[string]bool{}   // those of them handed out already
	play := func(kind string) {
		switch kind {
		case killProc: // a process dies, a new one starts
			var live []*rqProc
			for _, p := range procs {
				if p.alive() && p != ctl {
					live = append(live, p)
				}
			}
			if len(live) > 0 {
				killRQ(t, live[r.IntN(len(live))])
				faults[kind]++
			}
			start()
		case killRedis: // Redis crashes and reloads an older snapshot
			if err := rdb.Save(ctx).Err(); err != nil {
				t.Logf("SAVE: %v", err)
			}
			time.Sleep(time.Duration(100+r.IntN(400)) * time.Millisecond) // pops after the snapshot
			oldRID := runID(ctx, rdb)
			rs.Kill()
			time.Sleep(time.Duration(r.IntN(1000)) * time.Millisecond) // down: processes fall back
			rs.Start()
			if runID(ctx, rdb) == oldRID {
				t.Errorf("Redis kept its run_id %s across a restart", oldRID)
			}
			// The processes delete it at their first refill: look now.
			old, _ := lists(oldRID)
			if len(old) > 0 {
				staleReloads++
			}
			seen := handedSoFar()
			for _, v := range old {
				reloaded[v] = true
				if seen[v] {
					danger[v] = true
				}
			}
			faults[kind]++
		case restartPG: // the database restarts
			stopped := time.Now()
			pg.Stop()
			time.Sleep(time.Duration(r.IntN(1500)) * time.Millisecond)
			pg.Start()
			if err := restarted("PostgreSQL", stopped, func() (time.Duration, error) { return pgUptime(pg.DSN()) }); err != nil {
				t.Error(err)
			}
			faults[kind]++
		}
	}
	// Every kind once, in a random order, then random ones for the soak.
	kinds := []string{killProc, killRedis, restartPG}
	r.Shuffle(len(kinds), func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	end := time.Now().Add(soak)
	for i := 0; i < len(kinds) || time.Now().Before(end); i++ {
		time.Sleep(time.Duration(300+r.IntN(900)) * time.Millisecond)
		if i < len(kinds) {
			play(kinds[i])
			continue
		}
		switch f := r.IntN(10); {
		case f < 4:
			play(killProc)
		case f < 7:
			play(killRedis)
		default:
			play(restartPG)
		}
	}
	// The reload the run_id check is for: a list holding keys handed out
	// since the snapshot. Restart Redis again until one did.
	for try := 0; len(danger) == 0 && try < maxReloadTry; try++ {
		time.Sleep(500 * time.Millisecond)
		play(killRedis)
	}
	for _, k := range []string{killProc, killRedis, restartPG} {
		if faults[k] == 0 {
			t.Errorf("fault %q was never played", k)
		}
	}
	if len(danger) == 0 {
		t.Errorf("no Redis restart (%d) reloaded a list holding keys handed out already: the run_id check was not put to the test", faults[killRedis])
	}
	// Calm: every live process hands out keys again after the last fault,
	// and goes on for a second (back on Redis after a restart of it).
	after := map[*rqProc]int{}
	var live []*rqProc
	for _, p := range procs {
		if p.alive() {
			after[p] = p.count()
			live = append(live, p)
		}
	}
	for _, p := range live {
		if !waitFor(chaosReady, func() bool { return p.count() > after[p]+100 }) {
			t.Errorf("%s handed out %d keys within %v after the last fault, want more than 100\n%s", p.name, p.count()-after[p], chaosReady, p.log())
		}
	}
	// Then one more process killed and replaced, in the calm: the others
	// hand out keys without a pause meanwhile, no longer than
	// faultMaxGap beyond the control's around the same time. Each one's
	// output is watched (the keys carry no time).
	watchers := map[*rqProc]*watcher{}
	for _, p := range live {
		watchers[p] = watch(t, p.size)
	}
	var victim *rqProc
	for _, p := range live {
		if p != ctl {
			victim = p
		}
	}
	if victim == nil {
		t.Fatal("no live process to kill but the control")
	}
	// Every watched process printed a key since it was watched: the
	// window opens on live output.
	if !waitFor(chaosReady, func() bool {
		for _, w := range watchers {
			if _, ok := w.since(time.Time{}); !ok {
				return false
			}
		}
		return true
	}) {
		t.Fatal("a live process printed nothing within the wait")
	}
	before := map[*rqProc]int{}
	for _, p := range live {
		before[p] = p.count()
	}
	killedAt := time.Now()
	killRQ(t, victim)
	repl := start()
	if !waitFor(chaosReady, func() bool { return repl.count() > 100 }) {
		t.Errorf("%s, replacing the killed %s, handed out %d keys within %v, want more than 100\n%s", repl.name, victim.name, repl.count(), chaosReady, repl.log())
	}
	// And the others 1,000 keys each since the kill, for a window that
	// holds a refill or two of every one of them.
	for _, p := range live {
		if p != victim && !waitFor(chaosReady, func() bool { return p.count() > before[p]+1000 }) {
			t.Errorf("%s handed out %d keys within %v after %s was killed, want more than 1,000", p.name, p.count()-before[p], chaosReady, victim.name)
		}
	}
	calmEnd := time.Now()
	cw := watchers[ctl]
	for _, p := range live {
		if p == victim || p == ctl {
			continue
		}
		gap, at := watchers[p].longest(killedAt, calmEnd)
		cg, _ := cw.longest(at.Add(-faultMaxGap), at.Add(gap+faultMaxGap))
		if gap-cg > faultMaxGap {
			t.Errorf("%s killed and replaced: %s, untouched, handed out nothing for %s from %s, the control %s only %s of it (allowed: %s beyond it)",
				victim.name, p.name, gap.Round(time.Millisecond), fmtTick(at), ctl.name, cg.Round(time.Millisecond), faultMaxGap)
		} else {
			t.Logf("%s killed and replaced: %s, untouched, longest gap %s (the control's then %s) in %s", victim.name, p.name, gap.Round(time.Millisecond), cg.Round(time.Millisecond), calmEnd.Sub(killedAt).Round(time.Millisecond))
		}
	}
	for _, p := range procs {
		p.stop(syscall.SIGTERM)
	}

	// Every key handed out, and the keys still waiting in Redis.
	var all []int64
	for _, p := range procs {
		ids, err := p.keys()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ids...)
		t.Logf("%s: %d keys, %s", p.name, len(ids), p.outcome())
	}
	handed := len(all)
	// A reloaded key handed out before the restart must not be handed
	// out again: each would be a duplicate (checkChaosKeys counts it
	// too; this names the cause).
	times := map[string]int{}
	for _, id := range all {
		times[strconv.FormatInt(id, 10)]++
	}
	for v := range danger {
		if times[v] > 1 {
			t.Errorf("key %s, in a list an old snapshot reloaded after it had been handed out, was handed out %d times", v, times[v])
		}
	}
	rid := runID(ctx, rdb)
	waiting, err := lists(rid)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range waiting {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatalf("Redis list holds %q", v)
		}
		all = append(all, id)
	}
	var ranges []segment.Range
	for _, spec := range shards {
		rs, err := store.Ranges(ctx, spec.Key)
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			t.Errorf("no range of %s was allocated: the fleet did not take its keys", spec.Key)
		}
		ranges = append(ranges, rs...)
	}
	var allocated int64
	for _, rg := range ranges {
		allocated += rg.Len()
	}
	t.Logf("faults: %v; %d Redis restarts reloaded a list of the earlier run, holding %d keys, %d of them handed out already (each a duplicate without the run_id check)",
		faults, staleReloads, len(reloaded), len(danger))
	checkThroughRedis(t, procs, after, ranges)
	t.Logf("%d keys handed out by %d processes, %d waiting in Redis, %d allocated in %d ranges (%d skipped: buffered by stopped processes, in their fallback segments, in lists of earlier Redis runs, or in ranges cut short)",
		handed, len(procs), len(waiting), allocated, len(ranges), allocated-int64(len(all)))
	checkChaosKeys(t, all, ranges)
}

// rqFallbackSuffix ends the instance name of the ranges a redisqproc's
// fallback generator allocates (its fallbackSuffix).
const rqFallbackSuffix = " fallback"

// checkThroughRedis fails the test unless most keys came through Redis,
// not from the processes' fallback generators: over the whole run, and
// after the last fault (keys past after[p] of each process).
func checkThroughRedis(t *testing.T, procs []*rqProc, after map[*rqProc]int, ranges []segment.Range) {
	t.Helper()
	sorted := slices.Clone(ranges)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].First < sorted[j].First })
	viaRedis := func(id int64) bool {
		i := sort.Search(len(sorted), func(i int) bool { return sorted[i].Last >= id })
		return i < len(sorted) && sorted[i].Contains(id) && !strings.HasSuffix(sorted[i].Instance, rqFallbackSuffix)
	}
	var all, redisAll, late, redisLate int
	for _, p := range procs {
		ids, err := p.keys()
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			r := viaRedis(id)
			all++
			if r {
				redisAll++
			}
			if n, ok := after[p]; ok && i >= n {
				late++
				if r {
					redisLate++
				}
			}
		}
	}
	t.Logf("%d of %d keys came through Redis (the rest from fallback generators); after the last fault %d of %d", redisAll, all, redisLate, late)
	if 2*redisAll < all {
		t.Errorf("only %d of %d keys came through Redis: the queue ran on its fallback", redisAll, all)
	}
	if 2*redisLate < late {
		t.Errorf("after the last fault only %d of %d keys came through Redis: the processes did not return to it", redisLate, late)
	}
}

// checkChaosKeys fails the test on a key seen twice or outside every range.
func checkChaosKeys(t *testing.T, ids []int64, ranges []segment.Range) {
	t.Helper()
	slices.Sort(ids)
	dups := 0
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			if dups < 10 {
				t.Errorf("key %d handed out twice", ids[i])
			}
			dups++
		}
	}
	sort.Slice(ranges, func(i, j int) bool { return ranges[i].First < ranges[j].First })
	outside := 0
	for _, id := range ids {
		i := sort.Search(len(ranges), func(i int) bool { return ranges[i].Last >= id })
		if i == len(ranges) || !ranges[i].Contains(id) {
			if outside < 10 {
				t.Errorf("key %d lies in no range of the ledger", id)
			}
			outside++
		}
	}
	if dups > 0 || outside > 0 {
		t.Fatalf("%d keys: %d duplicates, %d outside the ledger", len(ids), dups, outside)
	}
	t.Logf("%d keys: 0 duplicates, all inside the ledger", len(ids))
}

func runID(ctx context.Context, rdb *redis.Client) string {
	info, _ := rdb.Info(ctx, "server").Result()
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "run_id:"); ok {
			return v
		}
	}
	return ""
}

func waitFor(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
	return true
}

// rqProc is one run of internal/redisqproc: its stdout has one key per
// line.
type rqProc struct{ helperProc }

// killRQ kills p with SIGKILL and fails the test unless it was running
// and is gone afterwards.
func killRQ(t *testing.T, p *rqProc) {
	t.Helper()
	if !p.alive() {
		t.Errorf("%s had exited before SIGKILL: %s", p.name, p.outcome())
		return
	}
	p.stop(syscall.SIGKILL)
	if p.alive() {
		t.Errorf("%s still runs after SIGKILL", p.name)
	}
}

// size returns how many bytes of keys p has printed.
func (p *rqProc) size() int {
	fi, err := os.Stat(p.keysPath)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

func startRQProc(bin, dir, name, dsn, addr string) (*rqProc, error) {
	p := &rqProc{helperProc{name: name}}
	// Steps of 1000 keys popped 20 at a time: the list is long when Redis
	// saves, so a reloaded snapshot holds keys popped since.
	if err := p.launch(bin, dir, "-dsn", dsn, "-redis", addr, "-name", name, "-step", "1000", "-batch", "20", "-key", "orders#0,orders#1"); err != nil {
		return nil, err
	}
	return p, nil
}

// stop sends sig and waits for the exit (SIGKILL after 30s).
func (p *rqProc) stop(sig syscall.Signal) {
	if !p.alive() {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// count returns how many complete lines the process has printed.
func (p *rqProc) count() int {
	b, err := os.ReadFile(p.keysPath)
	if err != nil {
		return 0
	}
	return bytes.Count(b, []byte("\n"))
}

// keys returns the keys printed; a last line without its newline (killed
// while writing) is not a key it handed out.
func (p *rqProc) keys() ([]int64, error) {
	b, err := os.ReadFile(p.keysPath)
	if err != nil {
		return nil, err
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	} else {
		b = nil
	}
	var ids []int64
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		id, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s printed %q", p.name, line)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// outcome says how the process ended and quotes its last log line.
func (p *rqProc) outcome() string {
	lines := strings.Split(strings.TrimSpace(p.log()), "\n")
	return fmt.Sprintf("exit %v; last log line: %s", p.waitErr, lines[len(lines)-1])
}
