//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestServeSIGTERM runs the built idsql binary's serve on PostgreSQL,
// holds a request in flight (its segment allocation waits for a row lock
// the test holds), sends SIGTERM, and checks what the serve command
// promises: the server stops taking connections but finishes the request
// in flight, which answers 200 with every key it asked for; it exits 0;
// and the worker table shows its worker lease released, not left to
// expire.
func TestServeSIGTERM(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const ns = "sigterm"
	cfgPath := writeConfig(t, `namespace: `+ns+`
holder: {kind: postgres, instance: sigterm-1}
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment, step: 50}
`)
	if code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", cfgPath); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "idsql")
	if out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build idsql: %v\n%s", err, out)
	}

	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--config", cfgPath, "--dsn", dsn)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	errPath := filepath.Join(t.TempDir(), "stderr")
	errFile, err := os.Create(errPath)
	if err != nil {
		t.Fatal(err)
	}
	defer errFile.Close()
	cmd.Stderr = errFile
	stderr := logFile(errPath)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed once waitErr is set
	var waitErr error
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	base := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if m := regexp.MustCompile(`^  monitor\s+(http://\S+)$`).FindStringSubmatch(sc.Text()); m != nil {
			base = strings.TrimSuffix(m[1], "/")
			break
		}
	}
	if base == "" {
		t.Fatalf("no banner from idsql serve; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)

	// It issues, and holds a live worker lease under its pid.
	if code, body := get(base + "/api/snowflake/get/orders"); code != 200 {
		t.Fatalf("orders: %d %s", code, body)
	}
	reg := registry.New(raw, registry.Settings{})
	pid := cmd.Process.Pid
	leases := func(liveOnly bool) []registry.Record {
		t.Helper()
		recs, err := reg.Leases(ctx, ns, liveOnly)
		if err != nil {
			t.Fatal(err)
		}
		var out []registry.Record
		for _, r := range recs {
			if r.PID == pid {
				out = append(out, r)
			}
		}
		return out
	}
	if live := leases(true); len(live) == 0 {
		t.Fatalf("no live worker lease of pid %d in idsql_workers", pid)
	}

	// A request in flight: 200 keys of users need new ranges, whose
	// allocation waits for the row lock this transaction takes.
	tx, err := raw.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `SELECT max_id FROM idsql_alloc WHERE biz_tag = 'users' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	type answer struct {
		code int
		body string
	}
	inflight := make(chan answer, 1)
	go func() {
		code, body := get(base + "/api/segment/get/users/200")
		inflight <- answer{code, body}
	}()
	waitUntil(t, "the request's allocation waits for the lock", func() bool {
		var n int
		err := raw.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%idsql_alloc%' AND pid <> pg_backend_pid()`).Scan(&n)
		return err == nil && n > 0
	})

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// It stops taking connections, and waits for the request in flight.
	waitUntil(t, "the server refuses new connections after SIGTERM", func() bool {
		_, err := http.Get(base + "/healthz")
		return errors.Is(err, syscall.ECONNREFUSED)
	})
	select {
	case <-exited:
		t.Fatalf("idsql serve exited (%v) with a request in flight; stderr:\n%s", waitErr, stderr.String())
	case a := <-inflight:
		t.Fatalf("the request in flight was answered (%d %s) while its allocation still waited", a.code, a.body)
	default:
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	a := <-inflight
	if keys := strings.Fields(strings.NewReplacer(",", " ", "[", " ", "]", " ").Replace(a.body)); a.code != 200 || len(keys) != 200 {
		t.Errorf("the request in flight at SIGTERM: %d, %d keys, want 200 and 200 keys: %.200s", a.code, len(keys), a.body)
	}
	select {
	case <-exited:
		if waitErr != nil {
			t.Errorf("idsql serve after SIGTERM: %v; stderr:\n%s", waitErr, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("idsql serve did not exit within 30s of its last request; stderr:\n%s", stderr.String())
	}

	// Its leases are released in the worker table, none left live.
	if live := leases(true); len(live) > 0 {
		t.Errorf("after SIGTERM, %d worker leases of pid %d are still live in idsql_workers (worker %d since %s)", len(live), pid, live[0].WorkerID, live[0].Started)
	}
	all := leases(false)
	if len(all) == 0 {
		t.Fatalf("no worker lease of pid %d in idsql_workers", pid)
	}
	for _, r := range all {
		if r.Released.IsZero() {
			t.Errorf("lease %d of worker %d has no release time", r.LeaseID, r.WorkerID)
		}
	}
	t.Logf("in flight at SIGTERM: %d, %d bytes; %d leases of pid %d released", a.code, len(a.body), len(all), pid)
}

// logFile is a file a process writes, read whole by String.
type logFile string

func (f logFile) String() string {
	b, _ := os.ReadFile(string(f))
	return string(b)
}

// get returns url's status and body; 0 and the error when it could not
// ask.
func get(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitUntil polls cond every 10 ms and ends the test if it does not hold
// within 30 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30s: %s", what)
		}
	}
}
