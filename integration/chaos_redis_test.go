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
	// Every process hands out keys before the faults start.
	for _, p := range procs {
		if !waitFor(chaosReady, func() bool { return p.count() > 0 }) {
			t.Fatalf("%s handed out no key within %v\n%s", p.name, chaosReady, p.log())
		}
	}

	faults := map[string]int{}
	staleReloads := 0
	var reloaded []string // keys of lists of earlier runs found after restarts
	end := time.Now().Add(soak)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(300+r.IntN(900)) * time.Millisecond)
		switch f := r.IntN(10); {
		case f < 4: // a process dies, a new one starts
			var live []*rqProc
			for _, p := range procs {
				if p.alive() {
					live = append(live, p)
				}
			}
			if len(live) > 0 {
				live[r.IntN(len(live))].stop(syscall.SIGKILL)
				faults["process killed"]++
			}
			start()
		case f < 7: // Redis crashes and reloads an older snapshot
			if err := rdb.Save(ctx).Err(); err != nil {
				t.Logf("SAVE: %v", err)
			}
			time.Sleep(time.Duration(100+r.IntN(400)) * time.Millisecond) // pops after the snapshot
			oldRID := runID(ctx, rdb)
			rs.Kill()
			time.Sleep(time.Duration(r.IntN(1000)) * time.Millisecond) // down: processes fall back
			rs.Start()
			// The processes delete it at their first refill: look now.
			if old, _ := lists(oldRID); len(old) > 0 {
				staleReloads++
				reloaded = append(reloaded, old...)
			}
			faults["Redis killed and restarted from an older snapshot"]++
		default: // the database restarts
			pg.Stop()
			time.Sleep(time.Duration(r.IntN(1500)) * time.Millisecond)
			pg.Start()
			faults["PostgreSQL restarted"]++
		}
	}
	// Calm: the fleet must hand out keys again after the last fault.
	before := 0
	for _, p := range procs {
		before += p.count()
	}
	if !waitFor(chaosReady, func() bool {
		n := 0
		for _, p := range procs {
			n += p.count()
		}
		return n > before+100
	}) {
		t.Errorf("the fleet handed out no keys within %v after the last fault", chaosReady)
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
	seen := make(map[string]bool, handed)
	for _, id := range all {
		seen[strconv.FormatInt(id, 10)] = true
	}
	danger := 0
	for _, v := range reloaded {
		if seen[v] {
			danger++
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
		faults, staleReloads, len(reloaded), danger)
	t.Logf("%d keys handed out by %d processes, %d waiting in Redis, %d allocated in %d ranges (%d skipped: buffered by stopped processes, in their fallback segments, in lists of earlier Redis runs, or in ranges cut short)",
		handed, len(procs), len(waiting), allocated, len(ranges), allocated-int64(len(all)))
	checkChaosKeys(t, all, ranges)
	if danger == 0 {
		t.Logf("note: no reloaded list held a key handed out already this time: the run_id check was not put to the test")
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
