//go:build linux

package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/snowflake"
)

// The chaos tests' tables: one per strategy, keys not unique, so that a
// duplicate key is stored instead of rejected and can be counted.
const (
	sfTable  = "chaos_sf"
	segTable = "chaos_seg"
)

// chaosLayout is the layout the chaos configuration names (leaf).
var chaosLayout = snowflake.Leaf

// buildChaosProc builds the helper command into dir and returns its path.
func buildChaosProc(t *testing.T, dir string) string {
	t.Helper()
	// go test puts its own GOROOT/bin first in the PATH of tests.
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("build the chaos helper: %v", err)
	}
	bin := filepath.Join(dir, "chaosproc")
	cmd := exec.Command(goTool, "build", "-o", bin, "./internal/chaosproc")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the chaos helper: %v\n%s", err, out)
	}
	return bin
}

// helperProc is one run of a helper binary the integration tests build
// (internal/chaosproc, internal/redisqproc): its stdout and stderr go to
// files named after it, and it dies with the test binary.
type helperProc struct {
	name     string // label in reports (and in a chaos helper's rows)
	keysPath string // its stdout: the keys it was handed
	logPath  string // its stderr
	cmd      *exec.Cmd
	exited   chan struct{} // closed when the process has exited
	waitErr  error         // valid after exited is closed
}

// launch starts bin with args, its output in files named after p.name in
// dir.
func (p *helperProc) launch(bin, dir string, args ...string) error {
	p.keysPath, p.logPath = filepath.Join(dir, p.name+".keys"), filepath.Join(dir, p.name+".log")
	p.exited = make(chan struct{})
	stdout, err := os.Create(p.keysPath)
	if err != nil {
		return err
	}
	defer stdout.Close()
	stderr, err := os.Create(p.logPath)
	if err != nil {
		return err
	}
	defer stderr.Close()
	p.cmd = exec.Command(bin, args...)
	p.cmd.Stdout, p.cmd.Stderr = stdout, stderr
	// Killed with the test binary, whatever happens to it.
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// alive reports whether the process has not exited.
func (p *helperProc) alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// log returns what the process wrote to stderr.
func (p *helperProc) log() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return string(b)
}

// chaosProc is one run of the chaos helper: its name (p3, p3.2, s1, t1,
// c1 ...) labels its rows, and its stdout has "<table> <key>" per
// committed key. A restart is a new chaosProc (with a new name) on the
// same identity.
type chaosProc struct {
	helperProc
	identity string    // holder.instance; "" for none
	host     string    // "" for the usual host; see chaos.startOn
	clockAt  time.Time // its snowflake clock's first reading; zero: the true time
	launched time.Time

	mu      sync.Mutex
	stopped bool      // SIGSTOPped and not yet continued
	killed  time.Time // when the test killed it
	off     int64     // bytes of keysPath parsed
	sf, seg []int64   // acknowledged keys parsed so far
}

// startProc launches the helper with the given config file.
func startProc(bin, dir, dsn, cfg, name, identity string, clockAt time.Time, extra []string) (*chaosProc, error) {
	p := &chaosProc{helperProc: helperProc{name: name}, identity: identity, clockAt: clockAt}
	args := []string{"-config", cfg, "-dsn", dsn, "-name", name, "-stacks", filepath.Join(dir, name+".stacks")}
	if !clockAt.IsZero() {
		args = append(args, "-clock-start", clockAt.UTC().Format(time.RFC3339Nano))
	}
	args = append(args, extra...)
	if err := p.launch(bin, dir, args...); err != nil {
		return nil, err
	}
	p.launched = time.Now()
	return p, nil
}

// pause sends SIGSTOP and reports whether the process is stopped: the
// kernel shows it in state T (stopped) within a second.
func (p *chaosProc) pause() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.alive() || p.cmd.Process.Signal(syscall.SIGSTOP) != nil {
		return false
	}
	p.stopped = true
	stat := fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return false
		}
		// pid (comm) state ...: the comm may hold spaces and parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return true
		}
	}
	return false
}

// resume sends SIGCONT.
func (p *chaosProc) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		_ = p.cmd.Process.Signal(syscall.SIGCONT)
		p.stopped = false
	}
}

// running reports whether the process runs: not exited, killed or
// stopped.
func (p *chaosProc) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.alive() && p.killed.IsZero() && !p.stopped
}

func (p *chaosProc) isStopped() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stopped
}

// kill sends SIGKILL and waits until the process has exited. It reports
// whether the process was still running.
func (p *chaosProc) kill() bool {
	p.mu.Lock()
	running := p.alive()
	if running {
		_ = p.cmd.Process.Kill()
		p.killed = time.Now()
	}
	p.stopped = false
	p.mu.Unlock()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		// SIGKILL cannot be ignored; only a process in uninterruptible
		// sleep takes this long. Nothing more to do than to go on.
	}
	return running
}

// scan parses the keys printed since the last scan. A line without its
// newline (the process was killed while writing it) is left for later,
// and never counted if the process is dead.
func (p *chaosProc) scan() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	f, err := os.Open(p.keysPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(p.off, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<16)
	for {
		line, err := r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			return fmt.Errorf("%s: line longer than 64 KiB", p.keysPath)
		}
		if err != nil { // io.EOF: an incomplete line or nothing
			return nil
		}
		p.off += int64(len(line))
		table, key, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\n")), []byte(" "))
		id, perr := strconv.ParseInt(string(key), 10, 64)
		if !ok || perr != nil {
			return fmt.Errorf("%s: bad line %q", p.keysPath, line)
		}
		switch string(table) {
		case sfTable:
			p.sf = append(p.sf, id)
		case segTable:
			p.seg = append(p.seg, id)
		default:
			return fmt.Errorf("%s: unknown table in %q", p.keysPath, line)
		}
	}
}

// counts returns how many keys of each table were parsed.
func (p *chaosProc) counts() (sf, seg int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.sf), len(p.seg)
}

// lastWorker returns the worker ID of the last snowflake key parsed, or -1.
func (p *chaosProc) lastWorker() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.sf) == 0 {
		return -1
	}
	return chaosLayout.Decompose(p.sf[len(p.sf)-1]).Worker
}

// errorLines returns the error lines of the log (not the start-up line,
// notes, repeat counts or the ZooKeeper client's events), at most max of
// them.
func (p *chaosProc) errorLines(max int) []string {
	var out []string
	for _, l := range strings.Split(p.log(), "\n") {
		_, msg, ok := strings.Cut(l, ": ")
		if !ok || strings.HasPrefix(msg, "pid ") || strings.HasPrefix(msg, "note: ") ||
			strings.HasPrefix(msg, "(last error") || strings.HasPrefix(msg, "stopping: ") ||
			strings.HasPrefix(msg, "idsql: zookeeper client: ") {
			continue
		}
		out = append(out, msg)
		if len(out) == max {
			break
		}
	}
	return out
}

// logTail returns the last lines of the log, for failure messages.
func (p *chaosProc) logTail() string {
	lines := strings.Split(strings.TrimRight(p.log(), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "----- " + p.name + " stderr -----\n" + strings.Join(lines, "\n")
}

// outcome describes what the process did so far, for reports.
func (p *chaosProc) outcome() string {
	_ = p.scan()
	sf, seg := p.counts()
	var b strings.Builder
	switch {
	case sf > 0:
		fmt.Fprintf(&b, "issued %d snowflake keys (worker %d) and %d segment keys", sf, p.lastWorker(), seg)
	case seg > 0:
		fmt.Fprintf(&b, "issued no snowflake key, %d segment keys", seg)
	default:
		b.WriteString("issued no key")
	}
	if errs := p.errorLines(1); len(errs) > 0 {
		fmt.Fprintf(&b, "; first error: %s", errs[0])
	}
	if !p.alive() && p.killed.IsZero() {
		fmt.Fprintf(&b, "; exited by itself: %v", p.waitErr)
	}
	return b.String()
}

// waitSnowflake waits until the process has acknowledged more than have
// snowflake keys, it has exited, or within has passed; it reports whether
// it got a key.
func (p *chaosProc) waitSnowflake(have int, within time.Duration) bool {
	return p.waitUntil(within, func() bool {
		sf, _ := p.counts()
		return sf > have
	})
}

// waitUntil waits until cond holds (checked after each scan of the keys),
// the process has exited, or within has passed; it reports whether cond
// held. Bounds are generous: on a loaded machine a process may take
// seconds to start, and a healthy one ends the wait at once.
func (p *chaosProc) waitUntil(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for {
		_ = p.scan()
		if cond() {
			return true
		}
		if !p.alive() || time.Now().After(deadline) {
			_ = p.scan()
			return cond()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitAnswer waits until the process has acknowledged a snowflake key or
// reported an error, or has exited, at most within: how a process asked to
// do something it may refuse answers. It reports whether it answered.
func (p *chaosProc) waitAnswer(within time.Duration) bool {
	return p.waitUntil(within, func() bool {
		sf, _ := p.counts()
		return sf > 0 || len(p.errorLines(1)) > 0
	})
}

// output returns how many bytes the process has written to stdout and
// stderr, to see whether it ran since an earlier call.
func (p *chaosProc) output() int64 {
	var n int64
	for _, path := range []string{p.keysPath, p.logPath} {
		if fi, err := os.Stat(path); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// clockOffset is, for a process whose clock was set (clockAt), the offset
// it settled on at its first clock reading, as its log says: "0s" for one
// on the true time, "?" while unknown.
func (p *chaosProc) clockOffset() string {
	if p.clockAt.IsZero() {
		return "0s"
	}
	for _, l := range strings.Split(p.log(), "\n") {
		if _, rest, ok := strings.Cut(l, "note: clock offset "); ok {
			off, _, _ := strings.Cut(rest, " ")
			if d, err := time.ParseDuration(off); err == nil {
				return d.Round(time.Millisecond).String()
			}
		}
	}
	return "?"
}
