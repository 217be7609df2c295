package redistest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
)

// EnvBin names the variable holding the path of the redis-server binary.
const EnvBin = "IDSQL_TEST_REDIS_BIN"

// startTimeout bounds how long Start waits for the server to answer PING
// (loading its dump file included).
const startTimeout = 30 * time.Second

// Server is a throw-away redis-server owned by one test, for tests that stop,
// kill and restart Redis mid-run. It keeps its dump file (dump.rdb, written
// only by an explicit SAVE: automatic snapshots and the AOF are off) in a
// directory of its own, so a restart reloads the last SAVE, and it listens on
// the same port after every Start. Everything is removed when the test ends.
// Call Stop, Kill and Start from the test's goroutine: they end the test on
// failure.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	proc *testproc.Proc
}

// StartServer starts a redis-server of this test's own on a free loopback
// port. It needs the binary in IDSQL_TEST_REDIS_BIN; without it the test
// skips, or fails under CI.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		pgtest.Unavailable(t, "a redis-server binary ("+EnvBin+" unset)")
	}
	if _, err := os.Stat(bin); err != nil {
		pgtest.Unavailable(t, "a redis-server binary ("+err.Error()+")")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir(), port: testproc.FreePorts(t, 1)[0]}
	s.proc = testproc.New("Redis", s.dir)
	t.Cleanup(s.Kill)
	s.Start()
	return s
}

// Addr returns the server's "host:port".
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// DumpPath returns the path of the server's dump file.
func (s *Server) DumpPath() string { return filepath.Join(s.dir, "dump.rdb") }

// Start starts the server (again), loading the dump file when there is one,
// and waits until it answers PING. Starting a running server does nothing.
func (s *Server) Start() {
	s.t.Helper()
	cmd := exec.Command(s.bin,
		"--bind", "127.0.0.1", "--port", strconv.Itoa(s.port),
		"--dir", s.dir, "--dbfilename", "dump.rdb",
		"--save", "", "--appendonly", "no", "--daemonize", "no")
	cmd.Dir = s.dir
	started, err := s.proc.Start(cmd, nil)
	if err != nil {
		s.t.Fatalf("redistest: start redis-server: %v", err)
	}
	if !started {
		return
	}
	deadline := time.Now().Add(startTimeout)
	for {
		err := ping(s.Addr())
		if err == nil {
			return
		}
		if exited, werr := s.proc.Exited(); exited {
			s.t.Fatalf("redistest: redis-server exited during start-up (%v)\n%s", werr, s.proc.LogTail())
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redistest: redis-server on port %d did not answer PING within %v: %v\n%s", s.port, startTimeout, err, s.proc.LogTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down with SIGTERM (which, with snapshots off, does
// not write the dump file) and waits until it has exited.
func (s *Server) Stop() { s.proc.Stop(syscall.SIGTERM, 10*time.Second) }

// Kill kills the server with SIGKILL, as a crash would, and waits until it
// has exited. Killing a stopped server does nothing.
func (s *Server) Kill() { s.proc.Stop(syscall.SIGKILL, 10*time.Second) }
