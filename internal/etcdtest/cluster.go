package etcdtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
)

// ClusterSettings configure StartCluster. The zero value is three members
// with etcd's default timings.
type ClusterSettings struct {
	// Members is the cluster's size; 0 means 3.
	Members int
	// Heartbeat and Election are etcd's --heartbeat-interval and
	// --election-timeout; 0 means etcd's defaults (100ms, 1s). A
	// follower that hears from no leader for Election campaigns; the
	// shortest lease etcd grants is 1.5 elections, in whole seconds.
	Heartbeat, Election time.Duration
	// Peer, when set, gives the address member i announces to the others
	// for its peer traffic, whose listening address is real: a proxy in
	// front of the member. nil means real. etcd derives member IDs from
	// the announced addresses, so every member reaches member i through
	// the same address.
	Peer func(i int, real string) string
}

// Cluster is an etcd cluster of several members on loopback ports, owned
// by one test. Members keep their data across Stop, Kill and Start.
type Cluster struct {
	t       testing.TB
	members []*Member
}

// Member is one member of a Cluster. Call its methods from the test's
// goroutine: they end the test on failure.
type Member struct {
	t         testing.TB
	name      string
	dir       string
	client    int
	args      []string
	proc      *testproc.Proc
	bin       string
	restarted bool
}

// StartCluster starts a cluster of etcd members on free loopback ports,
// waits until every member is healthy (the cluster has a leader), and
// kills them all when the test ends. It needs the binary in
// IDSQL_TEST_ETCD_BIN; without it the test skips, or fails under CI.
func StartCluster(t testing.TB, s ClusterSettings) *Cluster {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		pgtest.Unavailable(t, "an etcd binary ("+EnvBin+" unset)")
	}
	if _, err := os.Stat(bin); err != nil {
		pgtest.Unavailable(t, "an etcd binary ("+err.Error()+")")
	}
	if s.Members == 0 {
		s.Members = 3
	}
	n := s.Members
	ports := testproc.FreePorts(t, 2*n) // client, peer per member
	var initial []string
	announced := make([]string, n)
	for i := range n {
		real := fmt.Sprintf("127.0.0.1:%d", ports[2*i+1])
		announced[i] = real
		if s.Peer != nil {
			announced[i] = s.Peer(i, real)
		}
		initial = append(initial, fmt.Sprintf("m%d=http://%s", i, announced[i]))
	}
	token := fmt.Sprintf("idsql-%d-%d", os.Getpid(), seq.Add(1))
	c := &Cluster{t: t}
	for i := range n {
		m := &Member{t: t, name: fmt.Sprintf("m%d", i), dir: t.TempDir(), client: ports[2*i], bin: bin}
		m.proc = testproc.New("etcd", m.dir)
		client := "http://" + m.Addr()
		m.args = []string{"--name", m.name, "--data-dir", filepath.Join(m.dir, "data"),
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1]),
			"--initial-advertise-peer-urls", "http://" + announced[i],
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-token", token,
			"--initial-cluster-state", "new", "--unsafe-no-fsync", "--log-level", "warn",
			"--pre-vote"}
		if s.Heartbeat > 0 {
			m.args = append(m.args, "--heartbeat-interval", fmt.Sprint(s.Heartbeat.Milliseconds()))
		}
		if s.Election > 0 {
			m.args = append(m.args, "--election-timeout", fmt.Sprint(s.Election.Milliseconds()))
		}
		t.Cleanup(m.Kill)
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.Launch()
	}
	for _, m := range c.members {
		m.WaitHealthy()
	}
	return c
}

// Member returns the i-th member (from 0).
func (c *Cluster) Member(i int) *Member { return c.members[i] }

// Size returns the number of members.
func (c *Cluster) Size() int { return len(c.members) }

// Addrs returns every member's client address, in member order.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.members))
	for i, m := range c.members {
		addrs[i] = m.Addr()
	}
	return addrs
}

// Status is what a member says of itself and of its cluster.
type Status struct {
	ID, Leader uint64 // the member's ID, and the leader's it knows (0: none)
	Term       uint64 // the raft term
}

// Status asks member i for its status; an error when it does not answer
// within a second.
func (c *Cluster) Status(i int) (Status, error) {
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.members[i].Addr()}, DialTimeout: time.Second, Logger: zap.NewNop()})
	if err != nil {
		return Status{}, err
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	st, err := cli.Status(ctx, c.members[i].Addr())
	if err != nil {
		return Status{}, err
	}
	return Status{ID: st.Header.MemberId, Leader: st.Leader, Term: st.RaftTerm}, nil
}

// Leader returns the index of the member that says it leads, and the
// term; -1 when none answers that it does.
func (c *Cluster) Leader() (int, uint64) {
	for i := range c.members {
		if st, err := c.Status(i); err == nil && st.Leader != 0 && st.Leader == st.ID {
			return i, st.Term
		}
	}
	return -1, 0
}

// Addr returns the member's client address, "127.0.0.1:port".
func (m *Member) Addr() string { return fmt.Sprintf("127.0.0.1:%d", m.client) }

// Dir returns the member's directory (its data and log), which its
// command line names.
func (m *Member) Dir() string { return m.dir }

// Launch starts the member's process (again) without waiting: a member
// alone cannot be healthy until a quorum runs. Launching a running member
// does nothing.
func (m *Member) Launch() {
	m.t.Helper()
	args := m.args
	if m.restarted {
		// A member that has joined once restarts from its data.
		args = append(append([]string(nil), args...), "--initial-cluster-state", "existing")
	}
	cmd := exec.Command(m.bin, args...)
	cmd.Dir = m.dir
	started, err := m.proc.Start(cmd, nil)
	if err != nil {
		m.t.Fatalf("etcdtest: start etcd %s: %v", m.name, err)
	}
	if started {
		m.restarted = true
	}
}

// Start launches the member and waits until it is healthy.
func (m *Member) Start() {
	m.t.Helper()
	m.Launch()
	m.WaitHealthy()
}

// WaitHealthy waits until the member says it is healthy (it knows a
// leader), and ends the test if it exits or takes longer than startTimeout.
func (m *Member) WaitHealthy() {
	m.t.Helper()
	deadline := time.Now().Add(startTimeout)
	for {
		err := health(m.Addr())
		if err == nil {
			return
		}
		if exited, werr := m.proc.Exited(); exited {
			m.t.Fatalf("etcdtest: etcd %s exited during start-up (%v)\n%s", m.name, werr, m.proc.LogTail())
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("etcdtest: etcd %s was not healthy within %v: %v\n%s", m.name, startTimeout, err, m.proc.LogTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Healthy reports whether the member says it is healthy now.
func (m *Member) Healthy() bool { return health(m.Addr()) == nil }

// Stop shuts the member down with SIGTERM and waits until it has exited.
func (m *Member) Stop() { m.proc.Stop(syscall.SIGTERM, 10*time.Second) }

// Kill kills the member with SIGKILL, as a crash would, and waits until it
// has exited. Killing a stopped member does nothing.
func (m *Member) Kill() { m.proc.Stop(syscall.SIGKILL, 10*time.Second) }

// Exited reports whether the member's process is not running.
func (m *Member) Exited() bool {
	exited, _ := m.proc.Exited()
	return exited
}

// LogTail returns the last lines of the member's log.
func (m *Member) LogTail() string { return m.proc.LogTail() }
