//go:build linux

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// A sentry watches, while a fault test runs, the processes no fault
// touches. When one prints no key for sentryQuiet while its control printed
// one within the last sentryQuiet/5, it captures what the quiet process
// waits on at that moment: its goroutines (chaosproc dumps them on
// SIGUSR2) and the server's view (the backends that wait or hold a
// transaction open, and who blocks whom). The captures go to the test log
// when the test ends, so a failed bound names a cause.
type sentry struct {
	t       *testing.T
	control func() *chaosProc   // the control now (nil: none yet)
	watched func() []*chaosProc // the untouched, running processes now
	server  func(ctx context.Context, who string) string

	stop chan struct{}
	done sync.WaitGroup

	mu       sync.Mutex
	last     map[*chaosProc]time.Time // when its output last grew
	size     map[*chaosProc]int       // keys seen so far
	logRead  map[*chaosProc]int       // bytes of its log looked at
	captured map[*chaosProc]time.Time // its last capture
	captures []string
}

// slowHeartbeatLine is what the registry logs while a lease's heartbeat
// runs longer than a heartbeat: the sentry captures at once, while the
// heartbeat still waits, whatever the control does.
const slowHeartbeatLine = "a heartbeat to idsql_workers is still running"

// sentryQuiet is how long an untouched process may print nothing, while
// its control prints, before the sentry captures what it waits on. It is
// the bound an untouched process's gap is held to beyond its control's.
const sentryQuiet = 500 * time.Millisecond

// watchStalls starts a sentry; it stops and logs its captures when the
// test ends. server, when not nil, describes the server's side.
func watchStalls(t *testing.T, control func() *chaosProc, watched func() []*chaosProc, server func(ctx context.Context, who string) string) *sentry {
	s := &sentry{t: t, control: control, watched: watched, server: server, stop: make(chan struct{}),
		last: map[*chaosProc]time.Time{}, size: map[*chaosProc]int{}, logRead: map[*chaosProc]int{},
		captured: map[*chaosProc]time.Time{}}
	s.done.Add(1)
	go s.run()
	t.Cleanup(s.close)
	return s
}

func (s *sentry) run() {
	defer s.done.Done()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case now := <-tick.C:
			s.look(now)
		}
	}
}

// look notes whose output grew and captures the quiet ones.
func (s *sentry) look(now time.Time) {
	ctl := s.control()
	if ctl == nil {
		return
	}
	procs := append(s.watched(), ctl)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range procs {
		_ = p.scan()
		n, m := p.counts()
		if n+m > s.size[p] || s.last[p].IsZero() {
			s.size[p], s.last[p] = n+m, now
		}
	}
	// the control is quiet too: the machine or a shared server stalled
	controlQuiet := now.Sub(s.last[ctl]) > sentryQuiet/5
	for _, p := range procs[:len(procs)-1] {
		if now.Sub(s.captured[p]) < 3*time.Second || !p.alive() || p.isStopped() {
			continue
		}
		var why string
		if line := s.newLine(p, slowHeartbeatLine); line != "" {
			why = "stall: " + p.name + " logged a slow heartbeat (" + line + ")"
		} else if quiet := now.Sub(s.last[p]); quiet >= sentryQuiet && !controlQuiet {
			why = fmt.Sprintf("stall: %s printed no key for %s while its control printed", p.name, quiet.Round(time.Millisecond))
		} else {
			continue
		}
		s.captured[p] = now
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			c := s.capture(p, now, why)
			s.mu.Lock()
			s.captures = append(s.captures, c)
			s.mu.Unlock()
		}()
	}
}

// newLine returns the last line of p's log, written since the last call,
// that contains what; "" when none.
func (s *sentry) newLine(p *chaosProc, what string) string {
	b, err := os.ReadFile(p.logPath)
	if err != nil || len(b) <= s.logRead[p] {
		return ""
	}
	fresh := string(b[s.logRead[p]:])
	end := strings.LastIndexByte(fresh, '\n')
	if end < 0 {
		return "" // a line still being written
	}
	s.logRead[p] += end + 1
	var found string
	for _, l := range strings.Split(fresh[:end], "\n") {
		if strings.Contains(l, what) {
			found = strings.TrimSpace(l)
		}
	}
	return found
}

// capture describes what p waits on, at at, for the reason why.
func (s *sentry) capture(p *chaosProc, at time.Time, why string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s at %s: what it waited on\n", why, fmtTick(at))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var server string
	var wg sync.WaitGroup
	if s.server != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			server = s.server(ctx, p.name)
		}()
	}
	machine := machineView()
	b.WriteString(p.stacks(2 * time.Second))
	b.WriteString(p.recentLog(at.Add(-3*time.Second), 12))
	wg.Wait()
	if server != "" {
		b.WriteString("server: " + server + "\n")
	}
	b.WriteString("machine: " + machine + "\n")
	return b.String()
}

// machineView describes who has or wants the CPU now: the threads the
// kernel counts runnable (state R), by process, with each process's
// nice value and scheduling group (autogroup: the kernel shares the CPU
// between groups first, then by nice value inside a group), and the CPU
// pressure of the last ten seconds.
func machineView() string {
	var b strings.Builder
	if psi, err := os.ReadFile("/proc/pressure/cpu"); err == nil {
		first, _, _ := strings.Cut(string(psi), "\n")
		b.WriteString("cpu pressure " + first + "; ")
	}
	dirs, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/stat")
	type proc struct {
		comm, nice, group string
		running           int
	}
	procs := map[string]*proc{}
	var order []string
	total := 0
	for _, d := range dirs {
		st, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ... ; comm may hold spaces: cut at the last ')'.
		i := strings.LastIndexByte(string(st), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(st[i+1:]))
		if len(f) < 17 || f[0] != "R" {
			continue
		}
		total++
		pid := strings.Split(d, "/")[2]
		pr := procs[pid]
		if pr == nil {
			comm := string(st[strings.IndexByte(string(st), '(')+1 : i])
			if cmd, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && len(cmd) > 0 {
				// postgres backends name their client in the title.
				comm = strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))
				if len(comm) > 60 {
					comm = comm[:60]
				}
			}
			group, _ := os.ReadFile("/proc/" + pid + "/autogroup")
			pr = &proc{comm: comm, nice: f[16], group: strings.TrimSpace(string(group))}
			procs[pid] = pr
			order = append(order, pid)
		}
		pr.running++
	}
	fmt.Fprintf(&b, "%d threads runnable", total)
	for _, pid := range order {
		pr := procs[pid]
		fmt.Fprintf(&b, "\n  %s %q nice %s %s: %d", pid, pr.comm, pr.nice, pr.group, pr.running)
	}
	return b.String()
}

func (s *sentry) close() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	s.done.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.captures {
		s.t.Log(c)
	}
}

// recentLog returns the last max lines of p's log stamped (by idsql's
// logger, "(at 15:04:05.000)") at or after since: its lease and holder
// client events before a capture.
func (p *chaosProc) recentLog(since time.Time, max int) string {
	from := since.UTC().Format("15:04:05.000")
	var keep []string
	for _, l := range strings.Split(p.log(), "\n") {
		i := strings.LastIndex(l, "(at ")
		if i < 0 || len(l) < i+len("(at 15:04:05.000)") {
			continue
		}
		if stamp := l[i+4 : i+16]; stamp >= from {
			keep = append(keep, "  "+strings.TrimSpace(l))
		}
	}
	if len(keep) > max {
		keep = keep[len(keep)-max:]
	}
	if len(keep) == 0 {
		return "log: nothing logged since " + from + "\n"
	}
	return "log since " + from + ":\n" + strings.Join(keep, "\n") + "\n"
}

// stacks asks p for a goroutine dump (SIGUSR2) and returns its goroutines
// that are inside idsql or the database drivers, without the helper's own
// idle ones; at most within for the dump to appear.
func (p *chaosProc) stacks(within time.Duration) string {
	path := p.keysPath[:len(p.keysPath)-len(".keys")] + ".stacks"
	before := int64(0)
	if fi, err := os.Stat(path); err == nil {
		before = fi.Size()
	}
	p.mu.Lock()
	err := p.cmd.Process.Signal(syscall.SIGUSR2)
	p.mu.Unlock()
	if err != nil {
		return "(no stacks: " + err.Error() + ")\n"
	}
	var dump string
	waitFor(within, func() bool {
		b, err := os.ReadFile(path)
		if err != nil || int64(len(b)) <= before {
			return false
		}
		dump = string(b[before:])
		return strings.Contains(dump, "=== end")
	})
	if dump == "" {
		return "(no stacks within " + within.String() + ")\n"
	}
	return interestingGoroutines(dump)
}

// interestingGoroutines keeps the goroutines of a dump that run idsql,
// database or ZooKeeper client code, and drops those idle by design (the helper's probe,
// sleeps between INSERTs, the dump itself, idle connection readers).
func interestingGoroutines(dump string) string {
	var keep []string
	for _, g := range strings.Split(dump, "\n\n") {
		if !strings.Contains(g, "github.com/idsql/") && !strings.Contains(g, "database/sql") &&
			!strings.Contains(g, "github.com/go-zookeeper/") {
			continue
		}
		if strings.Contains(g, "main.(*proc).probe") || strings.Contains(g, "main.(*proc).dumpOnSignal") ||
			strings.Contains(g, "main.sleep(") || strings.Contains(g, "database/sql.(*DB).connectionOpener") {
			continue
		}
		keep = append(keep, strings.TrimSpace(g))
	}
	// The lease's heartbeat goroutine first, so that a long dump never
	// cuts it off; the rest in a stable order.
	heartbeat := func(g string) bool { return strings.Contains(g, "registry.(*Lease).run") }
	sort.Slice(keep, func(i, j int) bool {
		if hi, hj := heartbeat(keep[i]), heartbeat(keep[j]); hi != hj {
			return hi
		}
		return keep[i] < keep[j]
	})
	if len(keep) == 0 {
		return "(no goroutine inside idsql or a driver)\n"
	}
	out := strings.Join(keep, "\n\n")
	if len(out) > 12000 {
		out = out[:12000] + "\n... (cut)"
	}
	return out + "\n"
}

// pgView describes PostgreSQL's side: every backend of dsn's database that
// runs a statement, waits, or holds a transaction open, and who blocks
// whom.
func pgView(dsn string) func(ctx context.Context, who string) string {
	return func(ctx context.Context, who string) string {
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			return err.Error()
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, `SELECT application_name, pid, coalesce(state, ''),
				coalesce(wait_event_type || '/' || wait_event, ''),
				coalesce(round(extract(epoch FROM clock_timestamp() - xact_start) * 1000), 0)::bigint,
				coalesce(round(extract(epoch FROM clock_timestamp() - state_change) * 1000), 0)::bigint,
				array_to_string(pg_blocking_pids(pid), ','),
				left(regexp_replace(coalesce(query, ''), '\s+', ' ', 'g'), 120)
			FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() AND datname = current_database()
				AND (state <> 'idle' OR wait_event_type = 'Lock' OR application_name = $1)
			ORDER BY xact_start NULLS LAST`, appPrefix+who)
		if err != nil {
			return "pg_stat_activity: " + err.Error()
		}
		defer rows.Close()
		var lines []string
		for rows.Next() {
			var app, state, wait, blockers, query string
			var pid int
			var xactMs, stateMs int64
			if err := rows.Scan(&app, &pid, &state, &wait, &xactMs, &stateMs, &blockers, &query); err != nil {
				return "pg_stat_activity: " + err.Error()
			}
			// Its own backends, idle ones too: the age of an idle one's
			// state tells a reply the client has not read (the last
			// statement done) from a statement the backend has not read.
			l := fmt.Sprintf("%s backend %d %s (for %d ms) xact %d ms", strings.TrimPrefix(app, appPrefix), pid, state, stateMs, xactMs)
			if wait != "" {
				l += " waits " + wait
			}
			if blockers != "" {
				l += " blocked by " + blockers
			}
			lines = append(lines, l+": "+query)
		}
		if err := rows.Err(); err != nil {
			return "pg_stat_activity: " + err.Error()
		}
		if len(lines) == 0 {
			return "no backend busy, waiting or in a transaction"
		}
		return "\n  " + strings.Join(lines, "\n  ")
	}
}

// mysqlView describes MariaDB's side: the sessions that run a statement
// or hold a transaction, and InnoDB's lock waits.
func mysqlView(db *sql.DB) func(ctx context.Context, who string) string {
	return func(ctx context.Context, _ string) string {
		var lines []string
		rows, err := db.QueryContext(ctx, `SELECT p.ID, p.COMMAND, p.TIME_MS, coalesce(p.STATE, ''), left(coalesce(p.INFO, ''), 120),
				coalesce(t.trx_state, ''), coalesce(timestampdiff(MICROSECOND, t.trx_started, now(6)) DIV 1000, 0)
			FROM information_schema.PROCESSLIST p LEFT JOIN information_schema.INNODB_TRX t ON t.trx_mysql_thread_id = p.ID
			WHERE p.ID <> connection_id() AND (p.COMMAND <> 'Sleep' OR t.trx_id IS NOT NULL) AND p.USER <> 'system user'`)
		if err != nil {
			return "processlist: " + err.Error()
		}
		for rows.Next() {
			var id, timeMs, trxMs int64
			var cmd, state, info, trx string
			if err := rows.Scan(&id, &cmd, &timeMs, &state, &info, &trx, &trxMs); err != nil {
				rows.Close()
				return "processlist: " + err.Error()
			}
			l := fmt.Sprintf("session %d %s %d ms %s", id, cmd, timeMs, state)
			if trx != "" {
				l += fmt.Sprintf(" trx %s %d ms", trx, trxMs)
			}
			lines = append(lines, l+": "+info)
		}
		rows.Close()
		wrows, err := db.QueryContext(ctx, `SELECT r.trx_mysql_thread_id, b.trx_mysql_thread_id
			FROM information_schema.INNODB_LOCK_WAITS w
			JOIN information_schema.INNODB_TRX r ON r.trx_id = w.requesting_trx_id
			JOIN information_schema.INNODB_TRX b ON b.trx_id = w.blocking_trx_id`)
		if err != nil {
			lines = append(lines, "lock waits: "+err.Error())
		} else {
			for wrows.Next() {
				var waiter, blocker int64
				if err := wrows.Scan(&waiter, &blocker); err == nil {
					lines = append(lines, fmt.Sprintf("session %d waits for a lock of session %d", waiter, blocker))
				}
			}
			wrows.Close()
		}
		if len(lines) == 0 {
			return "no session busy, waiting or in a transaction"
		}
		return "\n  " + strings.Join(lines, "\n  ")
	}
}
