package zookeeper_test

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/holder/holdertest"
	"github.com/idsql/idsql/holder/zookeeper"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/zktest"
)

// chroots gives every (sub)test one chroot shared by all its holders.
var chroots sync.Map // *testing.T -> string

func chroot(t *testing.T) ([]string, string) {
	t.Helper()
	if c, ok := chroots.Load(t); ok {
		return zktest.Servers(t), c.(string)
	}
	servers, c := zktest.Chroot(t)
	chroots.Store(t, c)
	t.Cleanup(func() { chroots.Delete(t) })
	return servers, c
}

// sessionTimeout is the session timeout of newHolder's holders.
const sessionTimeout = 4 * time.Second

func newHolder(t *testing.T, s zookeeper.Settings) *zookeeper.Holder {
	t.Helper()
	if s.Servers == nil {
		s.Servers, s.Root = chroot(t)
	}
	if s.SessionTimeout == 0 {
		s.SessionTimeout = sessionTimeout
	}
	if s.Report == 0 {
		s.Report = 300 * time.Millisecond
	}
	if s.Logger == nil {
		s.Logger = newTestLogger(t)
	}
	h, err := zookeeper.New(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func TestConformance(t *testing.T) {
	holdertest.RunModes(t, func(t *testing.T, now func() time.Time, sticky bool) holder.Holder {
		mode := zookeeper.Recycle
		if sticky {
			mode = zookeeper.Sticky
		}
		return newHolder(t, zookeeper.Settings{Mode: mode, Now: now})
	})
}

func TestStickyFirstStartAndCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Now()
	clock := func() time.Time { return now }
	h := newHolder(t, zookeeper.Settings{Mode: zookeeper.Sticky, CacheDir: dir, Now: clock})
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{Host: "h", Port: 1}, WorkerBits: 4}
	var first []int64
	for i, table := range []string{"orders", "users"} {
		req.Table = table
		l, err := h.Acquire(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, l.WorkerID())
		if l.WorkerID() != int64(i) {
			t.Errorf("%s: worker %d on the %d-th node ever created", table, l.WorkerID(), i)
		}
		l.Release(ctx, time.Time{})
	}
	// Restart: same worker ID.
	req.Table = "orders"
	l, err := newHolder(t, zookeeper.Settings{Mode: zookeeper.Sticky, CacheDir: dir, Now: clock}).Acquire(ctx, req)
	if err != nil || l.WorkerID() != first[0] {
		t.Fatalf("restart: worker %v err %v, want %d", l, err, first[0])
	}
	l.Release(ctx, time.Time{})
	// ZooKeeper unreachable: the cache file serves, with the clock check.
	dead := zookeeper.Settings{Servers: []string{deadAddr(t)}, Mode: zookeeper.Sticky, CacheDir: dir,
		ConnectTimeout: 300 * time.Millisecond, Now: clock}
	l, err = newHolder(t, dead).Acquire(ctx, req)
	if err != nil || l.WorkerID() != first[0] {
		t.Fatalf("from cache: worker %v err %v, want %d", l, err, first[0])
	}
	l.Release(ctx, time.Time{})
	behind := func() time.Time { return now.Add(-time.Hour) }
	dead.Now = behind
	l, err = newHolder(t, dead).Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	_, err = snowflake.New(ctx, l, snowflake.Settings{Clock: fixedClock(behind)})
	var cb *snowflake.ClockBehindError
	if !errors.As(err, &cb) {
		t.Fatalf("from cache with the clock behind: snowflake.New = %v, want *snowflake.ClockBehindError", err)
	}
	l.Release(ctx, time.Time{})
	req.Table = "never"
	if _, err := newHolder(t, dead).Acquire(ctx, req); !errors.Is(err, zookeeper.ErrUnavailable) {
		t.Fatalf("no cache file: err = %v, want ErrUnavailable", err)
	}
}

// TestStickyCacheOnlyAtStart: a sticky lease held through a ZooKeeper
// session and lost with it (the server stopped) is not taken up again from
// the cache file by the same holder, which may be cut off while another
// process of the identity owns it on ZooKeeper; Acquire refuses until
// ZooKeeper answers, and then leases through it again. A holder that never
// had a session still starts from the cache (TestStickyFirstStartAndCache).
func TestStickyCacheOnlyAtStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := zktest.StartServer(t)
	h := newHolder(t, zookeeper.Settings{Servers: []string{srv.Addr()}, Root: "/cacheonce", Mode: zookeeper.Sticky,
		CacheDir: t.TempDir(), ConnectTimeout: 300 * time.Millisecond})
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{Host: "h", Port: 1}, WorkerBits: 4}
	l, err := h.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	w := l.WorkerID()
	srv.Stop()
	waitFor(t, "the lease to end with the session", func() bool {
		select {
		case <-l.Done():
			return true
		default:
			return false
		}
	})
	l.Release(ctx, time.Time{})
	if got, err := h.Acquire(ctx, req); err == nil || !errors.Is(err, zookeeper.ErrUnavailable) || !strings.Contains(err.Error(), "does not serve identity") {
		t.Fatalf("Acquire with ZooKeeper down after a session lease: %v, %v; want ErrUnavailable refusing the cache file", got, err)
	}
	srv.Start()
	waitFor(t, "a lease through ZooKeeper again", func() bool {
		l, err := h.Acquire(ctx, req)
		if err != nil {
			return false
		}
		defer l.Release(ctx, time.Time{})
		if l.WorkerID() != w {
			t.Errorf("worker %d after ZooKeeper came back, want the identity's %d", l.WorkerID(), w)
		}
		return true
	})
}

// fixedClock is a snowflake.Clock reading now; it never sleeps.
type fixedClock func() time.Time

func (c fixedClock) Now() time.Time { return c() }

func (c fixedClock) Sleep(ctx context.Context, d time.Duration) error { return ctx.Err() }

func deadAddr(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// sniffer is a Dialer that remembers the session ID and password from the
// last connect response, so a test can expire the session.
type sniffer struct {
	mu     sync.Mutex
	id     int64
	passwd []byte
	server string
}

func (s *sniffer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	return &sniffConn{Conn: c, s: s, addr: addr}, nil
}

type sniffConn struct {
	net.Conn
	s    *sniffer
	addr string
	buf  []byte
	done bool
}

func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if !c.done {
		c.buf = append(c.buf, p[:n]...)
		// len(4) proto(4) timeout(4) session(8) pwlen(4) pw
		if len(c.buf) >= 24 {
			pl := int(binary.BigEndian.Uint32(c.buf[20:24]))
			if len(c.buf) >= 24+pl {
				c.s.mu.Lock()
				c.s.id = int64(binary.BigEndian.Uint64(c.buf[12:20]))
				c.s.passwd = append([]byte(nil), c.buf[24:24+pl]...)
				c.s.server = c.addr
				c.s.mu.Unlock()
				c.done = true
			}
		}
	}
	return n, err
}

// expire ends the sniffed session: a second connection with the same ID and
// password, then a close-session request on it.
func (s *sniffer) expire(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	id, pw, addr := s.id, s.passwd, s.server
	s.mu.Unlock()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	req := binary.BigEndian.AppendUint32(nil, 0)   // length, set below
	req = binary.BigEndian.AppendUint32(req, 0)    // protocol version
	req = binary.BigEndian.AppendUint64(req, 0)    // last zxid seen
	req = binary.BigEndian.AppendUint32(req, 4000) // timeout
	req = binary.BigEndian.AppendUint64(req, uint64(id))
	req = binary.BigEndian.AppendUint32(req, uint32(len(pw)))
	req = append(req, pw...)
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 4)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, binary.BigEndian.Uint32(head))); err != nil {
		t.Fatal(err)
	}
	closeReq := []byte{0, 0, 0, 8, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xf5} // xid 1, opcode -11 (close session)
	if _, err := c.Write(closeReq); err != nil {
		t.Fatal(err)
	}
	io.ReadFull(c, make([]byte, 4)) // the reply, or EOF
}

// worker issues IDs for one table, re-acquiring whenever the lease ends,
// and records every ID.
type worker struct {
	hold   time.Duration // how long it keeps a lease; zero means 300ms
	leases atomic.Int64
	lost   atomic.Int64 // leases that ended lost, not released by run
	ids    atomic.Int64
}

func (w *worker) run(ctx context.Context, t *testing.T, h holder.Holder, table string, inst int, seen *sync.Map) {
	req := holder.Request{Namespace: "ns", Table: table, Instance: holdertest.Identity(inst), WorkerBits: 1}
	for ctx.Err() == nil {
		l, err := h.Acquire(ctx, req)
		if err != nil {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		until := time.Now().Add(cmp.Or(w.hold, 300*time.Millisecond)) // then churn
		w.leases.Add(1)
		gen, err := snowflake.New(ctx, l, snowflake.Settings{})
		if errors.Is(err, snowflake.ErrStopped) {
			// The session dropped between the claim and the start: the
			// lease is fenced already; acquire again.
			l.Release(context.Background(), time.Time{})
			continue
		}
		if err != nil {
			if ctx.Err() == nil { // not the test ending while New waited for the horizon
				t.Errorf("snowflake.New: %v", err)
			}
			l.Release(context.Background(), time.Time{})
			return
		}
		for ctx.Err() == nil && time.Now().Before(until) {
			id, err := gen.NextID(ctx)
			if err != nil {
				if !errors.Is(err, snowflake.ErrStopped) && ctx.Err() == nil {
					t.Errorf("NextID: %v", err)
				}
				break
			}
			if _, dup := seen.LoadOrStore(id, table); dup {
				t.Errorf("ID %d issued twice", id)
			}
			w.ids.Add(1)
			time.Sleep(50 * time.Microsecond)
		}
		if errors.Is(l.Err(), holder.ErrLeaseLost) {
			w.lost.Add(1)
		}
		l.Release(context.Background(), gen.Stop())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
	}
}

// TestSessionExpiryAndRestart forces the session of one of two competing
// recycle holders to expire, then stops the server for longer than the
// session timeout: the generators stop (their leases are lost, not just
// released by the workers' churn), re-acquire, and no ID is issued twice.
func TestSessionExpiryAndRestart(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	var sn sniffer
	settings := zookeeper.Settings{Servers: []string{srv.Addr()}, Mode: zookeeper.Recycle, Root: "/expiry"}
	hs := settings
	hs.Dialer = sn.dial
	a, b := newHolder(t, hs), newHolder(t, settings)
	ctx, cancel := context.WithCancel(context.Background())
	var seen sync.Map
	// a keeps its lease until it loses it; the others churn.
	wa, wb := worker{hold: time.Hour}, worker{}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); wa.run(ctx, t, a, "orders", 0, &seen) }()
	waitFor(t, "first leases", func() bool { return wa.leases.Load() >= 1 && wa.ids.Load() > 100 })
	go func() { defer wg.Done(); wb.run(ctx, t, b, "users", 1, &seen) }()
	// A third competitor for the two worker IDs makes sure a freed one is
	// taken at once.
	var wi worker
	go func() { defer wg.Done(); wi.run(ctx, t, b, "items", 2, &seen) }()
	waitFor(t, "b's first IDs", func() bool { return wb.ids.Load() > 100 })
	if n := wa.lost.Load() + wb.lost.Load() + wi.lost.Load(); n > 0 {
		t.Fatalf("%d leases lost before any fault", n)
	}

	// The sniffed session is a's, and expire ends it: a gets a new one.
	sid := a.Conn().SessionID()
	sn.mu.Lock()
	sniffed := sn.id
	sn.mu.Unlock()
	if sniffed != sid {
		t.Fatalf("sniffed session %#x, but a's is %#x", sniffed, sid)
	}
	sn.expire(t)
	waitFor(t, "a new session after expiry", func() bool { s := a.Conn().SessionID(); return s != 0 && s != sid })
	waitFor(t, "a lease lost to the expiry", func() bool { return wa.lost.Load() > 0 })
	n := wa.ids.Load()
	waitFor(t, "IDs after expiry", func() bool { return wa.ids.Load() > n+100 })

	// Down for longer than the session timeout: the leases held when it
	// stops are lost, and nobody issues an ID once their deadlines have
	// passed, until it is back.
	lost := func() int64 { return wa.lost.Load() + wb.lost.Load() + wi.lost.Load() }
	issued := func() int64 { return wa.ids.Load() + wb.ids.Load() + wi.ids.Load() }
	l0, la := lost(), wa.lost.Load()
	srv.Stop()
	stopped := time.Now()
	time.Sleep(sessionTimeout)
	during := issued()
	time.Sleep(time.Second)
	if n := issued() - during; n > 0 {
		t.Errorf("%d IDs issued while the server was down, past the session timeout", n)
	}
	srv.Start()
	if down := time.Since(stopped); down < sessionTimeout {
		t.Fatalf("the server was down %s, not past the session timeout %s", down, sessionTimeout)
	}
	if wa.lost.Load() == la {
		t.Errorf("the server's stop did not end a's lease (all workers lost %d leases before it, %d after)", l0, lost())
	}
	// Holder b's tables (users, items) take turns on the one worker ID a
	// leaves them, each lease first waiting out the previous one's horizon:
	// which of the two issues after the restart is luck (items won every
	// turn for 10 s in one run, users' claims refused as exhausted), so b
	// is judged by both.
	bIDs := func() int64 { return wb.ids.Load() + wi.ids.Load() }
	na, nb := wa.ids.Load(), bIDs()
	waitFor(t, "IDs of both holders after restart", func() bool { return wa.ids.Load() > na+100 && bIDs() > nb+100 })
	cancel()
	wg.Wait()
	t.Logf("leases: a %d (%d lost), b %d (%d lost); IDs: a %d, b %d", wa.leases.Load(), wa.lost.Load(), wb.leases.Load(), wb.lost.Load(), wa.ids.Load(), wb.ids.Load())
}

// TestEnsembleMemberKilled kills one of three servers mid-run: the
// generators keep working (re-acquiring if their server was the one) and no
// ID is issued twice.
func TestEnsembleMemberKilled(t *testing.T) {
	t.Parallel()
	ens := zktest.StartEnsemble(t, 3)
	settings := zookeeper.Settings{Servers: ens.Addrs(), Mode: zookeeper.Recycle, Root: "/ensemble"}
	a, b := newHolder(t, settings), newHolder(t, settings)
	ctx, cancel := context.WithCancel(context.Background())
	var seen sync.Map
	var wa, wb worker
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); wa.run(ctx, t, a, "orders", 0, &seen) }()
	go func() { defer wg.Done(); wb.run(ctx, t, b, "users", 1, &seen) }()
	waitFor(t, "first IDs", func() bool { return wa.ids.Load() > 100 && wb.ids.Load() > 100 })
	ens.Member(0).Stop()
	na, nb := wa.ids.Load(), wb.ids.Load()
	waitFor(t, "IDs after the kill", func() bool { return wa.ids.Load() > na+1000 && wb.ids.Load() > nb+1000 })
	cancel()
	wg.Wait()
}

// TestChurnLookup: 8 recorded recycle holders x 4 tables on 16 worker IDs.
func TestChurnLookup(t *testing.T) {
	t.Parallel()
	holdertest.ChurnRecorded(t, 8, "zookeeper/recycle", zookeeper.ErrExhausted, func(t *testing.T) holder.Holder {
		return newHolder(t, zookeeper.Settings{Mode: zookeeper.Recycle})
	})
}

// Two live processes with one sticky identity never share its worker ID:
// the second waits for the first's claim to go and, as its session stays
// alive, refuses.
func TestStickySecondLiveProcessRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := zookeeper.Settings{Mode: zookeeper.Sticky, SessionTimeout: 2 * time.Second}
	first := newHolder(t, s)
	second := newHolder(t, s)
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{ID: "pod-0"}, WorkerBits: 4}
	l1, err := first.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release(ctx, time.Time{})
	l2, err := second.Acquire(ctx, req)
	if err == nil {
		l2.Release(ctx, time.Time{})
		t.Fatalf("second process got worker %d while the first holds %d", l2.WorkerID(), l1.WorkerID())
	}
	if !errors.Is(err, holder.ErrIdentityInUse) || !strings.Contains(err.Error(), "pod-0") {
		t.Fatalf("second Acquire = %v, want ErrIdentityInUse naming the identity", err)
	}
	// Once the first lets go, the identity is free again, same worker ID.
	w := l1.WorkerID()
	if err := l1.Release(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	l2, err = second.Acquire(ctx, req)
	if err != nil {
		t.Fatalf("Acquire after the first released: %v", err)
	}
	defer l2.Release(ctx, time.Time{})
	if l2.WorkerID() != w {
		t.Errorf("worker %d, want the identity's %d", l2.WorkerID(), w)
	}
}

func TestStickyRefusesIdentityWithoutPort(t *testing.T) {
	t.Parallel()
	holdertest.StickyRefusesUnidentified(t, newHolder(t, zookeeper.Settings{Mode: zookeeper.Sticky}))
}

// A lease's deadline counts from the session timeout the server
// negotiated: asking for more than the server's maximum (20 ticks) must
// not give a deadline beyond what the server grants.
func TestDeadlineUsesNegotiatedTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The test servers run with a 500ms tick: at most 10s are granted.
	h := newHolder(t, zookeeper.Settings{Mode: zookeeper.Recycle, SessionTimeout: 30 * time.Second,
		Margin: time.Second, Report: time.Second})
	start := time.Now()
	l, err := h.Acquire(ctx, holder.Request{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: "a"}, WorkerBits: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx, time.Time{})
	deadline, _, err := l.Validity()
	if err != nil {
		t.Fatal(err)
	}
	if got := deadline.Sub(start); got > 10*time.Second {
		t.Fatalf("deadline %s after the claim, beyond the server's 10s maximum session timeout", got)
	}
}

// droppingDialer remembers its connections so a test can cut them: the
// client reconnects within the same session.
type droppingDialer struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (d *droppingDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.mu.Lock()
		d.conns = append(d.conns, c)
		d.mu.Unlock()
	}
	return c, err
}

func (d *droppingDialer) drop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// A connection loss ends a recycle lease; releasing the lost lease and
// acquiring again (what keyset.Keys does) must reuse the claim, not leave it
// behind and take another worker ID each time.
func TestRecycleReconnectDoesNotLeakWorkerIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var d droppingDialer
	h := newHolder(t, zookeeper.Settings{Mode: zookeeper.Recycle, Dialer: d.dial})
	req := holder.Request{Namespace: "ns", Table: "orders", Instance: holder.Instance{ID: "a"}, WorkerBits: 4}
	l, err := h.Acquire(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		d.drop()
		select {
		case <-l.Done():
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the lease survived a connection loss", round)
		}
		if err := l.Release(ctx, time.Time{}); err != nil {
			t.Logf("round %d: Release of the lost lease: %v", round, err)
		}
		if l, err = h.Acquire(ctx, req); err != nil {
			t.Fatalf("round %d: Acquire after reconnect: %v", round, err)
		}
	}
	defer l.Release(ctx, time.Time{})
	_, root := chroot(t)
	children, _, err := h.Conn().Children(root + "/ns/workers")
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 {
		t.Fatalf("%d worker claims after 3 reconnects (%v), want 1", len(children), children)
	}
}

// The zookeeper kind passes its client's connection events to the logger
// idsql gives it, so a capture of a stalled process shows when its session
// was lost and granted.
func TestKindLogsClientEvents(t *testing.T) {
	servers, _ := chroot(t)
	kind, err := holderkind.Lookup("zookeeper")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var lines []string
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, string(p))
		return len(p), nil
	}), nil))
	h, err := kind.New(holderkind.Settings{Servers: servers, SessionTimeout: sessionTimeout, Now: time.Now, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	defer h.(io.Closer).Close()
	waitFor(t, "the client's authenticated line", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(lines, ""), "idsql: zookeeper client: authenticated: id=")
	})
}

// testLogger logs a holder's client events to its test, with the time,
// until the test ends (the client's goroutines may still log after).
type testLogger struct {
	t    *testing.T
	mu   sync.Mutex
	done bool
}

func newTestLogger(t *testing.T) *testLogger {
	l := &testLogger{t: t}
	t.Cleanup(func() {
		l.mu.Lock()
		l.done = true
		l.mu.Unlock()
	})
	return l
}

func (l *testLogger) Printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.done {
		l.t.Logf("%s zookeeper client: %s", time.Now().Format("15:04:05.000"), fmt.Sprintf(format, args...))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
