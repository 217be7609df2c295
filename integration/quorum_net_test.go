//go:build linux

package integration

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cutNet is the quorum tests' network between cluster members: proxies
// that carry the members' peer traffic and hold it, both ways, across a
// cut. A member cut off neither sends to nor hears from the others; its
// clients' connections, which do not pass here, stay up.
//
// A cut holds bytes rather than dropping them, as a partition does to
// TCP: senders block once the buffers are full, the peers' own timeouts
// notice the silence, and a connection that outlives the cut resumes
// where it stopped. A connection opened across a cut is accepted and held
// until the cut heals (or the peer gives up), as a SYN would be
// retransmitted.
type cutNet struct {
	mu      sync.Mutex
	cut     map[int]bool
	changed chan struct{} // closed and replaced on every change
	done    chan struct{}
	conns   map[net.Conn]bool
	// proxies to each member, so that a member down refuses connections
	// as it would without them.
	proxies map[int][]*peerProxy
}

// peerProxy is one proxy's listener and where it forwards.
type peerProxy struct {
	addr     string
	upstream string
	to       int
	from     func(net.Conn) int
	ln       net.Listener // nil while its member is down
}

func newCutNet(t *testing.T) *cutNet {
	n := &cutNet{cut: map[int]bool{}, changed: make(chan struct{}), done: make(chan struct{}), conns: map[net.Conn]bool{},
		proxies: map[int][]*peerProxy{}}
	t.Cleanup(n.close)
	return n
}

func (n *cutNet) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-n.done:
		return
	default:
	}
	close(n.done)
	for c := range n.conns {
		c.Close()
	}
	for _, ps := range n.proxies {
		for _, p := range ps {
			if p.ln != nil {
				p.ln.Close()
			}
		}
	}
}

// down closes the proxies to member m while it is down (up: listens
// again, on the same addresses): a connection to a member that does not
// run is refused at once, as without the proxies, rather than accepted
// and closed, which ZooKeeper's election takes for a peer that answers
// and backs off from for seconds.
func (n *cutNet) down(t *testing.T, m int, down bool) {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range n.proxies[m] {
		switch {
		case down && p.ln != nil:
			p.ln.Close()
			p.ln = nil
		case !down && p.ln == nil:
			if err := n.listen(p); err != nil {
				t.Fatalf("peer proxy: listen again on %s: %v", p.addr, err)
			}
		}
	}
}

// listen opens p's listener on p.addr and serves it.
func (n *cutNet) listen(p *peerProxy) error {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return err
	}
	p.ln, p.addr = ln, ln.Addr().String()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go n.forward(c, p.upstream, p.to, p.from(c))
		}
	}()
	return nil
}

// set cuts member m off (or heals it).
func (n *cutNet) set(m int, cut bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut[m] = cut
	close(n.changed)
	n.changed = make(chan struct{})
}

// wait returns once traffic between members a and b may flow (neither is
// cut off; -1 is no member), false when the network is closed.
func (n *cutNet) wait(a, b int) bool {
	for {
		n.mu.Lock()
		blocked := n.cut[a] || n.cut[b]
		ch := n.changed
		n.mu.Unlock()
		if !blocked {
			return true
		}
		select {
		case <-ch:
		case <-n.done:
			return false
		}
	}
}

func (n *cutNet) track(c net.Conn) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	select {
	case <-n.done:
		c.Close()
		return false
	default:
	}
	n.conns[c] = true
	return true
}

// proxy listens on a free loopback port and forwards each connection to
// upstream, which is member to's; from tells which member opened a
// connection (-1: none, or unknown). It returns the listening address.
func (n *cutNet) proxy(t *testing.T, upstream string, to int, from func(net.Conn) int) string {
	t.Helper()
	p := &peerProxy{addr: "127.0.0.1:0", upstream: upstream, to: to, from: from}
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.listen(p); err != nil {
		t.Fatalf("peer proxy: %v", err)
	}
	n.proxies[to] = append(n.proxies[to], p)
	return p.addr
}

// peerDialPatience is how long a proxy keeps dialling a member that
// does not listen yet before it closes the connection it accepted.
const peerDialPatience = 5 * time.Second

// forward dials upstream, polling it for up to peerDialPatience, and
// pumps both ways. A proxy accepts at once, which the member behind it
// may not: a ZooKeeper leader listens for its followers only once
// elected, and a follower that found its connection accepted and then
// closed gives the election up and starts another, which its leader
// waits out for initLimit (elections of 5 to 19s, against 0.5s without
// the proxies). Without a proxy the follower's connection is refused and
// it tries again at once; holding the connection until the leader
// listens is as close.
func (n *cutNet) forward(c net.Conn, upstream string, to, from int) {
	if !n.track(c) || !n.wait(from, to) {
		c.Close()
		return
	}
	var u net.Conn
	for deadline := time.Now().Add(peerDialPatience); ; {
		var err error
		if u, err = net.DialTimeout("tcp", upstream, time.Second); err == nil {
			break
		}
		select {
		case <-n.done:
		case <-time.After(10 * time.Millisecond):
			if time.Now().Before(deadline) {
				continue
			}
		}
		c.Close()
		return
	}
	if !n.track(u) {
		c.Close()
		return
	}
	go n.pump(u, c, from, to)
	n.pump(c, u, from, to)
}

// pump copies src to dst, holding each read while a or b is cut off.
func (n *cutNet) pump(dst, src net.Conn, a, b int) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			if !n.wait(a, b) {
				return
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// procSource returns a function that tells which process opened a
// connection accepted on loopback, from /proc: the socket whose local
// port is the connection's remote port, and the process holding it,
// whose command line holds marks[i] (i is the answer). -1 when none
// does.
func procSource(marks func() []string) func(net.Conn) int {
	return func(c net.Conn) int {
		remote, ok := c.RemoteAddr().(*net.TCPAddr)
		if !ok {
			return -1
		}
		local := c.LocalAddr().(*net.TCPAddr)
		inode := socketInode(remote.Port, local.Port)
		if inode == "" {
			return -1
		}
		ms := marks()
		procs, _ := os.ReadDir("/proc")
		for _, p := range procs {
			if _, err := strconv.Atoi(p.Name()); err != nil {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
			if err != nil {
				continue
			}
			for i, m := range ms {
				if m == "" || !strings.Contains(string(cmdline), m) {
					continue
				}
				fds, _ := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
				for _, fd := range fds {
					if l, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name())); err == nil && l == "socket:["+inode+"]" {
						return i
					}
				}
			}
		}
		return -1
	}
}

// socketInode finds in /proc/net/tcp the inode of the loopback socket
// from port localPort to port remotePort.
func socketInode(localPort, remotePort int) string {
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", localPort)
	peer := fmt.Sprintf(":%04X", remotePort)
	sc := bufio.NewScanner(io.Reader(f))
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 10 {
			continue
		}
		if strings.HasSuffix(fs[1], want) && strings.HasSuffix(fs[2], peer) {
			return fs[9]
		}
	}
	return ""
}
