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
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idsql/idsql/holder"
)

// Mode selects how worker IDs are assigned.
type Mode string

// The modes; see the package documentation.
const (
	Sticky  Mode = "sticky"
	Recycle Mode = "recycle"
)

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
	// DefaultSessionTimeout. The server must not negotiate it lower (it
	// does only above its maxSessionTimeout, 40 s by default).
	SessionTimeout time.Duration
	// Margin is how long before the server could expire the session a
	// recycle lease ends; 0 means SessionTimeout/3.
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
	// Now is the wall clock; nil means time.Now.
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
	done    chan struct{}
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}

// New validates s and starts connecting; it does not wait for a session.
func New(s Settings) (*Holder, error) {
	if len(s.Servers) == 0 {
		return nil, errors.New("zookeeper: Settings.Servers is empty")
	}
	switch s.Mode {
	case "":
		s.Mode = Sticky
	case Sticky, Recycle:
	default:
		return nil, fmt.Errorf("zookeeper: Settings.Mode %q: want sticky or recycle", s.Mode)
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
	h := &Holder{s: s, live: map[string]*lease{}, claim: map[string]bool{}, changed: make(chan struct{}), done: make(chan struct{})}
	dialer := s.Dialer
	if dialer == nil {
		dialer = net.DialTimeout
	}
	conn, _, err := zk.Connect(s.Servers, s.SessionTimeout,
		zk.WithLogger(s.Logger), zk.WithEventCallback(h.event), zk.WithDialer(dialer))
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
			if l.mode == Recycle {
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
		l.Release(ctx)
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

// nodeData is what a worker node holds.
type nodeData struct {
	Table     string    `json:"table"`
	Instance  string    `json:"instance"`
	Host      string    `json:"host"`
	Port      int       `json:"port"`
	PID       int       `json:"pid"`
	Timestamp time.Time `json:"timestamp"`
}

func (h *Holder) data(req holder.Request, ts time.Time) []byte {
	b, _ := json.Marshal(nodeData{Table: req.Table, Instance: req.Instance.Key(), Host: req.Instance.Host,
		Port: req.Instance.Port, PID: req.Instance.PID, Timestamp: ts})
	return b
}

func parseTime(b []byte) (time.Time, error) {
	if len(b) == 0 {
		return time.Time{}, nil
	}
	var d nodeData
	if err := json.Unmarshal(b, &d); err != nil {
		return time.Time{}, err
	}
	return d.Timestamp, nil
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
	sent := time.Now()
	for w := int64(0); w < req.MaxWorkers(); w++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		node := workers + "/" + strconv.FormatInt(w, 10)
		l, err := h.tryClaim(req, w, node, stamps+"/"+strconv.FormatInt(w, 10), sent, epoch)
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
func (h *Holder) tryClaim(req holder.Request, w int64, node, stamp string, sent time.Time, epoch uint64) (*lease, error) {
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
	{
		now := h.s.Now()
		_, err := h.conn.Create(node, h.data(req, now), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		if errors.Is(err, zk.ErrNodeExists) && h.orphan(node) {
			// Left by a lease of ours that was released while the session
			// was in doubt; its generator has stopped. Free it and retry.
			_, err = h.conn.Create(node, h.data(req, now), zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		}
		if errors.Is(err, zk.ErrNodeExists) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("zookeeper: claim %s: %w", node, err)
		}
	}
	// Read the clock after the claim: a worker ID freed while we were
	// looking may carry a timestamp later than an earlier reading.
	return h.startRecycle(req, w, node, stamp, h.s.Now(), sent, epoch)
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
	h.mu.Unlock()
	return !live && h.conn.Delete(node, stat.Version) == nil
}

func (h *Holder) startRecycle(req holder.Request, w int64, node, stamp string, now, sent time.Time, epoch uint64) (*lease, error) {
	giveBack := func() { h.conn.Delete(node, -1) }
	b, _, err := h.conn.Get(stamp)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", stamp, err)
	}
	last, err := parseTime(b)
	if err != nil {
		giveBack()
		return nil, fmt.Errorf("zookeeper: read %s: %w", stamp, err)
	}
	if err := holder.CheckClock(w, now, last); err != nil {
		giveBack()
		return nil, fmt.Errorf("zookeeper: refusing worker %d: %w", w, err)
	}
	// The previous holder of w stopped before the claim (its session ended
	// or it released), so its IDs are no later than now's tick: start after
	// it, or a generator could repeat an ID in the tick of a fast takeover.
	last = later(last, now)
	l := &lease{StaticLease: holder.NewStaticLease(w, last), h: h, mode: Recycle, req: req,
		node: node, stamp: stamp, stop: make(chan struct{})}
	if !h.register(l, epoch) {
		giveBack()
		return nil, fmt.Errorf("%w: the session changed while claiming worker %d", ErrUnavailable, w)
	}
	l.fence = time.AfterFunc(time.Until(sent.Add(h.s.SessionTimeout-h.s.Margin)), func() {
		l.End(fmt.Errorf("%w: worker %d: no write to zookeeper succeeded for %s", holder.ErrLeaseLost, w, h.s.SessionTimeout-h.s.Margin))
	})
	l.wg.Add(1)
	go l.run()
	return l, nil
}

// lease is a worker lease of either mode.
type lease struct {
	*holder.StaticLease
	h     *Holder
	mode  Mode
	req   holder.Request
	node  string // the worker node
	stamp string // recycle: the timestamp node
	cache string // sticky: the cache file, if any
	zk    bool   // sticky: backed by a node (not the cache fallback)
	fence *time.Timer
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
}

// timestamp is what a report persists: the generator's high water, or the
// clock when that is later (sticky mode reports the clock, as Leaf does).
func (l *lease) timestamp() time.Time {
	ts := l.HighWater()
	if l.mode == Sticky {
		if now := l.h.s.Now(); now.After(ts) {
			ts = now
		}
	}
	return ts
}

func (l *lease) report() error {
	ts := l.timestamp()
	var err error
	switch {
	case l.mode == Recycle:
		sent := time.Now()
		if ts.IsZero() {
			// Nothing issued yet; still prove the session is alive.
			_, _, err = l.h.conn.Exists(l.node)
		} else {
			err = l.writeStamp(ts)
		}
		if err == nil {
			// The server heard from the session no earlier than sent.
			l.fence.Reset(time.Until(sent.Add(l.h.s.SessionTimeout - l.h.s.Margin)))
		}
	case l.zk:
		_, err = l.h.conn.Set(l.node, l.h.data(l.req, ts), -1)
	}
	if l.cache != "" && !ts.IsZero() {
		if cerr := writeCache(l.cache, cacheFile{WorkerID: l.WorkerID(), Last: ts}); err == nil {
			err = cerr
		}
	}
	return err
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
	t := time.NewTicker(l.h.s.Report)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-l.Done():
			return
		case <-t.C:
			l.report() // a failure is fenced by the timer (recycle) or harmless (sticky)
		}
	}
}

// Release implements holder.Lease: it stops issuing, persists the final
// timestamp and gives the worker ID back (recycle mode).
func (l *lease) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		lost := l.Err() != nil
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		if l.fence != nil {
			l.fence.Stop()
		}
		// Stay registered until the node is deleted: a lost lease's node
		// may still be ours, and nobody in this process may claim it
		// before the generator on this lease has stopped for sure, which
		// the caller's Release says.
		defer l.h.unregister(l)
		if l.mode == Recycle && lost {
			if l.h.conn.State() != zk.StateHasSession {
				return // the node goes with the session, or on a later Release
			}
			if ts := l.timestamp(); !ts.IsZero() {
				l.raiseStamp(ts)
			}
			if _, stat, err := l.h.conn.Get(l.node); err == nil && stat.EphemeralOwner == l.h.conn.SessionID() {
				l.h.conn.Delete(l.node, stat.Version)
			}
			return
		}
		if ts := l.timestamp(); !ts.IsZero() {
			if l.mode == Recycle {
				err = l.raiseStamp(ts)
			} else {
				err = l.report()
			}
		}
		if l.mode == Recycle {
			if derr := l.h.conn.Delete(l.node, -1); derr != nil && !errors.Is(derr, zk.ErrNoNode) {
				err = errors.Join(err, derr)
			}
		}
		if err != nil {
			err = fmt.Errorf("zookeeper: release worker %d: %w", l.WorkerID(), err)
		}
	})
	return err
}

// raiseStamp writes ts to the timestamp node unless it holds a later one.
func (l *lease) raiseStamp(ts time.Time) error {
	b, _, err := l.h.conn.Get(l.stamp)
	if err == nil {
		if old, perr := parseTime(b); perr == nil && old.After(ts) {
			return nil
		}
	}
	return l.writeStamp(ts)
}

// The sticky mode.

func escape(s string) string { return url.PathEscape(strings.ReplaceAll(s, "-", "%2D")) }

func (h *Holder) acquireSticky(ctx context.Context, req holder.Request) (holder.Lease, error) {
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
		return h.fromCache(req, cache, err)
	}
	_ = epoch
	dir := path.Join(h.s.Root, req.Namespace, "forever")
	if err := h.ensure(dir); err != nil {
		return nil, fmt.Errorf("zookeeper: create %s: %w", dir, err)
	}
	children, _, err := h.conn.Children(dir)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: list %s: %w", dir, err)
	}
	now := h.s.Now()
	var node string
	var w int64 = -1
	var last time.Time
	for _, c := range children {
		if seq, ok := strings.CutPrefix(c, name+"-"); ok && len(seq) == 10 {
			if w, err = strconv.ParseInt(seq, 10, 64); err != nil {
				return nil, fmt.Errorf("zookeeper: node %s/%s: bad sequence number", dir, c)
			}
			node = dir + "/" + c
			b, _, err := h.conn.Get(node)
			if err != nil {
				return nil, fmt.Errorf("zookeeper: read %s: %w", node, err)
			}
			if last, err = parseTime(b); err != nil {
				return nil, fmt.Errorf("zookeeper: read %s: %w", node, err)
			}
			break
		}
	}
	if node == "" {
		created, err := h.conn.Create(dir+"/"+name+"-", h.data(req, now), zk.FlagSequence, zk.WorldACL(zk.PermAll))
		if err != nil {
			return nil, fmt.Errorf("zookeeper: create %s/%s-: %w", dir, name, err)
		}
		node = created
		seq := created[strings.LastIndexByte(created, '-')+1:]
		if w, err = strconv.ParseInt(seq, 10, 64); err != nil {
			return nil, fmt.Errorf("zookeeper: created %s: bad sequence number", created)
		}
	}
	if w >= req.MaxWorkers() {
		return nil, fmt.Errorf("%w: sticky node %s has sequence number %d, beyond the %d worker IDs of %d worker bits",
			ErrExhausted, node, w, req.MaxWorkers(), req.WorkerBits)
	}
	if cache != "" {
		if cl, err := readCache(cache); err == nil && cl.WorkerID == w && cl.Last.After(last) {
			last = cl.Last
		}
	}
	if err := holder.CheckClock(w, now, last); err != nil {
		return nil, fmt.Errorf("zookeeper: refusing sticky worker %d (%s): %w", w, node, err)
	}
	last = later(last, now) // the previous run's IDs are all before now's tick
	l := &lease{StaticLease: holder.NewStaticLease(w, last), h: h, mode: Sticky, req: req,
		node: node, cache: cache, zk: true, stop: make(chan struct{})}
	h.mu.Lock()
	if _, dup := h.live[node]; dup {
		h.mu.Unlock()
		return nil, fmt.Errorf("zookeeper: sticky worker %d (%s) is already leased by this holder", w, node)
	}
	h.live[node] = l
	h.mu.Unlock()
	if err := l.report(); err != nil {
		h.unregister(l)
		return nil, fmt.Errorf("zookeeper: report to %s: %w", node, err)
	}
	l.wg.Add(1)
	go l.run()
	return l, nil
}

// fromCache serves a sticky lease from the cache file when ZooKeeper cannot
// be reached, with the same clock check.
func (h *Holder) fromCache(req holder.Request, cache string, cause error) (holder.Lease, error) {
	c, err := readCache(cache)
	if err != nil {
		return nil, fmt.Errorf("zookeeper: %w; and no usable cache file: %w", cause, err)
	}
	if c.WorkerID >= req.MaxWorkers() {
		return nil, fmt.Errorf("zookeeper: cache file %s: worker %d out of range", cache, c.WorkerID)
	}
	if err := holder.CheckClock(c.WorkerID, h.s.Now(), c.Last); err != nil {
		return nil, fmt.Errorf("zookeeper: unreachable, refusing cached worker %d (%s): %w", c.WorkerID, cache, err)
	}
	l := &lease{StaticLease: holder.NewStaticLease(c.WorkerID, later(c.Last, h.s.Now())), h: h, mode: Sticky, req: req,
		node: "cache:" + cache, cache: cache, stop: make(chan struct{})}
	h.mu.Lock()
	if _, dup := h.live[l.node]; dup {
		h.mu.Unlock()
		return nil, fmt.Errorf("zookeeper: cached worker %d is already leased by this holder", c.WorkerID)
	}
	h.live[l.node] = l
	h.mu.Unlock()
	l.wg.Add(1)
	go l.run()
	return l, nil
}

type cacheFile struct {
	WorkerID int64     `json:"worker_id"`
	Last     time.Time `json:"last_timestamp"`
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
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	b, _ := json.Marshal(c)
	tmp := p + ".tmp" + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
