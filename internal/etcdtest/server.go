package etcdtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
)

// EnvBin names the variable holding the path of the etcd binary.
const EnvBin = "IDSQL_TEST_ETCD_BIN"

// startTimeout bounds how long Start waits for the member to be healthy.
const startTimeout = 30 * time.Second

// Server is a one-member etcd cluster owned by one test, for tests that stop
// and restart etcd mid-run. Its data directory survives Stop and Start (so
// do its leases, which etcd extends by their TTL on start), and it listens
// on the same port after every Start. Everything is removed when the test
// ends. Call Stop, Kill and Start from the test's goroutine: they end the
// test on failure.
type Server struct {
	t          testing.TB
	bin        string
	dir        string
	port, peer int
	proc       *testproc.Proc
}

// StartServer starts an etcd of this test's own on free loopback ports. It
// needs the binary in IDSQL_TEST_ETCD_BIN; without it the test skips, or
// fails under CI.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		pgtest.Unavailable(t, "an etcd binary ("+EnvBin+" unset)")
	}
	if _, err := os.Stat(bin); err != nil {
		pgtest.Unavailable(t, "an etcd binary ("+err.Error()+")")
	}
	ports := testproc.FreePorts(t, 2)
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: ports[0], peer: ports[1]}
	s.proc = testproc.New("etcd", s.dir)
	t.Cleanup(s.Kill)
	s.Start()
	return s
}

// Addr returns the member's client address, "host:port".
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Start starts the member (again) and waits until it is healthy. Starting
// a running server does nothing.
func (s *Server) Start() {
	s.t.Helper()
	client := "http://" + s.Addr()
	peer := fmt.Sprintf("http://127.0.0.1:%d", s.peer)
	cmd := exec.Command(s.bin, "--name", "test", "--data-dir", filepath.Join(s.dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "test="+peer, "--unsafe-no-fsync", "--log-level", "warn")
	cmd.Dir = s.dir
	started, err := s.proc.Start(cmd, nil)
	if err != nil {
		s.t.Fatalf("etcdtest: start etcd: %v", err)
	}
	if !started {
		return
	}
	deadline := time.Now().Add(startTimeout)
	for {
		err := health(s.Addr())
		if err == nil {
			return
		}
		if exited, werr := s.proc.Exited(); exited {
			s.t.Fatalf("etcdtest: etcd exited during start-up (%v)\n%s", werr, s.proc.LogTail())
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("etcdtest: etcd on port %d was not healthy within %v: %v\n%s", s.port, startTimeout, err, s.proc.LogTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the member down with SIGTERM and waits until it has exited.
func (s *Server) Stop() { s.proc.Stop(syscall.SIGTERM, 10*time.Second) }

// Kill kills the member with SIGKILL, as a crash would, and waits until it
// has exited. Killing a stopped server does nothing.
func (s *Server) Kill() { s.proc.Stop(syscall.SIGKILL, 10*time.Second) }
