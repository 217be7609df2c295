//go:build linux

package integration

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// cutNet is the quorum tests' network between cluster members: proxies
// that carry every connection the members open to each other (ZooKeeper's
// quorum and election ports, etcd's peer port) and hold it, both ways,
// across a cut. A member cut off neither sends to nor hears from the
// others; its clients' connections, which do not pass here, stay up.
//
// A cut holds bytes rather than dropping them, as a partition does to
// TCP: senders block once the buffers are full, the peers' own timeouts
// notice the silence, and a connection that outlives the cut resumes
// where it stopped. A connection closed on one side during a cut is
// closed on the other only when the cut heals (no FIN crosses a
// partition either). A connection opened across a cut is accepted and
// held until the cut heals (or the peer gives up), as a SYN would be
// retransmitted.
//
// What a cut held is counted (heldBytes, heldConns), so that a test can
// show that its cut reached the member; and bypasses looks in /proc for a
// connection between members that does not pass a proxy.
type cutNet struct {
	mu      sync.Mutex
	cut     map[int]bool
	changed chan struct{} // closed and replaced on every change
	done    chan struct{}
	conns   map[net.Conn]bool
	// proxies to each member, so that a member down refuses connections
	// as it would without them.
	proxies map[int][]*peerProxy
	// elections are the election proxies by [from, to]: the address a
	// member announces on an election connection is rewritten to the
	// proxy the other member reaches it through.
	elections map[[2]int]*peerProxy
	held      map[heldKey]int64 // bytes a cut held
	heldConns map[heldKey]int   // connections opened across a cut, held
	carried   map[string]int    // connections forwarded, by kind of port
	// faults are what went wrong in the proxies themselves: a connection
	// whose opener /proc could not name, an announced address not
	// rewritten. Each fails the test (see checkFaults).
	faults []string
}

// Members of a connection that is not between two known members.
const (
	noMember      = -1 // none: a connection from outside the cluster
	unknownMember = -2 // a member that could not be named: held by any cut
	goneMember    = -3 // the opener's socket is gone (closed, or its process killed): nothing to carry
)

// heldKey counts what a cut held of member m's traffic: on which kind of
// port, and whether m sent it ("out") or was to receive it ("in").
type heldKey struct {
	m    int
	kind string
	dir  string
}

// peerProxy is one proxy's listener and where it forwards.
type peerProxy struct {
	addr     string
	upstream string
	to       int
	kind     string // quorum, election (ZooKeeper), peer (etcd)
	from     func(net.Conn) int
	ln       net.Listener // nil while its member is down
}

func newCutNet(t *testing.T) *cutNet {
	n := &cutNet{cut: map[int]bool{}, changed: make(chan struct{}), done: make(chan struct{}), conns: map[net.Conn]bool{},
		proxies: map[int][]*peerProxy{}, elections: map[[2]int]*peerProxy{}, held: map[heldKey]int64{}, heldConns: map[heldKey]int{},
		carried: map[string]int{}}
	t.Cleanup(n.close)
	// The proxies' own faults fail the test however it ends.
	t.Cleanup(func() { n.checkFaults(t) })
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
			go n.forward(c, p)
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

// blocked reports whether traffic between a and b is held now; n.mu is
// held. A member that could not be named is held by any cut.
func (n *cutNet) blocked(a, b int) bool {
	if a == unknownMember || b == unknownMember {
		for _, c := range n.cut {
			if c {
				return true
			}
		}
		return false
	}
	return n.cut[a] || n.cut[b]
}

// wait returns once traffic between members a and b may flow (neither is
// cut off; noMember is no member), false when the network is closed.
// held, when a cut held the traffic, is called once with the members
// cut off.
func (n *cutNet) wait(a, b int, held func(cutA, cutB bool)) bool {
	for first := true; ; first = false {
		n.mu.Lock()
		blocked := n.blocked(a, b)
		if blocked && first && held != nil {
			held(n.cut[a], n.cut[b])
		}
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

// fault notes a fault of the proxies themselves.
func (n *cutNet) fault(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.faults = append(n.faults, fmt.Sprintf(format, args...))
}

// proxy listens on a free loopback port and forwards each connection to
// upstream, which is member to's port of the given kind; from tells
// which member opened a connection (noMember: none; unknownMember: one
// that could not be named, which fails the test). It returns the
// listening address.
func (n *cutNet) proxy(t *testing.T, upstream string, to int, kind string, from func(net.Conn) int) string {
	t.Helper()
	return n.add(t, &peerProxy{addr: "127.0.0.1:0", upstream: upstream, to: to, kind: kind, from: from}).addr
}

// electionProxy is ZooKeeper's election port of member to as member from
// reaches it: a proxy of its own that rewrites the address from
// announces (see zktest.QuorumSettings.Election).
func (n *cutNet) electionProxy(t *testing.T, upstream string, from, to int) string {
	t.Helper()
	p := n.add(t, &peerProxy{addr: "127.0.0.1:0", upstream: upstream, to: to, kind: "election", from: func(net.Conn) int { return from }})
	n.mu.Lock()
	n.elections[[2]int{from, to}] = p
	n.mu.Unlock()
	return p.addr
}

func (n *cutNet) add(t *testing.T, p *peerProxy) *peerProxy {
	t.Helper()
	n.mu.Lock()
	defer n.mu.Unlock()
	if err := n.listen(p); err != nil {
		t.Fatalf("peer proxy: %v", err)
	}
	n.proxies[p.to] = append(n.proxies[p.to], p)
	return p
}

// peerDialPatience is how long a proxy keeps dialling a member that
// does not listen yet before it closes the connection it accepted.
const peerDialPatience = 5 * time.Second

// forward dials p's upstream, polling it for up to peerDialPatience, and
// pumps both ways. A proxy accepts at once, which the member behind it
// may not: a ZooKeeper leader listens for its followers only once
// elected, and a follower that found its connection accepted and then
// closed gives the election up and starts another, which its leader
// waits out for initLimit (elections of 5 to 19s, against 0.5s without
// the proxies). Without a proxy the follower's connection is refused and
// it tries again at once; holding the connection until the leader
// listens is as close.
func (n *cutNet) forward(c net.Conn, p *peerProxy) {
	if !n.track(c) {
		return
	}
	from, to := p.from(c), p.to
	switch from {
	case goneMember:
		// Opened by a member as it died (killed or stopped) or
		// closed at once: no process is left to hold.
		c.Close()
		return
	case unknownMember:
		n.fault("%s: %s proxy of m%d: could not tell which member opened the connection from %s (/proc: %s); it was held by every cut",
			fmtTick(time.Now()), p.kind, to, c.RemoteAddr(), openerOf(c))
	}
	opened := func(cutFrom, cutTo bool) {
		if cutFrom {
			n.heldConns[heldKey{from, p.kind, "out"}]++
		}
		if cutTo {
			n.heldConns[heldKey{to, p.kind, "in"}]++
		}
	}
	if !n.wait(from, to, opened) {
		c.Close()
		return
	}
	var u net.Conn
	for deadline := time.Now().Add(peerDialPatience); ; {
		var err error
		if u, err = net.DialTimeout("tcp", p.upstream, time.Second); err == nil {
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
	n.mu.Lock()
	n.carried[p.kind]++
	n.mu.Unlock()
	if p.kind == "election" {
		if err := n.rewriteHello(u, c, from, to); err != nil {
			n.fault("election proxy m%d->m%d: the first message: %v", from, to, err)
			c.Close()
			u.Close()
			return
		}
	}
	go n.pump(u, c, from, to, p.kind)
	n.pump(c, u, to, from, p.kind)
}

// zkHelloVersions are the protocol versions of ZooKeeper's election
// connections whose first message carries the sender's election address
// (QuorumCnxManager's PROTOCOL_VERSION_V1 and V2).
var zkHelloVersions = []int64{-65536, -65535}

// rewriteHello copies the first message of a ZooKeeper election
// connection from src (member from) to dst (member to), with the
// election address from announces replaced by the proxy to reaches from
// through: to answers a connection from a lower member by connecting
// back to that address.
func (n *cutNet) rewriteHello(dst, src net.Conn, from, to int) error {
	var head [8]byte
	if _, err := io.ReadFull(src, head[:]); err != nil {
		return err
	}
	version := int64(binary.BigEndian.Uint64(head[:]))
	if !slices.Contains(zkHelloVersions, version) {
		if version >= 0 {
			// The old protocol: the server ID alone, no address.
			return n.send(dst, head[:], from, to)
		}
		return fmt.Errorf("unknown protocol version %d", version)
	}
	var rest [12]byte // server ID, address length
	if _, err := io.ReadFull(src, rest[:]); err != nil {
		return err
	}
	size := binary.BigEndian.Uint32(rest[8:])
	if size == 0 || size > 4096 {
		return fmt.Errorf("announced address of %d bytes", size)
	}
	announced := make([]byte, size)
	if _, err := io.ReadFull(src, announced); err != nil {
		return err
	}
	n.mu.Lock()
	back := n.elections[[2]int{to, from}]
	n.mu.Unlock()
	if back == nil {
		return fmt.Errorf("no election proxy from m%d to m%d for the announced address %q", to, from, announced)
	}
	addr := []byte(back.addr)
	msg := append(append(head[:], rest[:8]...), binary.BigEndian.AppendUint32(nil, uint32(len(addr)))...)
	return n.send(dst, append(msg, addr...), from, to)
}

// send writes b from member from to member to, held while a cut lasts.
func (n *cutNet) send(dst net.Conn, b []byte, from, to int) error {
	if !n.wait(from, to, nil) {
		return errors.New("network closed")
	}
	_, err := dst.Write(b)
	return err
}

// pump copies src (member sender) to dst (member receiver), holding each
// read while either is cut off, and a close too.
func (n *cutNet) pump(dst, src net.Conn, sender, receiver int, kind string) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		k, err := src.Read(buf)
		if k > 0 {
			held := func(cutS, cutR bool) {
				if cutS {
					n.held[heldKey{sender, kind, "out"}] += int64(k)
				}
				if cutR {
					n.held[heldKey{receiver, kind, "in"}] += int64(k)
				}
			}
			if !n.wait(sender, receiver, held) {
				return
			}
			if _, werr := dst.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			n.wait(sender, receiver, nil)
			return
		}
	}
}

// heldStats returns what cuts have held of member m's traffic so far:
// bytes and connections, by kind of port and direction.
func (n *cutNet) heldStats(m int) (bytes map[string]int64, conns map[string]int) {
	n.mu.Lock()
	defer n.mu.Unlock()
	bytes, conns = map[string]int64{}, map[string]int{}
	for k, v := range n.held {
		if k.m == m {
			bytes[k.kind+" "+k.dir] += v
		}
	}
	for k, v := range n.heldConns {
		if k.m == m {
			conns[k.kind+" "+k.dir] += v
		}
	}
	return bytes, conns
}

// carriedCounts returns how many connections the proxies forwarded, by
// kind of port.
func (n *cutNet) carriedCounts() map[string]int {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]int{}
	for k, v := range n.carried {
		out[k] = v
	}
	return out
}

// checkFaults fails the test for every fault of the proxies noted so far.
func (n *cutNet) checkFaults(t *testing.T) {
	t.Helper()
	n.mu.Lock()
	faults := n.faults
	n.faults = nil
	n.mu.Unlock()
	for _, f := range faults {
		t.Error(f)
	}
}

// bypasses looks in /proc for established connections between two
// member processes (found by the client addresses they listen on): every
// connection between members should run from a member to a proxy of the
// test process, and from there to the other member, so a connection with
// a member at each end is one that no cut holds. It returns one line for
// each.
func (n *cutNet) bypasses(clients []string) ([]string, error) {
	socks, err := tcpSockets()
	if err != nil {
		return nil, err
	}
	listening := map[string]string{} // local address -> inode
	for _, s := range socks {
		if s.state == "0A" {
			listening[s.local] = s.inode
		}
	}
	owner := map[string]int{} // socket inode -> member pid
	for _, addr := range clients {
		inode, ok := listening[addr]
		if !ok {
			continue // the member is down
		}
		pid := socketPid(inode)
		if pid == 0 {
			continue
		}
		fds, err := socketInodes(pid)
		if err != nil {
			continue // exited meanwhile
		}
		for fd := range fds {
			owner[fd] = pid
		}
	}
	byLocal := map[string]tcpSocket{}
	for _, s := range socks {
		byLocal[s.local] = s
	}
	var out []string
	for _, s := range socks {
		a, ok := owner[s.inode]
		if s.state != "01" || !ok {
			continue
		}
		peer, ok := byLocal[s.remote]
		if !ok || peer.remote != s.local {
			continue
		}
		if b, ok := owner[peer.inode]; ok && b != a && s.local < s.remote {
			out = append(out, fmt.Sprintf("%s (pid %d) <-> %s (pid %d)", s.local, a, s.remote, b))
		}
	}
	return out, nil
}

// checkBypasses fails the test for each connection between members that
// passes no proxy, and when /proc cannot be read; clients are the
// members' client addresses.
func (n *cutNet) checkBypasses(t *testing.T, when string, clients []string) {
	t.Helper()
	b, err := n.bypasses(clients)
	if err != nil {
		t.Errorf("%s: cannot check that every connection between members passes a proxy: %v", when, err)
	}
	for _, line := range b {
		t.Errorf("%s: a connection between members passes no proxy (a cut would not hold it): %s", when, line)
	}
}

// tcpSocket is one line of /proc/net/tcp or tcp6.
type tcpSocket struct {
	local, remote string // 127.0.0.1:port; remote empty when it is not IPv4
	state         string // hex, 01 is established
	inode         string
}

// tcpSockets reads the IPv4 sockets of /proc/net/tcp and the IPv4-mapped
// ones of tcp6.
func tcpSockets() ([]tcpSocket, error) {
	var out []tcpSocket
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fs := strings.Fields(line)
			if len(fs) < 10 {
				continue
			}
			// A listening socket of tcp6 has the unspecified
			// address (not IPv4-mapped) as its remote: kept, with
			// no remote.
			l, ok := procAddr(fs[1])
			r, _ := procAddr(fs[2])
			if ok {
				out = append(out, tcpSocket{local: l, remote: r, state: fs[3], inode: fs[9]})
			}
		}
	}
	return out, nil
}

// procAddr decodes an address of /proc/net/tcp ("0100007F:1F90") or of
// tcp6 when it is IPv4-mapped, as "127.0.0.1:8080".
func procAddr(s string) (string, bool) {
	host, port, ok := strings.Cut(s, ":")
	if !ok {
		return "", false
	}
	p, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return "", false
	}
	switch len(host) {
	case 32: // tcp6: four little-endian words; IPv4-mapped is ::ffff:a.b.c.d
		if host[:24] != "0000000000000000FFFF0000" {
			return "", false
		}
		host = host[24:]
	case 8:
	default:
		return "", false
	}
	v, err := strconv.ParseUint(host, 16, 32)
	if err != nil {
		return "", false
	}
	ip := net.IPv4(byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(p))), true
}

// socketInodes returns the inodes of the sockets process pid holds.
func socketInodes(pid int) (map[string]bool, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, fd := range fds {
		l, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if inode, ok := strings.CutPrefix(l, "socket:["); err == nil && ok {
			out[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return out, nil
}

// socketPid returns the process holding socket inode; 0 when none does.
func socketPid(inode string) int {
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		if fds, err := socketInodes(pid); err == nil && fds[inode] {
			return pid
		}
	}
	return 0
}

// procSource returns a function that tells which process opened a
// connection accepted on loopback, from /proc: the socket whose local
// port is the connection's remote port, and the process holding it,
// whose command line holds marks[i] (i is the answer). goneMember when
// the opener's socket is gone at every look (its process was killed as it
// connected, or it closed the connection at once), unknownMember when it
// is there but no marked process holds it after a few tries: a fault the
// test reports (the opener's socket is in /proc before it connects).
func procSource(marks func() []string) func(net.Conn) int {
	return func(c net.Conn) int {
		gone := true
		for try := 0; try < 10; try++ {
			if try > 0 {
				time.Sleep(5 * time.Millisecond)
			}
			i := procOpener(c, marks())
			if i >= 0 {
				return i
			}
			gone = gone && i == goneMember
		}
		if gone {
			return goneMember
		}
		return unknownMember
	}
}

// openerOf describes the process that opened c, for a message.
func openerOf(c net.Conn) string {
	remote, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return "not TCP"
	}
	inode := socketInode(remote.Port, c.LocalAddr().(*net.TCPAddr).Port)
	if inode == "" || inode == "0" {
		return "its socket is gone"
	}
	pid := socketPid(inode)
	if pid == 0 {
		return "socket " + inode + ", held by no process"
	}
	cmd, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	line := strings.ReplaceAll(string(cmd), "\x00", " ")
	if len(line) > 200 {
		line = line[:200] + "..."
	}
	return fmt.Sprintf("pid %d: %s", pid, line)
}

// procOpener is procSource's one look: the member, goneMember when the
// opener's socket is not in /proc or no process holds it any more
// (orphaned: inode 0, or its process is exiting and has closed its
// descriptors, as a member killed or stopped while it connects), or -1
// when a process that is no member holds it.
func procOpener(c net.Conn, ms []string) int {
	remote, ok := c.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return -1
	}
	local := c.LocalAddr().(*net.TCPAddr)
	inode := socketInode(remote.Port, local.Port)
	if inode == "" || inode == "0" {
		return goneMember
	}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
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
			if fds, err := socketInodes(pid); err == nil && fds[inode] {
				return i
			}
		}
	}
	for _, p := range procs {
		if pid, err := strconv.Atoi(p.Name()); err == nil {
			if fds, err := socketInodes(pid); err == nil && fds[inode] {
				return -1 // held, by a process that is no member
			}
		}
	}
	return goneMember
}

// socketInode finds in /proc/net/tcp (or tcp6) the inode of the loopback
// socket from port localPort to port remotePort.
func socketInode(localPort, remotePort int) string {
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		if inode := socketInodeIn(f, localPort, remotePort); inode != "" {
			return inode
		}
	}
	return ""
}

func socketInodeIn(file string, localPort, remotePort int) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	want := fmt.Sprintf(":%04X", localPort)
	peer := fmt.Sprintf(":%04X", remotePort)
	sc := bufio.NewScanner(f)
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
