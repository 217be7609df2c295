package zookeeper

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/atomicfile"
	"github.com/idsql/idsql/internal/filelock"
)

// Mode selects how worker IDs are assigned.
type Mode string

// The modes; see the package documentation.
const (
	Sticky  Mode = "sticky"
	Recycle Mode = "recycle"
)

// Modes lists the modes, the default first.
var Modes = []Mode{Sticky, Recycle}

// Defaults of Settings.
const (
	DefaultRoot           = "/idsql"
	DefaultSessionTimeout = 10 * time.Second
	DefaultReport         = 3 * time.Second
	DefaultConnectTimeout = 5 * time.Second
)

// ErrExhausted means every worker ID of a recycle namespace is held.
var ErrExhausted = errors.New("zookeeper: worker IDs exhausted")

// ErrUnavailable means no ZooKeeper session could be had in time.
var ErrUnavailable = errors.New("zookeeper: no session")

// Settings configure a Holder. The zero value, plus Servers, is sticky mode
// with the defaults.
type Settings struct {
	// Servers are the ensemble's addresses, host:port.
	Servers []string
	// Mode is Sticky or Recycle; empty means Sticky.
	Mode Mode
	// Root is the node everything lives under; empty means DefaultRoot.
	Root string
	// SessionTimeout is the requested session timeout; 0 means
	// DefaultSessionTimeout. Leases count their deadlines from the timeout
	// the server negotiated (it clamps the request to 2..20 ticks).
	SessionTimeout time.Duration
	// Margin is how much before the server could expire the session a
	// lease's deadline falls; 0 means SessionTimeout/3.
	Margin time.Duration
	// Report is how often a lease writes its timestamp; 0 means
	// DefaultReport. It must be below SessionTimeout-Margin.
	Report time.Duration
	// ConnectTimeout bounds how long Acquire waits for a session before
	// failing (recycle) or falling back to the cache file (sticky); 0 means
	// DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// CacheDir holds sticky mode's cache files; empty means no cache and no
	// fallback.
	CacheDir string
	// Now is the clock for horizons and deadlines; nil means time.Now. Its
	// readings must carry Go's monotonic reading (time.Now().Add(d) does).
	Now func() time.Time
	// Dialer, if set, opens the connections to the servers.
	Dialer zk.Dialer
	// Logger receives the client's log lines; nil discards them.
	Logger zk.Logger
}

// Holder hands out worker IDs from ZooKeeper. Close it when done.
type Holder struct {
	s    Settings
	conn *zk.Conn

	mu      sync.Mutex
	epoch   uint64 // bumped whenever the session may be in doubt
	session bool   // the client reports a live session
	changed chan struct{}
	live    map[string]*lease // by node path, until Release
	claim   map[string]bool   // nodes an Acquire of this holder is claiming
	// held names the sticky identities (their cache files) this holder
	// has leased through a ZooKeeper session: their cache file serves no
	// later Acquire (see acquireSticky).
	held map[string]bool
	done chan struct{}

	negotiated atomic.Int64 // the session timeout the server granted, ns; 0 until known
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// negotiationLogger passes the client's log lines on and reads from them
// the session timeout the server negotiated, which the client does not
// export otherwise.
type negotiationLogger struct {
	h     *Holder
	inner zk.Logger
}

func (n negotiationLogger) Printf(format string, args ...any) {
	if strings.HasPrefix(format, "authenticated: id=%d, timeout=%d") && len(args) >= 2 {
		if ms, ok := args[1].(int32); ok && ms > 0 {
			n.h.negotiated.Store(int64(ms) * int64(time.Millisecond))
		}
	}
	n.inner.Printf(format, args...)
}

// sessionTimeout is the negotiated session timeout, or the requested one
// while the server has not answered yet.
func (h *Holder) sessionTimeout() time.Duration {
	if n := h.negotiated.Load(); n > 0 {
		return time.Duration(n)
	}
	return h.s.SessionTimeout
}

// fence is how long after a request the server answered the session is
// certainly alive, less the margin: a lease's deadline counts it from the
// request's send time.
func (h *Holder) fence() time.Duration {
	return h.sessionTimeout() - h.s.Margin
}

// horizon is the horizon a lease persists with a request sent at sent: one
// report past the deadline the request gives.
func (h *Holder) horizon(sent time.Time) time.Time {
	return sent.Add(h.fence() + h.s.Report)
}

// New validates s and starts connecting; it does not wait for a session.
func New(s Settings) (*Holder, error) {
	if len(s.Servers) == 0 {
		return nil, errors.New("zookeeper: Settings.Servers is empty")
	}
	if s.Mode == "" {
		s.Mode = Modes[0]
	}
	if !slices.Contains(Modes, s.Mode) {
		return nil, fmt.Errorf("zookeeper: Settings.Mode %q: want one of %v", s.Mode, Modes)
	}
	if s.Root == "" {
		s.Root = DefaultRoot
	}
	if !strings.HasPrefix(s.Root, "/") || (len(s.Root) > 1 && strings.HasSuffix(s.Root, "/")) {
		return nil, fmt.Errorf("zookeeper: Settings.Root %q must start and not end with /", s.Root)
	}
	if s.SessionTimeout <= 0 {
		s.SessionTimeout = DefaultSessionTimeout
	}
	if s.Margin <= 0 {
		s.Margin = s.SessionTimeout / 3
	}
	if s.Report <= 0 {
		s.Report = DefaultReport
		if fence := s.SessionTimeout - s.Margin; s.Report >= fence {
			s.Report = fence / 3
		}
	}
	if s.Report >= s.SessionTimeout-s.Margin {
		return nil, fmt.Errorf("zookeeper: Settings.Report %s must be below SessionTimeout-Margin (%s)", s.Report, s.SessionTimeout-s.Margin)
	}
	if s.ConnectTimeout <= 0 {
		s.ConnectTimeout = DefaultConnectTimeout
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Logger == nil {
		s.Logger = quiet{}
	}
	h := &Holder{s: s, live: map[string]*lease{}, claim: map[string]bool{}, held: map[string]bool{}, changed: make(chan struct{}), done: make(chan struct{})}
	dialer := s.Dialer
	if dialer == nil {
		dialer = net.DialTimeout
	}
	conn, _, err := zk.Connect(s.Servers, s.SessionTimeout,
		zk.WithLogger(negotiationLogger{h: h, inner: s.Logger}), zk.WithEventCallback(h.event), zk.WithDialer(dialer))
	if err != nil {
		return nil, fmt.Errorf("zookeeper: connect %v: %w", s.Servers, err)
	}
	h.conn = conn
	return h, nil
}

// Conn returns the client connection, for diagnostics and tests.
func (h *Holder) Conn() *zk.Conn { return h.conn }

// event runs on the client's goroutine for every session event, before
// anything else sees it: a recycle lease ends at the first sign of trouble.
func (h *Holder) event(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	up := ev.State == zk.StateHasSession
	if !up {
		h.epoch++
		for _, l := range h.live {
			if l.zk {
				// It stays registered until Release deletes its node.
				l.End(fmt.Errorf("%w: worker %d: zookeeper session %s", holder.ErrLeaseLost, l.WorkerID(), ev.State))
			}
		}
	}
	if up != h.session {
		h.session = up
		close(h.changed)
		h.changed = make(chan struct{})
	}
}

// waitSession waits for a live session and returns its epoch.
func (h *Holder) waitSession(ctx context.Context) (uint64, error) {
	t := time.NewTimer(h.s.ConnectTimeout)
	defer t.Stop()
	for {
		h.mu.Lock()
		up, epoch, ch := h.session, h.epoch, h.changed
		h.mu.Unlock()
		if up && h.conn.State() == zk.StateHasSession {
			return epoch, nil
		}
		select {
		case <-ch:
		case <-t.C:
			return 0, fmt.Errorf("%w with %v within %s", ErrUnavailable, h.s.Servers, h.s.ConnectTimeout)
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-h.done:
			return 0, errors.New("zookeeper: holder closed")
		}
	}
}

// Close ends every lease and closes the connection.
func (h *Holder) Close() error {
	h.mu.Lock()
	select {
	case <-h.done:
		h.mu.Unlock()
		return nil
	default:
	}
	close(h.done)
	leases := make([]*lease, 0, len(h.live))
	for _, l := range h.live {
		leases = append(leases, l)
	}
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), h.s.ConnectTimeout)
	defer cancel()
	for _, l := range leases {
		l.Release(ctx, time.Time{})
	}
	h.conn.Close()
	return nil
}

func (h *Holder) ensure(p string) error {
	if p == "/" {
		return nil
	}
	if ok, _, err := h.conn.Exists(p); err != nil {
		return err
	} else if ok {
		return nil
	}
	if err := h.ensure(path.Dir(p)); err != nil {
		return err
	}
	if _, err := h.conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		return err
	}
	return nil
}

// nodeData is what a worker node holds. Timestamp is the worker ID's
// horizon: every ID issued under it so far is stamped before it.
type nodeData struct {
	Table     string    `json:"table"`
	Instance  string    `json:"instance"`
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	PID       int       `json:"pid"`
	Timestamp time.Time `json:"timestamp"`
}

func parseData(b []byte) (nodeData, error) {
	var d nodeData
	if len(b) == 0 {
		return d, nil
	}
	err := json.Unmarshal(b, &d)
	return d, err
}

func (h *Holder) data(req holder.Request, ts time.Time) []byte {
	b, _ := json.Marshal(nodeData{Table: req.Table, Instance: req.Instance.Key(), Host: req.Instance.Host,
		Port: req.Instance.Port, PID: req.Instance.PID, Timestamp: ts})
	return b
}

// Acquire implements holder.Holder.
func (h *Holder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if h.s.Mode == Sticky {
		return h.acquireSticky(ctx, req)
	}
	return h.acquireRecycle(ctx, req)
}

// register adds l to the live set unless the session changed since epoch.
func (h *Holder) register(l *lease, epoch uint64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.epoch != epoch || !h.session || h.conn.State() != zk.StateHasSession {
		return false
	}
	if _, dup := h.live[l.node]; dup {
		return false
	}
	h.live[l.node] = l
	return true
}

func (h *Holder) unregister(l *lease) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.live[l.node] == l {
		delete(h.live, l.node)
		return true
	}
	return false
}

func (h *Holder) acquireRecycle(ctx context.Context, req holder.Request) (holder.Lease, error) {
	epoch, err := h.waitSession(ctx)
	if err != nil {
		return nil, err
	}
	base := path.Join(h.s.Root, req.Namespace)
	workers, stamps := base+"/workers", base+"/timestamps"
	if err := h.ensure(workers); err != nil {
		return nil, fmt.Errorf("zookeeper: create %s: %w", workers, err)
	}
	if err := h.ensure(stamps); err != nil {
		return nil, fmt.Errorf("zookeeper: create %s: %w", stamps, err)
	}
	for w := int64(0); w < req.MaxWorkers(); w++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		node := workers + "/" + strconv.FormatInt(w, 10)
		l, err := h.tryClaim(req, w, node, stamps+"/"+strconv.FormatInt(w, 10), epoch)
		if err != nil {
			return nil, err
		}
		if l != nil {
			return l, nil
		}
	}
	return nil, fmt.Errorf("%w: all %d worker IDs (2^%d worker bits) of namespace %q are held", ErrExhausted,
		req.MaxWorkers(), req.WorkerBits, req.Namespace)
}

// tryClaim claims worker w, or returns nil, nil when it is taken.
func (h *Holder) tryClaim(req holder.Request, w int64, node, stamp string, epoch uint64) (*lease, error) {
	// One claimer per node in this process, and none while a lease of
	// ours on it is not yet released.
	h.mu.Lock()
	_, busy := h.live[node]
	if busy || h.claim[node] {
		h.mu.Unlock()
		return nil, nil
	}
	h.claim[node] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.claim, node)
		h.mu.Unlock()
	}()
	sid := h.conn.SessionID()
	sent := h.s.Now()
	_, err := h.conn.Create(node, h.data(req, sent), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNodeExists) && h.orphan(node) {
		// Left by a lease of ours that was released while the session
		// was in doubt; its generator has stopped. Free it and retry.
		_, err = h.conn.Create(node, h.data(req, sent), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	}
	if errors.Is(err, zk.ErrNodeExists) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("zookeeper: claim %s: %w", node, err)
	}
	return h.startRecycle(req, w, node, stamp, sid, epoch)
}

// orphan deletes node if this session owns it and no lease of this holder
// does (leases stay registered until Release; the caller holds the claim),
// and reports whether it did.
func (h *Holder) orphan(node string) bool {
	_, stat, err := h.conn.Get(node)
	if err != nil || stat.EphemeralOwner == 0 || stat.EphemeralOwner != h.conn.SessionID() {
		return false
	}
	h.mu.Lock()
	_, live := h.live[node]
	if strings.HasSuffix(node, "/owner") {
		// A sticky claim: its lease is registered under the persistent node.
		_, live = h.live[path.Dir(node)]
	}
	h.mu.Unlock()
	return !live && h.conn.Delete(node, stat.Version) == nil
}

func (h *Holder) startRecycle(req holder.Request, w int64, node, stamp string, sid int64, epoch uint64) (*lease, error) {
	giveBack := func() { h.conn.Delete(node, -1) }
	b, _, err := h.conn.Get(stamp)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", stamp, err)
	}
	prev, err := parseData(b)
	if err != nil {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", stamp, err)
	}
	l := &lease{StaticLease: holder.NewStaticLease(w, prev.Timestamp), h: h, mode: Recycle, req: req,
		node: node, stamp: stamp, zk: true, sid: sid, stop: make(chan struct{})}
	l.SetClock(h.s.Now)
	if !h.register(l, epoch) {
		giveBack()
		return nil, fmt.Errorf("%w: the session changed while claiming worker %d", ErrUnavailable, w)
	}
	// The first horizon is persisted before any ID is issued.
	if err := l.report(); err != nil {
		h.unregister(l)
		giveBack()
		return nil, fmt.Errorf("zookeeper: claim worker %d: write horizon to %s: %w", w, stamp, err)
	}
	l.start()
	return l, nil
}

// lease is a worker lease of either mode.
type lease struct {
	*holder.StaticLease
	h     *Holder
	mode  Mode
	req   holder.Request
	node  string         // the worker node
	stamp string         // recycle: the horizon node
	owner string         // sticky: the ephemeral claim under the node
	cache string         // sticky: the cache file, if any
	lock  *filelock.Lock // sticky: the cache file's lock, if any
	zk    bool           // backed by a session (not the cache fallback)
	sid   int64          // the session the claim belongs to
	fence *time.Timer
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// report persists a new horizon and, when the write proves the claim's
// session alive, moves the lease's deadline and horizon forward.
func (l *lease) report() error {
	sent := l.h.s.Now()
	hz := l.h.horizon(sent)
	var err error
	switch {
	case l.mode == Recycle:
		err = l.writeStamp(hz)
	case l.zk:
		_, err = l.h.conn.Set(l.node, l.h.data(l.req, hz), -1)
	}
	if l.cache != "" {
		if cerr := writeCache(l.cache, cacheFile{WorkerID: l.WorkerID(), Horizon: hz}); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if !l.zk {
		l.Renew(time.Time{}, hz)
		return nil
	}
	// A request answered on the claim's session proves the server heard
	// from it no earlier than sent; a new session means the claim is gone.
	if sid := l.h.conn.SessionID(); sid != l.sid {
		l.End(fmt.Errorf("%w: worker %d: zookeeper session %#x replaced by %#x", holder.ErrLeaseLost, l.WorkerID(), l.sid, sid))
		return l.Err()
	}
	l.Renew(sent.Add(l.h.fence()), hz)
	if l.fence != nil {
		l.fence.Reset(l.Deadline().Sub(l.h.s.Now()))
	}
	return nil
}

// start runs the lease's reports and, for a session-backed lease, ends it
// on a timer at its deadline so Done closes promptly (the generator checks
// the deadline itself).
func (l *lease) start() {
	if l.zk {
		l.fence = time.AfterFunc(l.Deadline().Sub(l.h.s.Now()), func() {
			l.End(fmt.Errorf("%w: worker %d: no write to zookeeper succeeded for %s", holder.ErrLeaseLost, l.WorkerID(), l.h.fence()))
		})
	}
	l.wg.Add(1)
	go l.run()
}

func (l *lease) writeStamp(ts time.Time) error {
	b := l.h.data(l.req, ts)
	_, err := l.h.conn.Set(l.stamp, b, -1)
	if errors.Is(err, zk.ErrNoNode) {
		_, err = l.h.conn.Create(l.stamp, b, 0, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) {
			_, err = l.h.conn.Set(l.stamp, b, -1)
		}
	}
	return err
}

func (l *lease) run() {
	defer l.wg.Done()
	holder.KeepAlive(l, l.h.s.Report, l.stop, func() { l.report() })
}

// Release implements holder.Lease: it stops issuing, persists the final
// horizon last (when known) and gives the claim back.
func (l *lease) Release(ctx context.Context, last time.Time) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		if l.fence != nil {
			l.fence.Stop()
		}
		if l.lock != nil {
			defer l.lock.Unlock()
		}
		if l.cache != "" && !last.IsZero() {
			err = writeCache(l.cache, cacheFile{WorkerID: l.WorkerID(), Horizon: last})
		}
		if !l.zk {
			return
		}
		// Stay registered until the claim is deleted: a lost lease's claim
		// may still be ours, and nobody in this process may take it before
		// the generator on this lease has stopped for sure, which the
		// caller's Release says.
		defer l.h.unregister(l)
		if l.h.conn.State() != zk.StateHasSession || l.h.conn.SessionID() != l.sid {
			return // the claim goes with the session, or on a later Release
		}
		if !last.IsZero() {
			if l.mode == Recycle {
				err = errors.Join(err, l.writeStamp(last))
			} else {
				_, serr := l.h.conn.Set(l.node, l.h.data(l.req, last), -1)
				err = errors.Join(err, serr)
			}
		}
		claim := l.node
		if l.mode == Sticky {
			claim = l.owner
		}
		if _, stat, gerr := l.h.conn.Get(claim); gerr == nil && stat.EphemeralOwner == l.sid {
			if derr := l.h.conn.Delete(claim, stat.Version); derr != nil && !errors.Is(derr, zk.ErrNoNode) {
				err = errors.Join(err, derr)
			}
		}
		if err != nil {
			err = fmt.Errorf("zookeeper: release worker %d: %w", l.WorkerID(), err)
		}
	})
	return err
}

// The sticky mode.

func escape(s string) string { return url.PathEscape(strings.ReplaceAll(s, "-", "%2D")) }

func (h *Holder) acquireSticky(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Instance.CheckSticky(); err != nil {
		return nil, fmt.Errorf("zookeeper: %w", err)
	}
	name := escape(req.Table + "@" + req.Instance.Key())
	var cache string
	if h.s.CacheDir != "" {
		cache = filepath.Join(h.s.CacheDir, escape(req.Namespace), name+".json")
	}
	epoch, err := h.waitSession(ctx)
	if err != nil {
		if cache == "" || ctx.Err() != nil {
			return nil, err
		}
		h.mu.Lock()
		held := h.held[cache]
		h.mu.Unlock()
		if held {
			// This process held the identity through a session that has
			// ended since: its owner node is gone, and another process of
			// the identity (a replacement, a twin) may own it now. The
			// cache file, exclusive on this host only, serves a start-up,
			// never a lease lost to a partition.
			return nil, fmt.Errorf("%w; the cache file %s does not serve identity %s again: this process's ZooKeeper lease of it ended, and another process may hold it now (the process issues again once ZooKeeper answers)",
				err, cache, req.Instance.Key())
		}
		return h.fromCache(req, cache, err)
	}
	dir := path.Join(h.s.Root, req.Namespace, "forever")
	if err := h.ensure(dir); err != nil {
		return nil, fmt.Errorf("zookeeper: create %s: %w", dir, err)
	}
	node, w, err := h.stickyNode(req, dir, name)
	if err != nil {
		return nil, err
	}
	if w >= req.MaxWorkers() {
		return nil, fmt.Errorf("%w: sticky node %s has sequence number %d, beyond the %d worker IDs of %d worker bits",
			ErrExhausted, node, w, req.MaxWorkers(), req.WorkerBits)
	}
	var lock *filelock.Lock
	if cache != "" {
		if lock, err = lockCache(cache, req); err != nil {
			return nil, err
		}
	}
	l, err := h.claimSticky(ctx, req, node, w, cache, lock, epoch)
	if err != nil && lock != nil {
		lock.Unlock()
	}
	return l, err
}

// stickyNode finds or creates the identity's persistent node and returns it
// with its worker ID.
func (h *Holder) stickyNode(req holder.Request, dir, name string) (string, int64, error) {
	children, _, err := h.conn.Children(dir)
	if err != nil {
		return "", 0, fmt.Errorf("zookeeper: list %s: %w", dir, err)
	}
	for _, c := range children {
		if seq, ok := strings.CutPrefix(c, name+"-"); ok && len(seq) == 10 {
			w, err := strconv.ParseInt(seq, 10, 64)
			if err != nil {
				return "", 0, fmt.Errorf("zookeeper: node %s/%s: bad sequence number", dir, c)
			}
			return dir + "/" + c, w, nil
		}
	}
	created, err := h.conn.Create(dir+"/"+name+"-", h.data(req, time.Time{}), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		return "", 0, fmt.Errorf("zookeeper: create %s/%s-: %w", dir, name, err)
	}
	w, err := strconv.ParseInt(created[strings.LastIndexByte(created, '-')+1:], 10, 64)
	if err != nil {
		return "", 0, fmt.Errorf("zookeeper: created %s: bad sequence number", created)
	}
	return created, w, nil
}

// claimSticky takes the identity's exclusive claim, an ephemeral node under
// its persistent node. While another session holds the claim it waits for
// that session to end, up to one session timeout plus the margin; a claim
// still held then belongs to a live process and the identity is refused.
func (h *Holder) claimSticky(ctx context.Context, req holder.Request, node string, w int64, cache string, lock *filelock.Lock, epoch uint64) (*lease, error) {
	h.mu.Lock()
	_, dup := h.live[node]
	h.mu.Unlock()
	if dup {
		return nil, fmt.Errorf("zookeeper: sticky worker %d (%s) is already leased by this holder", w, node)
	}
	owner := node + "/owner"
	giveUp := time.NewTimer(h.sessionTimeout() + h.s.Margin)
	defer giveUp.Stop()
	for {
		_, err := h.conn.Create(owner, h.data(req, time.Time{}), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) && h.orphan(owner) {
			continue
		}
		if err == nil {
			break
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			return nil, fmt.Errorf("zookeeper: claim %s: %w", owner, err)
		}
		b, stat, ch, err := h.conn.GetW(owner)
		if errors.Is(err, zk.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("zookeeper: read %s: %w", owner, err)
		}
		who := ""
		if d, err := parseData(b); err == nil {
			who = fmt.Sprintf("host %s pid %d since %s", d.Host, d.PID, time.UnixMilli(stat.Ctime).UTC().Format(time.RFC3339Nano))
		}
		select {
		case <-ch:
		case <-giveUp.C:
			return nil, fmt.Errorf("zookeeper: %w", &holder.IdentityInUseError{Identity: req.Instance.Key(), Holder: who,
				Reason: fmt.Sprintf("is claimed (%s) by a session that stayed alive for %s", owner, h.sessionTimeout()+h.s.Margin)})
		case <-ctx.Done():
			return nil, fmt.Errorf("zookeeper: waiting for %s to be released: %w", owner, ctx.Err())
		}
	}
	sid := h.conn.SessionID()
	giveBack := func() { h.conn.Delete(owner, -1) }
	b, _, err := h.conn.Get(node)
	if err != nil {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", node, err)
	}
	prev, err := parseData(b)
	if err != nil {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", node, err)
	}
	after := prev.Timestamp
	if cache != "" {
		if c, err := readCache(cache); err == nil && c.WorkerID == w {
			after = later(after, c.Horizon)
		}
	}
	l := &lease{StaticLease: holder.NewStaticLease(w, after), h: h, mode: Sticky, req: req,
		node: node, owner: owner, cache: cache, lock: lock, zk: true, sid: sid, stop: make(chan struct{})}
	l.SetClock(h.s.Now)
	if !h.register(l, epoch) {
		giveBack()
		return nil, fmt.Errorf("%w: the session changed while claiming sticky worker %d", ErrUnavailable, w)
	}
	if err := l.report(); err != nil {
		h.unregister(l)
		giveBack()
		return nil, fmt.Errorf("zookeeper: report to %s: %w", node, err)
	}
	if cache != "" {
		h.mu.Lock()
		h.held[cache] = true
		h.mu.Unlock()
	}
	l.start()
	return l, nil
}

// lockCache takes the cache file's lock: one process per identity on a
// host, even while ZooKeeper cannot say.
func lockCache(cache string, req holder.Request) (*filelock.Lock, error) {
	lock, err := filelock.TryLock(cache + ".lock")
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("zookeeper: %w", &holder.IdentityInUseError{Identity: req.Instance.Key(),
			Reason: "is in use by another live process on this host (lock " + cache + ".lock)"})
	}
	if err != nil {
		return nil, fmt.Errorf("zookeeper: cache file lock: %w", err)
	}
	return lock, nil
}

// fromCache serves a sticky lease from the cache file when ZooKeeper cannot
// be reached: the cache file's lock keeps the identity exclusive on this
// host, and the lease issues only after the cached horizon and within the
// horizon it keeps writing there.
func (h *Holder) fromCache(req holder.Request, cache string, cause error) (holder.Lease, error) {
	lock, err := lockCache(cache, req)
	if err != nil {
		return nil, err
	}
	c, err := readCache(cache)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("zookeeper: %w; and no usable cache file: %w", cause, err)
	}
	if c.WorkerID >= req.MaxWorkers() {
		lock.Unlock()
		return nil, fmt.Errorf("zookeeper: cache file %s: worker %d out of range", cache, c.WorkerID)
	}
	l := &lease{StaticLease: holder.NewStaticLease(c.WorkerID, c.Horizon), h: h, mode: Sticky, req: req,
		node: "cache:" + cache, cache: cache, lock: lock, stop: make(chan struct{})}
	l.SetClock(h.s.Now)
	h.mu.Lock()
	if _, dup := h.live[l.node]; dup {
		h.mu.Unlock()
		lock.Unlock()
		return nil, fmt.Errorf("zookeeper: cached worker %d is already leased by this holder", c.WorkerID)
	}
	h.live[l.node] = l
	h.mu.Unlock()
	if err := l.report(); err != nil {
		h.unregister(l)
		lock.Unlock()
		return nil, fmt.Errorf("zookeeper: unreachable, and writing the cache file failed: %w", err)
	}
	l.start()
	return l, nil
}

type cacheFile struct {
	WorkerID int64     `json:"worker_id"`
	Horizon  time.Time `json:"horizon"`
}

func readCache(p string) (cacheFile, error) {
	var c cacheFile
	b, err := os.ReadFile(p)
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", p, err)
	}
	return c, nil
}

func writeCache(p string, c cacheFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.Write(p, b)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
