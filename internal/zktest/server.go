package zktest

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
)

// mainClass is the ZooKeeper server's entry point, standalone or quorum.
const mainClass = "org.apache.zookeeper.server.quorum.QuorumPeerMain"

// startTimeout bounds how long Start waits for a server to serve.
const startTimeout = 60 * time.Second

// Server is one ZooKeeper server process owned by a test: standalone (from
// StartServer) or an ensemble member (from StartEnsemble). Its data survives
// Stop and Start; everything is removed when the test ends. Call Stop and
// Start from the test's goroutine: they end the test on failure.
type Server struct {
	t    testing.TB
	java string
	cp   string
	dir  string // holds zoo.cfg, data/ and log
	addr string // 127.0.0.1:clientPort
	proc *testproc.Proc
}

// Ensemble is a ZooKeeper quorum of servers on loopback ports.
type Ensemble struct {
	members []*Server
}

// StartServer starts a standalone ZooKeeper for this test on a free
// loopback port and stops it when the test ends.
func StartServer(t testing.TB) *Server {
	t.Helper()
	java, cp := runtime(t)
	ports := testproc.FreePorts(t, 1)
	s := newServer(t, java, cp, 1, ports[0], QuorumSettings{}.withDefaults(), "")
	s.Start()
	return s
}

// StartEnsemble starts an n-member ZooKeeper ensemble on loopback ports,
// waits until every member serves, and stops them all when the test ends.
func StartEnsemble(t testing.TB, n int) *Ensemble {
	t.Helper()
	if n < 1 {
		t.Fatalf("zktest: StartEnsemble(%d): need at least one member", n)
	}
	return StartQuorum(t, QuorumSettings{Members: n})
}

// Member returns the i-th member (from 0).
func (e *Ensemble) Member(i int) *Server { return e.members[i] }

// Addrs returns every member's client address, in member order.
func (e *Ensemble) Addrs() []string {
	addrs := make([]string, len(e.members))
	for i, m := range e.members {
		addrs[i] = m.addr
	}
	return addrs
}

// Addr returns the server's client address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.addr }

// Start starts the server (again) and waits until it serves requests: it
// answers srvr with a mode (standalone, leader or follower). Starting a
// running server does nothing.
func (s *Server) Start() {
	s.t.Helper()
	if s.launch() {
		s.waitServing()
	}
}

// launch starts the process unless it runs; it reports whether it did.
func (s *Server) launch() bool {
	s.t.Helper()
	cmd := exec.Command(s.java,
		"-Xms16m", "-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.awt.headless=true",
		"-cp", s.cp, mainClass, filepath.Join(s.dir, "zoo.cfg"))
	started, err := s.proc.Start(cmd, nil)
	if err != nil {
		s.t.Fatalf("zktest: start java: %v", err)
	}
	return started
}

// Stop stops the server with SIGTERM (SIGKILL after 10s) and waits until
// its process has exited. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.proc.Stop(syscall.SIGTERM, 10*time.Second)
}

// runtime finds java and the ZooKeeper classpath, or stops the test.
func runtime(t testing.TB) (java, cp string) {
	t.Helper()
	cp = os.Getenv(EnvClasspath)
	if cp == "" {
		pgtest.Unavailable(t, "a ZooKeeper server jar ("+EnvClasspath+" unset)")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		pgtest.Unavailable(t, "java (needed to run ZooKeeper: "+err.Error()+")")
	}
	return java, cp
}

// newServer prepares (does not start) a server of id listening for
// clients on clientPort, with s's timings and, for an ensemble's member,
// the server.N lines of quorum; the test's end kills it.
func newServer(t testing.TB, java, cp string, id, clientPort int, s QuorumSettings, quorum string) *Server {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	cfg := fmt.Sprintf(`tickTime=%d
initLimit=%d
syncLimit=%d
dataDir=%s
clientPort=%d
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
forceSync=no
%s`, s.TickTime.Milliseconds(), s.InitLimit, s.SyncLimit, data, clientPort, quorum)
	if quorum != "" {
		if err := os.WriteFile(filepath.Join(data, "myid"), []byte(strconv.Itoa(id)+"\n"), 0o644); err != nil {
			t.Fatalf("zktest: %v", err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644); err != nil {
		t.Fatalf("zktest: %v", err)
	}
	srv := &Server{t: t, java: java, cp: cp, dir: dir, addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort)),
		proc: testproc.New("ZooKeeper", dir)}
	t.Cleanup(srv.Kill)
	return srv
}

// waitServing waits until the server answers srvr with a mode, and ends the
// test with the log's tail if it exits or takes too long.
func (s *Server) waitServing() {
	s.t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		if mode, ok := srvrMode(s.addr); ok && mode != "" {
			return
		}
		if exited, err := s.proc.Exited(); exited {
			s.t.Fatalf("zktest: ZooKeeper %s exited or was stopped during start-up (%v)\n%s", s.addr, err, s.proc.LogTail())
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("zktest: ZooKeeper %s did not serve within %v\n%s", s.addr, startTimeout, s.proc.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// srvrMode asks addr the four-letter word srvr and returns its "Mode:"
// value; ok is false when the server did not answer.
func srvrMode(addr string) (mode string, ok bool) {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return "", false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("srvr")); err != nil {
		return "", false
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if m, found := strings.CutPrefix(sc.Text(), "Mode: "); found {
			return strings.TrimSpace(m), true
		}
	}
	return "", true
}
