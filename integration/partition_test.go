package integration

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	toxic "github.com/Shopify/toxiproxy/v2/toxics"
	"github.com/go-sql-driver/mysql"
	"github.com/go-zookeeper/zk"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/idsql/idsql/holder"
	_ "github.com/idsql/idsql/holder/etcd" // holder.kind: etcd
	"github.com/idsql/idsql/holder/registry"
	_ "github.com/idsql/idsql/holder/workertable" // holder.kind: postgres, mysql
	_ "github.com/idsql/idsql/holder/zookeeper"   // holder.kind: zookeeper
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment store on MySQL
	_ "github.com/idsql/idsql/idsql/segment/redisqueue" // buffer: redis
	"github.com/idsql/idsql/internal/etcdtest"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/redistest"
	"github.com/idsql/idsql/internal/zktest"
)

// The partition tests put a Toxiproxy proxy, run inside the test process,
// between one of two in-process key issuers and its coordination server
// (ZooKeeper, etcd, PostgreSQL, MariaDB or Redis), and cut or slow that link
// while both issue keys through keyset.Keys as an application does. The
// other issuer talks to the same servers directly: the fault does not
// touch it. Each case is one target (holder kind and mode, segment store or
// Redis queue) and one fault; every case runs at once with a few others.
// The checker (partResult) then reports duplicates, the untouched
// issuer's longest gap, when the faulted one stopped and how long after
// healing it issued again, and keys skipped.

// Timings: a lease shorter than the chaos tests' so that a case takes
// seconds.
const (
	partTTL = 1500 * time.Millisecond // database lease TTL
	// partZKTTL is the ZooKeeper session timeout: go-zookeeper waits a
	// second before each reconnection to a one-server ensemble, so that a
	// healed link gives a new session only after about two seconds (one
	// to learn that the old session expired, one for the new one).
	partZKTTL = 3 * time.Second
	// partEtcdTTL is the etcd lease TTL: etcd's minimum (one and a half
	// election timeouts, rounded up to whole seconds) is 2s.
	partEtcdTTL   = 2 * time.Second
	partHeartbeat = 300 * time.Millisecond // holder.heartbeat (below TTL minus the TTL/3 margin)
	partWarm      = time.Second            // both issue before the fault
	partEvery     = 5 * time.Millisecond   // pause between two keys of one issuer
	partMaxGap    = 100 * time.Millisecond // the longest gap allowed to an untouched issuer
	// partCallTimeout bounds each NextID of the issuers, as an
	// application bounds a request.
	partCallTimeout = 5 * time.Second
	sfPartTable     = "part_sf"
	segPartTable    = "part_seg"
)

// partTarget is what a case cuts off: a holder kind and mode (snowflake
// keys), a segment store or the Redis queue (segment keys).
type partTarget struct {
	name   string
	link   string // the server the fault cuts: zookeeper, etcd, postgres, mysql, redis
	db     string // the application's database: postgres or mysql
	holder keyset.HolderConfig
	table  keyset.TableConfig
	// fenced: the faulted issuer holds a lease the server lets expire
	// after ttl, so it must stop issuing by then.
	fenced bool
	ttl    time.Duration // lease TTL or session timeout
	// dbDefault: the table has its database-side default too, and a
	// writer on a connection of its own, which the fault does not cut,
	// inserts rows keyed by the database under its reserved worker ID.
	dbDefault bool
}

func (p partTarget) snowflake() bool { return p.table.Strategy == keyset.Snowflake }

var partTargets = func() []partTarget {
	sf := keyset.TableConfig{Strategy: keyset.Snowflake}
	seg := keyset.TableConfig{Strategy: keyset.Segment, Step: 50}
	var ts []partTarget
	for _, mode := range []string{"sticky", "recycle"} {
		ts = append(ts, partTarget{name: "zookeeper/" + mode, link: "zookeeper", db: "postgres",
			holder: keyset.HolderConfig{Kind: "zookeeper", Mode: mode}, table: sf, fenced: true, ttl: partZKTTL})
	}
	for _, mode := range []string{"sticky", "recycle"} {
		ts = append(ts, partTarget{name: "etcd/" + mode, link: "etcd", db: "postgres",
			holder: keyset.HolderConfig{Kind: "etcd", Mode: mode}, table: sf, fenced: true, ttl: partEtcdTTL})
	}
	for _, db := range []string{"postgres", "mysql"} {
		for _, mode := range []string{"sticky", "disposable", "lease"} {
			ts = append(ts, partTarget{name: db + "/" + mode, link: db, db: db,
				holder: keyset.HolderConfig{Kind: keyset.HolderKind(db), Mode: mode}, table: sf, fenced: true, ttl: partTTL})
		}
	}
	for _, db := range []string{"postgres", "mysql"} {
		ts = append(ts, partTarget{name: db + "/lease+db-default", link: db, db: db,
			holder: keyset.HolderConfig{Kind: keyset.HolderKind(db), Mode: "lease"}, table: sf, fenced: true, ttl: partTTL, dbDefault: true})
	}
	// The local map's leases are static; the worker table records them.
	ts = append(ts, partTarget{name: "local+table", link: "postgres", db: "postgres",
		holder: keyset.HolderConfig{Kind: "local"}, table: sf, ttl: partTTL})
	for _, db := range []string{"postgres", "mysql"} {
		ts = append(ts, partTarget{name: "segment/" + db, link: db, db: db, table: seg, ttl: partTTL})
	}
	// The Redis queue refills its shared list at 20 % of the step: 100
	// keys, a quarter second of both issuers' keys.
	rq := seg
	rq.Buffer, rq.Step = keyset.BufferRedis, 500
	ts = append(ts, partTarget{name: "redis-queue", link: "redis", db: "postgres", table: rq, ttl: partTTL})
	return ts
}()

// partFault is a fault on the faulted issuer's link: Toxiproxy toxics, for
// a multiple of the target's TTL.
type partFault struct {
	name   string
	toxics func(ttl time.Duration) []string // toxic JSON
	lasts  float64                          // times the TTL
	// late: the link stays cut past the lease, so a fenced target's issuer
	// must stop issuing within its TTL of the fault.
	late bool
}

// toxics returns a fault's toxics that do not depend on the TTL.
func toxics(js ...string) func(time.Duration) []string {
	return func(time.Duration) []string { return js }
}

const (
	dropUp   = `{"name":"drop_up","type":"timeout","stream":"upstream","attributes":{"timeout":0}}`
	dropDown = `{"name":"drop_down","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`
)

var partFaults = []partFault{
	// Dropped packets in both directions, healed before the lease ends.
	{name: "blackhole", lasts: 0.5, toxics: toxics(dropUp, dropDown)},
	// The same, healed after the lease has expired on the server.
	{name: "heal-late", lasts: 2, late: true, toxics: toxics(dropUp, dropDown)},
	// Every connection reset by the peer as soon as it sends.
	{name: "reset", lasts: 2, late: true, toxics: toxics(
		`{"name":"rst","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`)},
	// Replies delayed by more than the lease margin (a third of the TTL).
	{name: "latency", lasts: 2, toxics: func(ttl time.Duration) []string {
		return []string{fmt.Sprintf(`{"name":"lat","type":"latency","stream":"downstream","attributes":{"latency":%d}}`,
			(ttl/3 + ttl/4).Milliseconds())}
	}},
	// One-way loss: the server receives, its replies are lost.
	{name: "drop-replies", lasts: 2, late: true, toxics: toxics(dropDown)},
	// One-way loss the other way: the requests are lost.
	{name: "drop-requests", lasts: 2, late: true, toxics: toxics(dropUp)},
}

// partServers are the shared test servers, found through IDSQL_TEST_*.
type partServers struct {
	pg, my     string // base DSNs
	pgAdmin    *sql.DB
	myAdmin    *sql.DB
	zk         []string
	etcd       []string
	redis      string
	toxi       *toxiproxy.ApiServer
	mu         sync.Mutex
	seq        int
	namePrefix string
	dir        string                 // cache directories
	stalls     *stallMeter            // the test process
	servers    map[string]*stallMeter // each server, by partTarget.link
}

func TestPartition(t *testing.T) {
	t.Parallel()
	s := &partServers{pg: pgtest.BaseDSN(t), my: mysqltest.BaseDSN(t), zk: zktest.Servers(t), etcd: etcdtest.Endpoints(t), redis: redistest.Addr(t),
		namePrefix: fmt.Sprintf("part_%d", os.Getpid()), dir: t.TempDir()}
	var err error
	if s.pgAdmin, err = sql.Open("postgres", s.pg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.pgAdmin.Close() })
	if s.myAdmin, err = sql.Open("mysql", s.my); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.myAdmin.Close() })
	s.toxi = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	s.stalls = startStallMeter(t, nil)
	s.servers = s.serverMeters(t)

	// A soak repeats every case until IDSQL_CHAOS_DURATION has passed.
	soak := time.Duration(0)
	if v := os.Getenv(EnvChaosDuration); v != "" {
		if soak, err = time.ParseDuration(v); err != nil {
			t.Fatalf("%s=%q: want a duration such as 10m", EnvChaosDuration, v)
		}
	}
	start := time.Now()
	var mu sync.Mutex
	var rows []*partResult
	// Each target's faults run at once; targets run as go test's
	// -parallel allows (GOMAXPROCS by default). A soak (IDSQL_CHAOS_DURATION)
	// plays a target's faults one after the other, round after round,
	// until the duration has passed since the test started: give it
	// -parallel 12 so that every target soaks that long.
	t.Run("targets", func(t *testing.T) {
		for _, tg := range partTargets {
			t.Run(tg.name, func(t *testing.T) {
				t.Parallel()
				results := make([][]*partResult, len(partFaults))
				for round := 1; round == 1 || time.Since(start) < soak; round++ {
					var wg sync.WaitGroup
					for i, f := range partFaults {
						if soak > 0 {
							// A soak plays them one after the other
							// and every target at once (-parallel).
							results[i] = append(results[i], s.run(tg, f))
							continue
						}
						wg.Add(1)
						go func() {
							defer wg.Done()
							results[i] = append(results[i], s.run(tg, f))
						}()
					}
					wg.Wait()
				}
				// The short form plays a case that missed only a timing
				// goal (a pause, a late recovery: a loaded machine can
				// cause either), or that the fault was not shown to
				// reach, up to twice more, and fails if its last try
				// misses too. With IDSQL_TIMING=log a timing goal
				// missed is logged, not played again. Safety failures
				// (duplicates, keys past the deadline) fail at once, in
				// any try. A soak counts every round.
				logged := timingLogged(t)
				again := map[int]*partResult{}
				for i, f := range partFaults {
					if r := results[i][0]; soak == 0 && r.replay(logged) {
						a := s.run(tg, f)
						if a.replay(logged) {
							a = s.run(tg, f)
						}
						again[i] = a
					}
				}
				for i, f := range partFaults {
					t.Run(f.name, func(t *testing.T) {
						a, replayed := again[i]
						met := replayed && len(a.failures)+len(a.unshown) == 0 && (logged || len(a.missed) == 0)
						for n, r := range results[i] {
							for _, msg := range r.failures {
								t.Errorf("round %d: %s", n+1, msg)
							}
							for _, msg := range r.unshown {
								if met {
									t.Logf("round %d: %s (shown when played again: %s)", n+1, msg, a.summary())
								} else {
									t.Errorf("round %d: %s", n+1, msg)
								}
							}
							for _, msg := range r.missed {
								if met && len(a.missed) == 0 {
									t.Logf("round %d: %s (met when played again: %s)", n+1, msg, a.summary())
								} else {
									timingMiss(t, fmt.Sprintf("round %d: %s", n+1, msg))
								}
							}
							t.Logf("round %d: %s", n+1, r.summary())
						}
						if replayed && !met {
							if msgs := slices.Concat(a.failures, a.unshown); len(msgs) > 0 {
								t.Errorf("played again: %s", strings.Join(msgs, "; "))
							}
							for _, msg := range a.missed {
								timingMiss(t, "played again: "+msg)
							}
						}
					})
					mu.Lock()
					rows = append(rows, mergeResults(results[i]))
					mu.Unlock()
				}
			})
		}
	})
	order := map[string]int{}
	for i, tg := range partTargets {
		order[tg.name] = i
	}
	sort.SliceStable(rows, func(i, j int) bool { return order[rows[i].target] < order[rows[j].target] })
	t.Logf("partitions (%s, %d rounds of each case at most):\n%s", time.Since(start).Round(time.Second), maxRounds(rows), partTable(rows))
}

// partProc is one in-process issuer: a Keys on its own connections, and
// what it issued.
type partProc struct {
	name string
	keys *keyset.Keys
	db   *sql.DB

	mu     sync.Mutex
	at     []time.Time // when each key came back
	ids    []int64
	errs   map[string]int
	errOrd []string
	errAt  []time.Time // when each error came back
	fences []time.Time // when its worker lease ended, as its Logger says
}

// Enabled, Handle, WithAttrs and WithGroup make a partProc the
// slog.Handler of its issuer's Logger: it notes when a worker lease ended.
func (p *partProc) Enabled(context.Context, slog.Level) bool { return true }

// Handle notes a record that says a worker lease ended.
func (p *partProc) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, "worker lease ended") {
		p.mu.Lock()
		p.fences = append(p.fences, time.Now())
		p.mu.Unlock()
	}
	return nil
}

// WithAttrs returns p: its records' attributes are not kept.
func (p *partProc) WithAttrs([]slog.Attr) slog.Handler { return p }

// WithGroup returns p.
func (p *partProc) WithGroup(string) slog.Handler { return p }

// inside counts the times in ts within [from, to].
func inside(ts []time.Time, from, to time.Time) int {
	n := 0
	for _, t := range ts {
		if !t.Before(from) && !t.After(to) {
			n++
		}
	}
	return n
}

// longestGapOf returns the longest time in [from, to] between two of the
// times ats (the edges count), and where it began.
func longestGapOf(ats []time.Time, from, to time.Time) (time.Duration, time.Time) {
	prev, at := from, from
	var gap time.Duration
	for _, t := range append(slices.Clip(ats), to) {
		if t.Before(from) {
			continue
		}
		if t.After(to) {
			t = to
		}
		if d := t.Sub(prev); d > gap {
			gap, at = d, prev
		}
		prev = t
	}
	return gap, at
}

func (p *partProc) issue(ctx context.Context, table string) {
	for ctx.Err() == nil {
		c, cancel := context.WithTimeout(ctx, partCallTimeout)
		id, err := p.keys.NextID(c, table)
		cancel()
		now := time.Now()
		p.mu.Lock()
		if err == nil {
			p.at = append(p.at, now)
			p.ids = append(p.ids, id)
		} else if ctx.Err() == nil {
			p.errAt = append(p.errAt, now)
			msg := err.Error()
			if p.errs[msg] == 0 {
				p.errOrd = append(p.errOrd, msg)
			}
			p.errs[msg]++
		}
		p.mu.Unlock()
		time.Sleep(partEvery)
	}
}

func (p *partProc) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ids)
}

// partResult is what the checker found in one case.
type partResult struct {
	target, fault string
	fenced, late  bool
	rounds        int
	stall         time.Duration // the test process's own longest stall during the untouched issuer's longest gap
	serverStall   time.Duration // the servers' longest stall then (a plain round trip of another client)
	keys          [2]int        // faulted, untouched
	dbKeys        [2]int        // a dbDefault target's rows keyed by the database: in all, during the fault
	dups          int
	dupEx         []string
	gap           time.Duration // the untouched issuer's longest gap
	gapAt         time.Duration // when it began, after the fault
	stoppedAfter  time.Duration // faulted: last key before healing, after the fault began; -1: none
	lateKeys      int           // faulted: keys stamped at or after the fault + TTL, before healing
	recovery      time.Duration // faulted: first key after healing, after healing; -1: none
	skipped       int64         // segment keys between the lowest and highest issued that nobody issued
	errors        []string      // the faulted issuer's errors, a few
	reached       string        // how the fault showed in the faulted issuer
	failures      []string      // setup errors and broken promises: duplicates, keys past the deadline
	missed        []string      // timing goals missed: the untouched issuer's pause, the recovery
	unshown       []string      // the fault not shown to reach the faulted issuer: the case was not played
}

func (r *partResult) failf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

// replay reports whether the short form plays the case again: it broke
// no promise, and the fault was not shown to reach the faulted issuer, or
// it missed a timing goal that fails the test (logged false).
func (r *partResult) replay(logged bool) bool {
	return len(r.failures) == 0 && (len(r.unshown) > 0 || !logged && len(r.missed) > 0)
}

// miss notes a timing goal missed: a pause or a late recovery.
func (r *partResult) miss(format string, args ...any) {
	r.missed = append(r.missed, fmt.Sprintf(format, args...))
}

func (r *partResult) summary() string {
	db := ""
	if r.dbKeys[0] > 0 {
		db = fmt.Sprintf(" + %d by the database (%d during the fault)", r.dbKeys[0], r.dbKeys[1])
	}
	return fmt.Sprintf("keys %d faulted + %d untouched%s, %d duplicates; untouched longest gap %s (at fault%+.2fs; test process stalled %s, servers %s); faulted stopped %s after the fault, recovered %s after healing, %d keys after its deadline; the fault reached it: %s; %d segment keys skipped; errors: %s",
		r.keys[0], r.keys[1], db, r.dups, r.gap.Round(time.Millisecond), r.gapAt.Seconds(), r.stall.Round(time.Millisecond), r.serverStall.Round(time.Millisecond), fmtDur(r.stoppedAfter), fmtDur(r.recovery), r.lateKeys, r.reached, r.skipped, strings.Join(r.errors, " | "))
}

func fmtDur(d time.Duration) string {
	if d < 0 {
		return "-"
	}
	return d.Round(time.Millisecond).String()
}

// run plays one case and checks it. It never ends the test: setup errors
// are failures of the case.
func (s *partServers) run(tg partTarget, f partFault) *partResult {
	r := &partResult{target: tg.name, fault: f.name, fenced: tg.fenced, late: f.late, rounds: 1, stoppedAfter: -1, recovery: -1}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	env, err := s.setup(ctx, tg)
	if env != nil {
		defer env.close()
	}
	if err != nil {
		r.failf("setup: %v", err)
		return r
	}
	a, b := env.procs[0], env.procs[1]
	table := sfPartTable
	if !tg.snowflake() {
		table = segPartTable
	}
	ictx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, p := range env.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.issue(ictx, table)
		}()
	}
	if env.direct != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ictx.Err() == nil {
				if _, err := env.direct.ExecContext(ictx, `INSERT INTO `+sfPartTable+` (note) VALUES ('db')`); err == nil {
					env.written = append(env.written, time.Now())
				}
				time.Sleep(partEvery)
			}
		}()
	}
	defer func() {
		stop()
		wg.Wait()
	}()
	// Both issue, for a while.
	ready := time.Now().Add(30 * time.Second)
	for a.count() == 0 || b.count() == 0 {
		if time.Now().After(ready) {
			r.failf("no first key within 30s: faulted %d keys (%s), untouched %d keys (%s)", a.count(), a.firstErrors(), b.count(), b.firstErrors())
			return r
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(partWarm)
	faultAt := time.Now()
	// First a witness of the faulted issuer's requests, ahead of the
	// fault's toxics on their way.
	witness := fmt.Sprintf(`{"name":"witness","type":%q,"stream":"upstream","attributes":{"proxy":%q}}`, witnessType, env.proxy.Name)
	for _, tx := range append([]string{witness}, f.toxics(tg.ttl)...) {
		if _, err := env.proxy.Toxics.AddToxicJson(strings.NewReader(tx)); err != nil {
			r.failf("add toxic %s: %v", tx, err)
			return r
		}
	}
	time.Sleep(time.Duration(f.lasts * float64(tg.ttl)))
	if g := a.keys.Segments(); g != nil && !tg.snowflake() && tg.link != "redis" {
		env.buffered = true
		for _, k := range g.Snapshot().Keys {
			if k.Loading || k.LoadErrors > 0 || k.LastLoad.After(faultAt) {
				env.buffered = false
			}
		}
	}
	env.proxy.Toxics.ResetToxics(context.Background())
	healAt := time.Now()
	// The faulted issuer issues again within a lease period; wait a little
	// longer to measure it.
	time.Sleep(tg.ttl + time.Second)
	end := time.Now() // before a call that is slow to end holds up the issuers' return
	stop()
	wg.Wait()

	s.check(r, tg, env, faultAt, healAt, end)
	return r
}

// reached checks that the fault reached the faulted issuer while it
// lasted or as it healed (in [faultAt, end]): a request it sent into the
// cut link (seen by the witness toxic, ahead of the fault's), a call that
// failed, a worker lease that ended, or a stall: a gap in its keys longer
// than the untouched issuer's around the same time (within partMaxGap of
// it) and the test process's own stall by more than partMaxGap. A
// blackhole shorter than the lease, by design, shows only the first: the
// issuer's heartbeat went into the cut link and its horizon carried it
// through. Nor does a short fault reach a segment issuer whose buffered
// segments last it (no load started, under way or failed meanwhile, as
// its generator's snapshot at the heal says): that is logged, not missed.
// A case the fault did not reach was not played: a goal missed,
// so the short form plays it again.
func (s *partServers) reached(r *partResult, env *partEnv, faultAt, end time.Time) {
	a, b := env.procs[0], env.procs[1]
	a.mu.Lock()
	errs, fences := inside(a.errAt, faultAt, end), inside(a.fences, faultAt, end)
	gap, at := longestGapOf(a.at, faultAt, end)
	a.mu.Unlock()
	b.mu.Lock()
	bGap, _ := longestGapOf(b.at, at.Add(-partMaxGap), at.Add(gap+partMaxGap))
	b.mu.Unlock()
	stall := max(bGap, s.stalls.within(at, at.Add(gap)))
	sent := witnessed(env.proxy.Name, faultAt, end)
	var how []string
	if sent > 0 {
		how = append(how, fmt.Sprintf("%d requests sent into the cut link", sent))
	}
	if errs > 0 {
		how = append(how, fmt.Sprintf("%d errors", errs))
	}
	if fences > 0 {
		how = append(how, fmt.Sprintf("%d leases ended", fences))
	}
	if gap-stall > partMaxGap {
		how = append(how, fmt.Sprintf("stalled %s from %+.2fs", gap.Round(time.Millisecond), at.Sub(faultAt).Seconds()))
	}
	if len(how) == 0 && env.buffered {
		r.reached = "nothing to reach: its buffered segments lasted the fault (no range loaded)"
		return
	}
	if len(how) == 0 {
		r.unshown = append(r.unshown, fmt.Sprintf("the fault did not reach the faulted issuer: no request into the cut link, no error, no lease ended, no stall (its longest gap %s from %+.2fs, the untouched issuer's then %s)",
			gap.Round(time.Millisecond), at.Sub(faultAt).Seconds(), bGap.Round(time.Millisecond)))
		r.reached = "-"
		return
	}
	r.reached = strings.Join(how, ", ")
}

// witnessType is the toxic type of witnessToxic.
const witnessType = "idsql_witness"

func init() {
	toxic.Register(witnessType, new(witnessToxic))
}

// witnessToxic passes everything on and notes when a chunk went through
// the proxy it names: the requests of the faulted issuer while the fault
// lasts.
type witnessToxic struct {
	Proxy string `json:"proxy"`
}

// Pipe passes the chunks on, noting each.
func (w *witnessToxic) Pipe(stub *toxic.ToxicStub) {
	for {
		select {
		case <-stub.Interrupt:
			return
		case c := <-stub.Input:
			if c == nil {
				stub.Close()
				return
			}
			witnessMu.Lock()
			witnessAt[w.Proxy] = append(witnessAt[w.Proxy], time.Now())
			witnessMu.Unlock()
			stub.Output <- c
		}
	}
}

var (
	witnessMu sync.Mutex
	witnessAt = map[string][]time.Time{} // proxy name -> chunks seen
)

// witnessed counts the chunks the witness saw on proxy within [from, to].
func witnessed(proxy string, from, to time.Time) int {
	witnessMu.Lock()
	defer witnessMu.Unlock()
	return inside(witnessAt[proxy], from, to)
}

// check reads what both issuers issued and fills r.
func (s *partServers) check(r *partResult, tg partTarget, env *partEnv, faultAt, healAt, end time.Time) {
	a, b := env.procs[0], env.procs[1]
	r.keys = [2]int{len(a.ids), len(b.ids)}
	issued := map[string][]int64{a.name: a.ids, b.name: b.ids}
	if env.direct != nil {
		byDB, err := tableKeys(env.direct, sfPartTable)
		if err != nil {
			r.failf("the database's keys: %v", err)
		}
		issued["the database"] = byDB
		during := 0
		for _, at := range env.written {
			if at.After(faultAt) && at.Before(healAt) {
				during++
			}
		}
		r.dbKeys = [2]int{len(byDB), during}
		if during == 0 {
			r.failf("the database's own writer, whose connection the fault does not cut, inserted no row during the fault (%d rows in all)", len(byDB))
		}
	}
	seen := map[int64]string{}
	for _, who := range slices.Sorted(maps.Keys(issued)) {
		for _, id := range issued[who] {
			if by, ok := seen[id]; ok {
				r.dups++
				if len(r.dupEx) < 3 {
					r.dupEx = append(r.dupEx, fmt.Sprintf("%d by %s and %s", id, by, who))
				}
			}
			seen[id] = who
		}
	}
	if r.dups > 0 {
		r.failf("%d keys issued twice, e.g. %s", r.dups, strings.Join(r.dupEx, "; "))
	}

	// The untouched issuer's longest gap, from the fault to the end.
	from := faultAt.Add(-partWarm)
	prev := from
	for _, at := range b.at {
		if at.Before(from) {
			continue
		}
		if g := at.Sub(prev); g > r.gap {
			r.gap, r.gapAt = g, prev.Sub(faultAt)
		}
		prev = at
	}
	if g := end.Sub(prev); g > r.gap {
		r.gap, r.gapAt = g, prev.Sub(faultAt)
	}
	// A gap the whole test process had too (a loaded machine that did not
	// run it) is not the fault's doing.
	// A server that did not answer a plain round trip (a write to a
	// table of its own on the databases) from another client either (a
	// server busy with other tests) is not the fault's doing; a lock the
	// faulted issuer holds is.
	gapFrom := faultAt.Add(r.gapAt)
	gapTo := gapFrom.Add(r.gap)
	r.stall = s.stalls.within(gapFrom, gapTo)
	links := []string{tg.link}
	if tg.link != tg.db {
		links = append(links, tg.db)
	}
	for _, l := range links {
		r.serverStall = max(r.serverStall, s.servers[l].within(gapFrom, gapTo))
	}
	if excuse := max(r.stall, r.serverStall); r.gap-excuse > partMaxGap {
		r.miss("the untouched issuer paused %s (from %+.2fs after the fault; meanwhile the test process stalled %s, the servers %s), more than %s",
			r.gap.Round(time.Millisecond), r.gapAt.Seconds(), r.stall.Round(time.Millisecond), r.serverStall.Round(time.Millisecond), partMaxGap)
	}

	// The faulted issuer: when it stopped, keys past its deadline, and
	// its first key after healing.
	layout, _ := env.cfg.SnowflakeLayout()
	deadline := faultAt.Add(tg.ttl)
	for i, at := range a.at {
		switch {
		case at.Before(faultAt):
		case at.Before(healAt):
			r.stoppedAfter = at.Sub(faultAt)
			if tg.snowflake() && !layout.Decompose(a.ids[i]).Time.Before(deadline) {
				r.lateKeys++
			}
		case r.recovery < 0:
			r.recovery = at.Sub(healAt)
		}
	}
	if r.fenced && r.late && r.lateKeys > 0 {
		r.failf("the faulted issuer issued %d keys stamped after the fault plus the lease (%s), before healing: not fenced", r.lateKeys, tg.ttl)
	}
	if r.recovery < 0 || r.recovery > tg.ttl {
		r.miss("the faulted issuer did not issue within one lease period (%s) after healing (first key after %s); its errors: %s", tg.ttl, fmtDur(r.recovery), a.firstErrors())
	}
	r.errors = a.errorSample(3)
	s.reached(r, env, faultAt, end)

	if !tg.snowflake() && len(seen) > 0 {
		lo, hi := int64(1<<62), int64(0)
		for id := range seen {
			lo, hi = min(lo, id), max(hi, id)
		}
		r.skipped = hi - lo + 1 - int64(len(seen))
	}
}

// tableKeys reads every key of table.
func tableKeys(db *sql.DB, table string) ([]int64, error) {
	rows, err := db.Query(`SELECT id FROM ` + table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

func (p *partProc) firstErrors() string {
	s := p.errorSample(3)
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, " | ")
}

// errorSample returns up to n distinct errors, with their counts.
func (p *partProc) errorSample(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, e := range p.errOrd {
		if len(out) == n {
			break
		}
		out = append(out, fmt.Sprintf("%s (×%d)", e, p.errs[e]))
	}
	return out
}

// partEnv is one case's world: a configuration, the proxy on the faulted
// issuer's link, and the two issuers.
type partEnv struct {
	cfg   *keyset.Config
	proxy *toxiproxy.Proxy
	procs [2]*partProc // faulted, untouched
	drop  func()
	// direct is a connection the fault does not cut, for the database's
	// own writer of a dbDefault target; nil for others.
	direct *sql.DB
	// written holds when each of that writer's rows was inserted.
	written []time.Time
	// buffered: the faulted issuer of a segment target in memory needed
	// no range while the fault lasted (no load started or under way, none
	// failed): its buffered segments carried it through, so the fault had
	// nothing to reach.
	buffered bool
}

func (e *partEnv) close() {
	for _, p := range e.procs {
		if p == nil {
			continue
		}
		if p.keys != nil {
			done := make(chan struct{})
			go func() {
				p.keys.Close()
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
			}
		}
		p.db.Close()
	}
	if e.direct != nil {
		e.direct.Close()
	}
	if e.proxy != nil {
		e.proxy.Stop()
	}
	if e.drop != nil {
		e.drop()
	}
}

// setup makes a case's database (a schema or a database of its own), its
// configuration, the proxy and both issuers.
func (s *partServers) setup(ctx context.Context, tg partTarget) (*partEnv, error) {
	s.mu.Lock()
	s.seq++
	name := fmt.Sprintf("%s_%d", s.namePrefix, s.seq)
	s.mu.Unlock()
	env := &partEnv{}

	var dsn, driver, dbAddr string
	switch tg.db {
	case "postgres":
		driver = "postgres"
		if _, err := s.pgAdmin.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
			return env, fmt.Errorf("create schema: %w", err)
		}
		env.drop = func() { s.pgAdmin.Exec(`DROP SCHEMA ` + name + ` CASCADE`) }
		u, err := url.Parse(s.pg)
		if err != nil {
			return env, err
		}
		q := u.Query()
		q.Set("search_path", name)
		u.RawQuery = q.Encode()
		dsn, dbAddr = u.String(), u.Host
	case "mysql":
		driver = "mysql"
		if _, err := s.myAdmin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
			return env, fmt.Errorf("create database: %w", err)
		}
		env.drop = func() { s.myAdmin.Exec("DROP DATABASE IF EXISTS `" + name + "`") }
		c, err := mysql.ParseDSN(s.my)
		if err != nil {
			return env, err
		}
		c.DBName, c.ParseTime = name, true
		dsn, dbAddr = c.FormatDSN(), c.Addr
	}

	upstream := map[string]string{"postgres": dbAddr, "mysql": dbAddr, "redis": s.redis}[tg.link]
	switch tg.link {
	case "zookeeper":
		upstream = s.zk[0]
	case "etcd":
		upstream = s.etcd[0]
	}
	env.proxy = toxiproxy.NewProxy(s.toxi, name, "127.0.0.1:0", upstream)
	if err := env.proxy.Start(); err != nil {
		return env, fmt.Errorf("start the proxy to %s: %w", upstream, err)
	}

	cfg := &keyset.Config{Namespace: name, Tables: map[string]keyset.TableConfig{}}
	if tg.snowflake() {
		cfg.Tables[sfPartTable] = tg.table
		cfg.Holder = tg.holder
		cfg.Holder.SessionTimeout = tg.ttl
		cfg.Holder.Heartbeat = partHeartbeat
		cfg.Holder.AcceptLazyCommits = true // the test MariaDB flushes lazily; no crash is played here
		switch tg.holder.Kind {
		case "zookeeper":
			cfg.Holder.TickTime = 500 * time.Millisecond
		case "local":
			cfg.Holder.SessionTimeout = 0
			cfg.Holder.Workers = map[string]int64{"part-a": 1, "part-b": 2}
		}
	} else {
		cfg.Tables[segPartTable] = tg.table
		cfg.Redis.Addr = s.redis
	}
	admin, err := sql.Open(driver, dsn)
	if err != nil {
		return env, err
	}
	if tg.dbDefault {
		env.direct = admin
		cfg.Holder.DatabaseWorkers = 1
		if _, err := admin.ExecContext(ctx, `CREATE TABLE `+sfPartTable+` (id BIGINT PRIMARY KEY, note VARCHAR(8) NOT NULL)`); err != nil {
			return env, err
		}
		err = idsql.MigrateWith(ctx, admin, cfg, idsql.MigrateOptions{DBDefaults: true})
	} else {
		err = idsql.Migrate(ctx, admin, cfg)
		admin.Close()
	}
	if err != nil {
		return env, fmt.Errorf("migrate: %w", err)
	}
	env.cfg = cfg

	for i, who := range []string{"part-a", "part-b"} {
		pc := *cfg
		pc.Holder.CacheDir = filepath.Join(s.dir, name+"-"+who)
		pdsn := dsn
		if i == 0 {
			switch tg.link {
			case "zookeeper":
				pc.Holder.Servers = []string{env.proxy.Listen}
			case "etcd":
				pc.Holder.Endpoints = []string{env.proxy.Listen}
			case "redis":
				pc.Redis.Addr = env.proxy.Listen
			default:
				pdsn = strings.Replace(dsn, dbAddr, env.proxy.Listen, 1)
			}
		} else {
			switch tg.link {
			case "zookeeper":
				pc.Holder.Servers = s.zk
			case "etcd":
				pc.Holder.Endpoints = s.etcd
			}
		}
		db, err := sql.Open(driver, pdsn)
		if err != nil {
			return env, err
		}
		p := &partProc{name: who, db: db, errs: map[string]int{}}
		env.procs[i] = p
		reg := registry.New(db, registry.Settings{Heartbeat: partHeartbeat, AcceptLazyCommits: true})
		inst := holder.Instance{ID: who, Host: "host-" + who, PID: os.Getpid()}
		p.keys, err = keyset.NewKeys(&pc, keyset.KeysOptions{DB: db, Registry: reg, Instance: inst, Logger: slog.New(p)})
		if err != nil {
			return env, fmt.Errorf("%s: %w", who, err)
		}
	}
	return env, nil
}

// mergeResults sums the rounds of one case: keys, duplicates and skipped
// keys added up, gaps and times the worst of any round.
func mergeResults(rs []*partResult) *partResult {
	m := *rs[0]
	m.failures, m.missed, m.unshown, m.rounds = nil, nil, nil, len(rs)
	for _, r := range rs[1:] {
		m.keys[0] += r.keys[0]
		m.keys[1] += r.keys[1]
		m.dups += r.dups
		m.lateKeys += r.lateKeys
		m.skipped += r.skipped
		if r.gap-max(r.stall, r.serverStall) > m.gap-max(m.stall, m.serverStall) {
			m.gap, m.stall, m.serverStall = r.gap, r.stall, r.serverStall
		}
		m.stoppedAfter = max(m.stoppedAfter, r.stoppedAfter)
		if r.recovery < 0 || m.recovery >= 0 && r.recovery > m.recovery {
			m.recovery = r.recovery
		}
	}
	for _, r := range rs {
		m.failures = append(m.failures, r.failures...)
		m.missed = append(m.missed, r.missed...)
		m.unshown = append(m.unshown, r.unshown...)
	}
	return &m
}

// partTable is the Markdown table of RELIABILITY.md: one row per case.
func partTable(rows []*partResult) string {
	var b strings.Builder
	b.WriteString("| target | fault | keys (faulted + untouched) | duplicates | untouched: longest gap (stall of the test process / servers) | faulted: last key after fault | keys past deadline | recovery after heal | segment keys skipped | rounds / goals missed / failures |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		ok := fmt.Sprintf("%d / %d / %d", r.rounds, len(r.missed)+len(r.unshown), len(r.failures))
		if len(r.failures) > 0 {
			ok = "**" + ok + "**"
		}
		skipped := "-"
		if strings.HasPrefix(r.target, "segment") || strings.HasPrefix(r.target, "redis") {
			skipped = fmt.Sprint(r.skipped)
		}
		fmt.Fprintf(&b, "| %s | %s | %d + %d | %d | %s | %s | %d | %s | %s | %s |\n", r.target, r.fault, r.keys[0], r.keys[1], r.dups,
			fmtDur(r.gap)+" ("+fmtDur(r.stall)+" / "+fmtDur(r.serverStall)+")", fmtDur(r.stoppedAfter), r.lateKeys, fmtDur(r.recovery), skipped, ok)
	}
	return b.String()
}

func maxRounds(rows []*partResult) int {
	n := 0
	for _, r := range rows {
		n = max(n, r.rounds)
	}
	return n
}

// stallMeter notes the time every partEvery in a goroutine of its own, so
// that a gap of an issuer can be told from a stall of the whole test
// process (a loaded machine, the garbage collector's pauses) or of a
// server: with a probe (a round trip that takes no lock: SELECT 1, PING,
// a read of ZooKeeper's root, a read of one etcd key), a tick is noted only once the server
// answered.
type stallMeter struct {
	mu    sync.Mutex
	ticks []time.Time
}

func startStallMeter(t *testing.T, probe func(context.Context) error) *stallMeter {
	m := &stallMeter{}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() {
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(partEvery):
			}
			if probe != nil {
				pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				err := probe(pctx)
				cancel()
				if err != nil {
					continue
				}
			}
			now := time.Now()
			m.mu.Lock()
			m.ticks = append(m.ticks, now)
			m.mu.Unlock()
		}
	}()
	return m
}

// within returns the longest gap between two ticks, beyond the meter's own
// period, that overlaps [from, to].
func (m *stallMeter) within(from, to time.Time) time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	i := sort.Search(len(m.ticks), func(i int) bool { return !m.ticks[i].Before(from) })
	var longest time.Duration
	for i = max(i, 1); i < len(m.ticks) && !m.ticks[i-1].After(to); i++ {
		longest = max(longest, m.ticks[i].Sub(m.ticks[i-1])-partEvery)
	}
	return longest
}

// serverMeters starts a stall meter on each server, with a client of its
// own.
func (s *partServers) serverMeters(t *testing.T) map[string]*stallMeter {
	zc, _, err := zk.Connect(s.zk, 10*time.Second, zk.WithLogger(quietZK{}))
	if err != nil {
		t.Fatalf("connect to ZooKeeper: %v", err)
	}
	t.Cleanup(zc.Close)
	rc := redis.NewClient(&redis.Options{Addr: s.redis})
	t.Cleanup(func() { rc.Close() })
	ec := etcdtest.Client(t, s.etcd)
	// The etcd holders' keys, under the cases' namespaces.
	t.Cleanup(func() { ec.Delete(context.Background(), "/idsql/"+s.namePrefix+"_", clientv3.WithPrefix()) })
	// On the databases, a committed write to a table of the meter's own:
	// the path a heartbeat takes, without its locks.
	ctx := context.Background()
	meter := s.namePrefix + "_meter"
	write := func(db *sql.DB, create, drop string) func(context.Context) error {
		for _, q := range []string{create, "CREATE TABLE " + meter + ".m (id int PRIMARY KEY, n bigint NOT NULL)", "INSERT INTO " + meter + ".m VALUES (1, 0)"} {
			if _, err := db.ExecContext(ctx, q); err != nil {
				t.Fatalf("stall meter: %s: %v", q, err)
			}
		}
		t.Cleanup(func() { db.Exec(drop) })
		return func(ctx context.Context) error {
			_, err := db.ExecContext(ctx, "UPDATE "+meter+".m SET n = n + 1 WHERE id = 1")
			return err
		}
	}
	return map[string]*stallMeter{
		"postgres":  startStallMeter(t, write(s.pgAdmin, "CREATE SCHEMA "+meter, "DROP SCHEMA "+meter+" CASCADE")),
		"mysql":     startStallMeter(t, write(s.myAdmin, "CREATE DATABASE "+meter, "DROP DATABASE "+meter)),
		"redis":     startStallMeter(t, func(ctx context.Context) error { return rc.Ping(ctx).Err() }),
		"zookeeper": startStallMeter(t, func(context.Context) error { _, _, err := zc.Exists("/"); return err }),
		"etcd":      startStallMeter(t, func(ctx context.Context) error { _, err := ec.Get(ctx, "/idsql/"+meter); return err }),
	}
}

// quietZK drops go-zookeeper's log lines.
type quietZK struct{}

func (quietZK) Printf(string, ...any) {}
