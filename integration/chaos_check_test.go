//go:build linux

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyform"
)

// chaosData is what the processes stored, loaded after they all stopped.
type chaosData struct {
	rows   []sfRow          // every row of the snowflake table
	byProc map[string][]int // row indexes per process, in key order
	seg    map[int64]int    // segment keys: rows per key
	sfIDs  map[int64]int    // snowflake keys: rows per key
	dups   map[string]dupStats
	leases map[int64][]registry.Record // worker ID -> its leases, by IDsAfter
}

type sfRow struct {
	id     int64
	proc   string
	pid    int
	worker int64
	tick   time.Time
	seq    int64
}

type dupStats struct {
	keys     int      // keys stored more than once
	extra    int      // rows beyond the first of each such key
	examples []string // a few, decoded
}

// loadChaosData reads the chaos tables' rows; with uuid7 the leased
// table's keys are UUIDs, read as the keys they carry.
func loadChaosData(t *testing.T, dsn string, procs []*chaosProc, uuid7 bool) *chaosData {
	t.Helper()
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d := &chaosData{byProc: map[string][]int{}, seg: map[int64]int{}, sfIDs: map[int64]int{}, dups: map[string]dupStats{}}

	uuids, err := keyform.NewUUIDKeys(chaosLayout)
	if err != nil {
		t.Fatal(err)
	}
	// keyOf reads a stored key of table: a decimal, or a uuid7 table's
	// UUID as the key it carries.
	keyOf := func(table, text string) int64 {
		t.Helper()
		var id int64
		var err error
		if uuid7 && table == sfTable {
			var b [16]byte
			if b, err = keyform.ParseUUID(text); err == nil {
				id, err = uuids.Key(b)
			}
		} else {
			id, err = strconv.ParseInt(text, 10, 64)
		}
		if err != nil {
			t.Fatalf("%s: stored key %s: %v", table, text, err)
		}
		return id
	}
	rows, err := db.QueryContext(ctx, `SELECT id::text, proc, pid FROM `+sfTable+` ORDER BY id`)
	if err != nil {
		t.Fatalf("read %s: %v", sfTable, err)
	}
	for rows.Next() {
		var r sfRow
		var id string
		if err := rows.Scan(&id, &r.proc, &r.pid); err != nil {
			t.Fatal(err)
		}
		r.id = keyOf(sfTable, id)
		p := chaosLayout.Decompose(r.id)
		r.worker, r.tick, r.seq = p.Worker, p.Time, p.Sequence
		d.byProc[r.proc] = append(d.byProc[r.proc], len(d.rows))
		d.rows = append(d.rows, r)
		d.sfIDs[r.id]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	rows, err = db.QueryContext(ctx, `SELECT id FROM `+segTable)
	if err != nil {
		t.Fatalf("read %s: %v", segTable, err)
	}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		d.seg[id]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()

	for _, table := range []string{sfTable, segTable} {
		var st dupStats
		q := `SELECT id::text, count(*), string_agg(proc, ',' ORDER BY proc) FROM ` + table + `
			GROUP BY id HAVING count(*) > 1 ORDER BY id`
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("count duplicates in %s: %v", table, err)
		}
		for rows.Next() {
			var text string
			var n int
			var procs string
			if err := rows.Scan(&text, &n, &procs); err != nil {
				t.Fatal(err)
			}
			id := keyOf(table, text)
			st.keys++
			st.extra += n - 1
			if len(st.examples) < 5 {
				st.examples = append(st.examples, describeKey(table, id, n, procs))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		d.dups[table] = st
	}

	recs, err := registry.New(db, registry.Settings{}).Leases(ctx, chaosNamespace, false)
	if err != nil {
		t.Fatalf("read the worker registry: %v", err)
	}
	d.leases = map[int64][]registry.Record{}
	for _, r := range recs {
		d.leases[r.WorkerID] = append(d.leases[r.WorkerID], r)
	}
	for _, ls := range d.leases {
		sort.Slice(ls, func(i, j int) bool {
			if !ls[i].IDsAfter.Equal(ls[j].IDsAfter) {
				return ls[i].IDsAfter.Before(ls[j].IDsAfter)
			}
			return ls[i].LeaseID < ls[j].LeaseID
		})
	}
	return d
}

// leaseOf returns the lease that lookup names for a key of worker at tick:
// the one with the greatest IDsAfter before tick (registry.Find's rule).
func (d *chaosData) leaseOf(worker int64, tick time.Time) (registry.Record, bool) {
	ls := d.leases[worker]
	i := sort.Search(len(ls), func(i int) bool { return !ls[i].IDsAfter.Before(tick) })
	if i == 0 {
		return registry.Record{}, false
	}
	return ls[i-1], true
}

func describeKey(table string, id int64, n int, procs string) string {
	if table != sfTable {
		return fmt.Sprintf("%d ×%d by %s", id, n, procs)
	}
	p := chaosLayout.Decompose(id)
	return fmt.Sprintf("%d ×%d (worker %d, time %s, sequence %d) by %s", id, n, p.Worker, fmtTick(p.Time), p.Sequence, procs)
}

func fmtTick(t time.Time) string { return t.UTC().Format("15:04:05.000") }

// checkStored checks the promises that hold for every run: no key stored
// twice, every acknowledged key stored, and never two processes issuing
// under one worker ID in the same tick.
func (d *chaosData) checkStored(t *testing.T, procs []*chaosProc) bool {
	ok := true
	for _, table := range []string{sfTable, segTable} {
		st := d.dups[table]
		if st.keys > 0 {
			t.Errorf("%s: %d keys stored more than once (%d extra rows), e.g.\n\t%s", table, st.keys, st.extra, strings.Join(st.examples, "\n\t"))
			ok = false
		} else {
			t.Logf("%s: no key stored twice", table)
		}
	}
	missing, acked := 0, 0
	var examples []string
	for _, p := range procs {
		for _, set := range []struct {
			table string
			keys  []int64
			in    map[int64]int
		}{{sfTable, p.sf, d.sfIDs}, {segTable, p.seg, d.seg}} {
			for _, id := range set.keys {
				acked++
				if set.in[id] == 0 {
					missing++
					if len(examples) < 5 {
						examples = append(examples, fmt.Sprintf("%s %d by %s", set.table, id, p.name))
					}
				}
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d acknowledged keys are not stored, e.g. %s", missing, acked, strings.Join(examples, "; "))
		ok = false
	} else {
		t.Logf("all %d acknowledged keys are stored", acked)
	}

	// One tick of one worker ID belongs to one process: a lease starts
	// after the last tick of the one before.
	type wt struct {
		worker int64
		tick   int64
	}
	owner := map[wt]string{}
	shared := map[wt]bool{}
	var sharedKeys int
	examples = examples[:0]
	for _, r := range d.rows {
		k := wt{r.worker, r.tick.UnixNano()}
		o, seen := owner[k]
		switch {
		case !seen:
			owner[k] = r.proc
		case o != r.proc:
			sharedKeys++
			if !shared[k] && len(examples) < 5 {
				examples = append(examples, fmt.Sprintf("worker %d at %s: %s and %s", r.worker, fmtTick(r.tick), o, r.proc))
			}
			shared[k] = true
		}
	}
	if len(shared) > 0 {
		t.Errorf("%s: %d ticks of a worker ID were used by two processes (%d keys), e.g.\n\t%s", sfTable, len(shared), sharedKeys, strings.Join(examples, "\n\t"))
		ok = false
	} else {
		t.Logf("%s: no tick of a worker ID used by two processes", sfTable)
	}

	// Every key is explained by a lease of the process that issued it:
	// the lease lookup names (the latest one of the key's worker ID that
	// started before the key's tick) is that process's. A key issued under
	// a worker ID after it was handed to another process is named as the
	// other's; a key issued before its lease was recorded has no lease.
	names := map[int]string{}
	for _, p := range procs {
		names[p.cmd.Process.Pid] = p.name
	}
	var foreign, unexplained int
	perProc := map[string]int{}
	var fEx, uEx []string
	for _, r := range d.rows {
		l, found := d.leaseOf(r.worker, r.tick)
		switch {
		case !found:
			unexplained++
			if len(uEx) < 5 {
				uEx = append(uEx, describeKey(sfTable, r.id, d.sfIDs[r.id], r.proc))
			}
		case l.PID != r.pid:
			foreign++
			perProc[r.proc+" under "+nameOr(names, l.PID)+"'s lease"]++
			if len(fEx) < 5 {
				fEx = append(fEx, fmt.Sprintf("%s; lookup names lease %d of %s (pid %d, ids after %s)",
					describeKey(sfTable, r.id, d.sfIDs[r.id], r.proc), l.LeaseID, nameOr(names, l.PID), l.PID, fmtTick(l.IDsAfter)))
			}
		}
	}
	if unexplained > 0 {
		t.Errorf("%s: %d keys have no lease in idsql_workers that started before them (recorded before used: issue 11), e.g.\n\t%s",
			sfTable, unexplained, strings.Join(uEx, "\n\t"))
		ok = false
	}
	if foreign > 0 {
		var by []string
		for k, n := range perProc {
			by = append(by, fmt.Sprintf("%s: %d", k, n))
		}
		sort.Strings(by)
		t.Errorf("%s: %d keys were issued under a worker ID while lookup names another process's lease (%s), e.g.\n\t%s",
			sfTable, foreign, strings.Join(by, ", "), strings.Join(fEx, "\n\t"))
		ok = false
	}
	if unexplained == 0 && foreign == 0 {
		t.Logf("%s: every key is explained by a lease of the process that issued it (%d leases recorded)", sfTable, d.leaseCount())
	}
	return ok
}

func (d *chaosData) leaseCount() int {
	n := 0
	for _, ls := range d.leases {
		n += len(ls)
	}
	return n
}

func nameOr(names map[int]string, pid int) string {
	if n, ok := names[pid]; ok {
		return n
	}
	return "pid " + strconv.Itoa(pid)
}

// report logs, per process, what it was and what it issued.
func (d *chaosData) report(t *testing.T, procs []*chaosProc) {
	var sfAcked, segAcked int
	var b strings.Builder
	fmt.Fprintf(&b, "%-8s %-11s %-8s %9s %9s %9s  %-16s %s\n", "process", "identity", "clock", "sf acked", "sf rows", "seg acked", "workers", "end")
	for _, p := range procs {
		sfAcked += len(p.sf)
		segAcked += len(p.seg)
		end := "killed"
		if p.killed.IsZero() {
			end = fmt.Sprintf("exited by itself: %v", p.waitErr)
		}
		ws := fmt.Sprint(d.workersOf(p.name))
		fmt.Fprintf(&b, "%-8s %-11s %-8s %9d %9d %9d  %-16s %s\n", p.name, p.identity, p.clockOffset(),
			len(p.sf), d.count(p.name), len(p.seg), ws, end)
	}
	t.Logf("%d processes; %d snowflake rows, %d segment rows; acknowledged %d snowflake and %d segment keys\n%s",
		len(procs), len(d.rows), sumValues(d.seg), sfAcked, segAcked, b.String())
}

func sumValues(m map[int64]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// count returns how many snowflake rows proc stored.
func (d *chaosData) count(proc string) int { return len(d.byProc[proc]) }

// workersOf returns the worker IDs proc issued under, in the order it
// first used them.
func (d *chaosData) workersOf(proc string) []int64 {
	first := map[int64]time.Time{}
	for _, i := range d.byProc[proc] {
		r := d.rows[i]
		if f, ok := first[r.worker]; !ok || r.tick.Before(f) {
			first[r.worker] = r.tick
		}
	}
	ws := make([]int64, 0, len(first))
	for w := range first {
		ws = append(ws, w)
	}
	sort.Slice(ws, func(i, j int) bool { return first[ws[i]].Before(first[ws[j]]) })
	return ws
}

// span returns the first and last tick of proc's keys under worker, and
// how many there are.
func (d *chaosData) span(proc string, worker int64) (first, last time.Time, n int) {
	for _, i := range d.byProc[proc] {
		r := d.rows[i]
		if r.worker != worker {
			continue
		}
		if n == 0 || r.tick.Before(first) {
			first = r.tick
		}
		if n == 0 || r.tick.After(last) {
			last = r.tick
		}
		n++
	}
	return first, last, n
}

// first returns the first tick of proc's keys under worker.
func (d *chaosData) first(proc string, worker int64) time.Time {
	f, _, _ := d.span(proc, worker)
	return f
}

// since returns how many keys proc issued with a tick after t, and under
// which worker IDs.
func (d *chaosData) since(proc string, t time.Time) (int, []int64) {
	n := 0
	seen := map[int64]bool{}
	var ws []int64
	for _, i := range d.byProc[proc] {
		r := d.rows[i]
		if r.tick.After(t) {
			n++
			if !seen[r.worker] {
				seen[r.worker] = true
				ws = append(ws, r.worker)
			}
		}
	}
	return n, ws
}

// inside counts proc's keys under worker with a tick in [from, to].
func (d *chaosData) inside(proc string, worker int64, from, to time.Time) (int, []string) {
	n := 0
	var ex []string
	for _, i := range d.byProc[proc] {
		r := d.rows[i]
		if r.worker == worker && !r.tick.Before(from) && !r.tick.After(to) {
			n++
			if len(ex) < 3 {
				ex = append(ex, describeKey(sfTable, r.id, d.sfIDs[r.id], r.proc))
			}
		}
	}
	return n, ex
}

// atOrBefore counts proc's keys under worker with a tick at or before t.
func (d *chaosData) atOrBefore(proc string, worker int64, t time.Time) (int, []string) {
	return d.inside(proc, worker, time.Time{}, t)
}

// lastBefore returns the last tick under worker, before t (wall clock), of
// the processes in procs, and the process that issued it.
func (d *chaosData) lastBefore(worker int64, procs map[string]bool, t time.Time) (time.Time, string, bool) {
	var last time.Time
	var by string
	found := false
	for _, r := range d.rows {
		if r.worker == worker && procs[r.proc] && r.tick.Before(t) && (!found || r.tick.After(last)) {
			last, by, found = r.tick, r.proc, true
		}
	}
	return last, by, found
}

// sharedWorkers returns the worker IDs both a and b issued keys under.
func (d *chaosData) sharedWorkers(a, b string) []int64 {
	in := map[int64]bool{}
	for _, w := range d.workersOf(a) {
		in[w] = true
	}
	var out []int64
	for _, w := range d.workersOf(b) {
		if in[w] {
			out = append(out, w)
		}
	}
	return out
}

// usersOf returns the processes other than except that issued keys under
// worker with a tick in (from, to].
func (d *chaosData) usersOf(worker int64, from, to time.Time, except string) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range d.rows {
		if r.worker == worker && r.proc != except && r.tick.After(from) && !r.tick.After(to) && !seen[r.proc] {
			seen[r.proc] = true
			out = append(out, r.proc)
		}
	}
	sort.Strings(out)
	return out
}
