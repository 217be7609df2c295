// Package testproc runs the server processes that tests own (PostgreSQL in
// pgtest, ZooKeeper in zktest): started with their output appended to a log
// file, stopped with a signal and a grace period, restartable, and on Linux
// killed with the test binary so none outlives its test.
package testproc

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// tailLines is how much of the log LogTail shows.
const tailLines = 40

// Proc is one restartable server process of a test. Its methods are safe for
// concurrent use.
type Proc struct {
	name string // for messages, e.g. "PostgreSQL"
	log  string // the log file, appended to by every start

	mu      sync.Mutex
	cmd     *exec.Cmd // nil while not running
	waitErr chan error
}

// New returns a stopped Proc whose output goes to dir/log.
func New(name, dir string) *Proc {
	return &Proc{name: name, log: filepath.Join(dir, "log")}
}

// Start starts cmd, as the user cred when it is not nil, unless the process
// runs already. It reports whether it started one.
func (p *Proc) Start(cmd *exec.Cmd, cred *syscall.Credential) (bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return false, nil
	}
	logf, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, err
	}
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr(cred)
	if err := cmd.Start(); err != nil {
		return false, err
	}
	p.cmd = cmd
	p.waitErr = make(chan error, 1)
	go func() { p.waitErr <- cmd.Wait() }()
	return true, nil
}

// Exited reports, without waiting, whether the process is not running: it
// exited by itself (err says how) or was stopped.
func (p *Proc) Exited() (exited bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return true, nil
	}
	select {
	case err := <-p.waitErr:
		p.cmd = nil
		return true, err
	default:
		return false, nil
	}
}

// Stop sends sig and waits for the process to exit, killing it after grace.
// Stopping a stopped Proc does nothing.
func (p *Proc) Stop(sig os.Signal, grace time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.waitErr:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.waitErr
	}
	p.cmd = nil
}

// StartDB starts cmd, a database server, as Start does and, when it
// started it, waits until a pool from open answers a ping (each given 2s,
// every 50ms), the process exits or timeout passes; the error of the last
// two says so, with the log's tail. Starting a running process does
// nothing.
func (p *Proc) StartDB(cmd *exec.Cmd, cred *syscall.Credential, open func() (*sql.DB, error), timeout time.Duration) error {
	started, err := p.Start(cmd, cred)
	if err != nil || !started {
		return err
	}
	db, err := open()
	if err != nil {
		return err
	}
	defer db.Close()
	deadline := time.Now().Add(timeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := db.PingContext(ctx)
		cancel()
		if err == nil {
			return nil
		}
		if exited, werr := p.Exited(); exited {
			return fmt.Errorf("%s exited during start-up (%v)\n%s", p.name, werr, p.LogTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections within %v: %w\n%s", p.name, timeout, err, p.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// LogTail returns the last lines of the log, for failure messages.
func (p *Proc) LogTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return "----- " + p.name + " log tail -----\n" + string(bytes.Join(lines, []byte("\n")))
}

// FreePorts returns n distinct loopback ports that were free a moment ago,
// drawn below the kernel's ephemeral range (ip_local_port_range), as
// scripts/servers draws them: a server restarted on its port while clients
// reconnect could otherwise find it taken as some connection's own port.
func FreePorts(t testing.TB, n int) []int {
	t.Helper()
	lo, hi := belowEphemeral()
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n; tries++ {
		if tries == 1000 {
			t.Fatalf("testproc: no free loopback port in %d..%d", lo, hi)
		}
		p := lo + rand.IntN(hi-lo+1)
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		ports = append(ports, p)
	}
	return ports
}

// belowEphemeral returns a range of ports under the kernel's ephemeral
// ones: about 12,000 ports up to the first ephemeral one, or 20000..32767
// when the range cannot be read.
func belowEphemeral() (lo, hi int) {
	lo, hi = 20000, 32767
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return lo, hi
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return lo, hi
	}
	if first, err := strconv.Atoi(fields[0]); err == nil && first > 11000 {
		hi = first - 1
		lo = max(10000, hi-12000)
	}
	return lo, hi
}

// ServerDir returns a new directory for a server's files that another
// user (postgres, mysql, when the tests run as root) can reach, removed
// when the test ends. Not t.TempDir: its parents are 0700 and root-owned.
func ServerDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		t.Fatalf("testproc: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("testproc: remove %s: %v", dir, err)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("testproc: %v", err)
	}
	return dir
}
