package zktest

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/testproc"
)

// QuorumSettings configure StartQuorum. The zero value is three members
// with StartEnsemble's timings.
type QuorumSettings struct {
	// Members is the ensemble's size; 0 means 3.
	Members int
	// TickTime is ZooKeeper's tick; 0 means 500ms. Session timeouts are
	// clamped to 2..20 ticks.
	TickTime time.Duration
	// InitLimit and SyncLimit are in ticks: how long a follower may take
	// to connect and sync to a new leader, and how long a follower or
	// leader waits for the other before it gives up (a follower that
	// hears nothing for SyncLimit ticks leaves the leader, a leader that
	// hears from no quorum for as long steps down). 0 means 20 and 10.
	InitLimit, SyncLimit int
	// Peer, when set, gives the address member from (from 0) connects to
	// for member to's quorum port, whose listening address is real: a
	// proxy between the two. A follower connects to its leader's quorum
	// port, and everything the two exchange (proposals, acknowledgements,
	// pings) goes over that connection, so a proxy per pair and direction
	// can cut a member off. nil means real. A member listens on its own
	// real addresses. A proxy should hold a connection it accepted until
	// the member behind it listens (a new leader listens for followers
	// only once elected): a follower whose connection is accepted and
	// then closed gives the election up and starts another.
	Peer func(from, to int, real string) string
	// Election, when set, does for the election ports what Peer does for
	// the quorum ports: the address member from connects to for member
	// to's election port, whose listening address is real. nil means
	// real. The proxy must also rewrite the address the connecting member
	// announces for itself in its first message (protocol version, server
	// ID, then the length and text of "host:port"): ZooKeeper answers an
	// election connection from a lower member by closing it and
	// connecting back to that announced address, which bypasses every
	// proxy unless the first proxy names one (member to's proxy to
	// member from). A proxy address must be on the same host as Peer's
	// (a server line names one host for both ports).
	Election func(from, to int, real string) string
}

// StartQuorum starts an ensemble as StartEnsemble does, with settings:
// shorter ticks, and proxies between the members' quorum and election ports.
func StartQuorum(t testing.TB, s QuorumSettings) *Ensemble {
	t.Helper()
	s = s.withDefaults()
	java, cp := runtime(t)
	n := s.Members
	ports := testproc.FreePorts(t, 3*n) // client, quorum, election per member
	real := func(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
	e := &Ensemble{}
	for i := range n {
		var quorum strings.Builder
		for j := range n {
			q, el := real(ports[3*j+1]), real(ports[3*j+2])
			if j != i && s.Peer != nil {
				q = s.Peer(i, j, q)
			}
			if j != i && s.Election != nil {
				el = s.Election(i, j, el)
			}
			fmt.Fprintf(&quorum, "server.%d=%s:%s\n", j+1, q, portOf(el))
		}
		e.members = append(e.members, newServer(t, java, cp, i+1, ports[3*i], s, quorum.String()))
	}
	for _, m := range e.members {
		m.launch()
	}
	for _, m := range e.members {
		m.waitServing()
	}
	return e
}

// withDefaults returns s with its zero fields set to their defaults.
func (s QuorumSettings) withDefaults() QuorumSettings {
	if s.Members == 0 {
		s.Members = 3
	}
	if s.TickTime == 0 {
		s.TickTime = 500 * time.Millisecond
	}
	if s.InitLimit == 0 {
		s.InitLimit = 20
	}
	if s.SyncLimit == 0 {
		s.SyncLimit = 10
	}
	return s
}

// portOf returns the port of a host:port address.
func portOf(addr string) string {
	_, port, _ := net.SplitHostPort(addr)
	return port
}

// Size returns the number of members.
func (e *Ensemble) Size() int { return len(e.members) }

// Leader returns the index of the member that answers srvr with "leader",
// or -1 when none does.
func (e *Ensemble) Leader() int {
	for i, m := range e.members {
		if mode, _ := m.Mode(); mode == "leader" {
			return i
		}
	}
	return -1
}

// Mode asks the server the four-letter word srvr and returns its mode:
// "leader", "follower" or "standalone" while it serves, "" while it does
// not (it runs an election, or cannot reach a quorum); ok is false when it
// did not answer at all (it is down).
func (s *Server) Mode() (mode string, ok bool) { return srvrMode(s.addr) }

// Kill kills the server with SIGKILL, as a crash would, and waits until
// its process has exited. Killing a stopped server does nothing.
func (s *Server) Kill() { s.proc.Stop(syscall.SIGKILL, 10*time.Second) }

// Launch starts the server's process (again) without waiting until it
// serves: a member that needs others to form a quorum would wait for
// them. Launching a running server does nothing.
func (s *Server) Launch() {
	s.t.Helper()
	s.launch()
}

// WaitServing waits until the server serves (answers srvr with a mode),
// and ends the test if it exits or takes longer than a minute.
func (s *Server) WaitServing() {
	s.t.Helper()
	s.waitServing()
}

// Exited reports whether the server's process is not running.
func (s *Server) Exited() bool {
	exited, _ := s.proc.Exited()
	return exited
}

// LogTail returns the last lines of the server's log.
func (s *Server) LogTail() string { return s.proc.LogTail() }
