package etcd

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/idsql/idsql/holder"
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
	DefaultPrefix         = "/idsql"
	DefaultTTL            = 10 * time.Second
	DefaultRequestTimeout = 5 * time.Second
)

// ErrExhausted means every worker ID of a recycle namespace is held, or
// sticky mode has handed out every worker ID of the layout.
var ErrExhausted = errors.New("etcd: worker IDs exhausted")

// Settings configure a Holder. The zero value, plus Endpoints, is sticky
// mode with the defaults.
type Settings struct {
	// Endpoints are the cluster's client addresses: host:port or
	// http://host:port.
	Endpoints []string
	// Mode is Sticky or Recycle; empty means Sticky.
	Mode Mode
	// Prefix is the key prefix everything lives under; empty means
	// DefaultPrefix.
	Prefix string
	// TTL is the lease TTL asked for, rounded up to whole seconds; 0 means
	// DefaultTTL. Deadlines count from the TTL etcd grants, which may be
	// longer (etcd's minimum is about 2s).
	TTL time.Duration
	// Margin is how much before etcd could expire a lease its deadline
	// falls; 0 means TTL/3.
	Margin time.Duration
	// Report is how often a lease is kept alive and writes its horizon; 0
	// means (TTL-Margin)/3. It must be below TTL-Margin.
	Report time.Duration
	// RequestTimeout bounds each request to etcd made by Acquire and
	// Release, and the dial; 0 means DefaultRequestTimeout.
	RequestTimeout time.Duration
	// Now is the clock for horizons and deadlines; nil means time.Now. Its
	// readings must carry Go's monotonic reading (time.Now().Add(d) does).
	Now func() time.Time
}

// Holder hands out worker IDs from etcd. Close it when done.
type Holder struct {
	s   Settings
	cli *clientv3.Client

	mu     sync.Mutex
	live   map[*lease]bool // until Release
	closed bool
}

// New validates s and makes the client; it does not wait for a connection.
func New(s Settings) (*Holder, error) {
	if len(s.Endpoints) == 0 {
		return nil, errors.New("etcd: Settings.Endpoints is empty")
	}
	if s.Mode == "" {
		s.Mode = Modes[0]
	}
	if !slices.Contains(Modes, s.Mode) {
		return nil, fmt.Errorf("etcd: Settings.Mode %q: want one of %v", s.Mode, Modes)
	}
	if s.Prefix == "" {
		s.Prefix = DefaultPrefix
	}
	s.Prefix = strings.TrimSuffix(s.Prefix, "/")
	if s.TTL <= 0 {
		s.TTL = DefaultTTL
	}
	s.TTL = (s.TTL + time.Second - 1).Truncate(time.Second)
	if s.Margin <= 0 {
		s.Margin = s.TTL / 3
	}
	if s.Margin >= s.TTL {
		return nil, fmt.Errorf("etcd: Settings.Margin %s must be below the TTL %s", s.Margin, s.TTL)
	}
	if s.Report <= 0 {
		s.Report = (s.TTL - s.Margin) / 3
	}
	if s.Report >= s.TTL-s.Margin {
		return nil, fmt.Errorf("etcd: Settings.Report %s must be below TTL-Margin (%s)", s.Report, s.TTL-s.Margin)
	}
	if s.RequestTimeout <= 0 {
		s.RequestTimeout = DefaultRequestTimeout
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	// gRPC waits up to 2 minutes between two attempts to reconnect;
	// waiting at most Report uses a healed link before the lease expires.
	retry := backoff.DefaultConfig
	retry.MaxDelay = s.Report
	cli, err := clientv3.New(clientv3.Config{Endpoints: s.Endpoints, DialTimeout: s.RequestTimeout, Logger: zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{Backoff: retry, MinConnectTimeout: s.RequestTimeout})}})
	if err != nil {
		return nil, fmt.Errorf("etcd: client for %v: %w", s.Endpoints, err)
	}
	return &Holder{s: s, cli: cli, live: map[*lease]bool{}}, nil
}

// Close releases every lease and closes the client.
func (h *Holder) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	leases := make([]*lease, 0, len(h.live))
	for l := range h.live {
		leases = append(leases, l)
	}
	h.mu.Unlock()
	for _, l := range leases {
		l.Release(context.Background(), time.Time{})
	}
	return h.cli.Close()
}

// request bounds one request to etcd.
func (h *Holder) request(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, h.s.RequestTimeout)
}

// fence is how long after a grant or keep-alive request was sent etcd
// certainly keeps the lease, less the margin.
func (h *Holder) fence(granted time.Duration) time.Duration { return granted - h.s.Margin }

// record is the value of every key: who claimed it, and for the
// persistent keys the worker ID and its horizon (every ID issued under the
// worker ID so far is stamped before it).
type record struct {
	Table    string        `json:"table"`
	Instance string        `json:"instance"`
	Host     string        `json:"host"`
	PID      int           `json:"pid"`
	Since    time.Time     `json:"since"`
	Report   time.Duration `json:"report,omitempty"` // claims: how often the owner renews
	Worker   int64         `json:"worker"`
	Horizon  time.Time     `json:"horizon,omitzero"`
}

func (h *Holder) record(req holder.Request, w int64, since, horizon time.Time) string {
	b, _ := json.Marshal(record{Table: req.Table, Instance: req.Instance.Key(), Host: req.Instance.Host,
		PID: req.Instance.PID, Since: since, Report: h.s.Report, Worker: w, Horizon: horizon})
	return string(b)
}

// parse reads the record of the first of kvs; a missing key is the zero
// record.
func parse(kvs []*mvccpb.KeyValue) (record, error) {
	var r record
	if len(kvs) == 0 {
		return r, nil
	}
	if err := json.Unmarshal(kvs[0].Value, &r); err != nil {
		return r, fmt.Errorf("etcd: key %s: %w", kvs[0].Key, err)
	}
	return r, nil
}

// Acquire implements holder.Holder.
func (h *Holder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if h.s.Mode == Sticky {
		if err := req.Instance.CheckSticky(); err != nil {
			return nil, fmt.Errorf("etcd: %w", err)
		}
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, errors.New("etcd: holder closed")
	}
	l := &lease{h: h, req: req, stop: make(chan struct{})}
	var err error
	if h.s.Mode == Sticky {
		err = h.claimSticky(ctx, l)
	} else {
		err = h.claimRecycle(ctx, l)
	}
	if err == nil {
		l.SetClock(h.s.Now)
		// The first horizon is persisted before any ID is issued.
		err = l.vouch(ctx, l.sent, l.granted)
	}
	if err != nil {
		l.revoke(ctx) // frees the claim, if any
		return nil, err
	}
	h.mu.Lock()
	h.live[l] = true
	h.mu.Unlock()
	l.start()
	return l, nil
}

// grant asks for the etcd lease a claim is attached to, measuring the
// deadline from before the request was sent.
func (l *lease) grant(ctx context.Context) error {
	rctx, cancel := l.h.request(ctx)
	defer cancel()
	sent := l.h.s.Now()
	g, err := l.h.cli.Grant(rctx, int64(l.h.s.TTL/time.Second))
	if err != nil {
		return fmt.Errorf("etcd: grant a lease from %v: %w", l.h.s.Endpoints, err)
	}
	l.id, l.sent, l.granted = g.ID, sent, time.Duration(g.TTL)*time.Second
	return nil
}

// revoke gives the etcd lease back, if there is one, deleting the claim
// attached to it.
func (l *lease) revoke(ctx context.Context) error {
	if l.id == 0 {
		return nil
	}
	rctx, cancel := l.h.request(context.WithoutCancel(ctx))
	defer cancel()
	_, err := l.h.cli.Revoke(rctx, l.id)
	if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
		return fmt.Errorf("etcd: revoke lease %x: %w", l.id, err)
	}
	l.id = 0
	return nil
}

func (h *Holder) base(req holder.Request) string {
	return h.s.Prefix + "/" + url.PathEscape(req.Namespace) + "/" + string(h.s.Mode)
}

// claimRecycle claims the first worker ID no claim key names.
func (h *Holder) claimRecycle(ctx context.Context, l *lease) error {
	base := h.base(l.req)
	rctx, cancel := h.request(ctx)
	taken, err := h.cli.Get(rctx, base+"/claims/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	cancel()
	if err != nil {
		return fmt.Errorf("etcd: list %s/claims/: %w", base, err)
	}
	held := map[string]bool{}
	for _, kv := range taken.Kvs {
		held[string(kv.Key)] = true
	}
	if err := l.grant(ctx); err != nil {
		return err
	}
	now := h.s.Now()
	for w := int64(0); w < l.req.MaxWorkers(); w++ {
		claim := base + "/claims/" + strconv.FormatInt(w, 10)
		if held[claim] {
			continue
		}
		key := base + "/workers/" + strconv.FormatInt(w, 10)
		rctx, cancel := h.request(ctx)
		r, err := h.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(claim), "=", 0)).
			Then(clientv3.OpPut(claim, h.record(l.req, w, now, time.Time{}), clientv3.WithLease(l.id)), clientv3.OpGet(key)).
			Commit()
		cancel()
		if err != nil {
			return fmt.Errorf("etcd: claim %s: %w", claim, err)
		}
		if !r.Succeeded {
			continue
		}
		prev, err := parse(r.Responses[1].GetResponseRange().Kvs)
		if err != nil {
			return err
		}
		l.claimed(w, claim, key, r.Header.Revision, prev.Horizon)
		return nil
	}
	return fmt.Errorf("%w: all %d worker IDs (2^%d worker bits) of namespace %q are held", ErrExhausted,
		l.req.MaxWorkers(), l.req.WorkerBits, l.req.Namespace)
}

// claimSticky finds or makes the identity's worker ID and takes its owner
// key. A live owner gets the request refused at once; a silent one is
// waited for until its lease expires.
func (h *Holder) claimSticky(ctx context.Context, l *lease) error {
	base := h.base(l.req)
	key := base + "/ids/" + url.PathEscape(l.req.Table+"@"+l.req.Instance.Key())
	w, err := h.stickyWorker(ctx, base, key, l.req)
	if err != nil {
		return err
	}
	if w >= l.req.MaxWorkers() {
		return fmt.Errorf("%w: sticky key %s has worker ID %d, beyond the %d worker IDs of %d worker bits",
			ErrExhausted, key, w, l.req.MaxWorkers(), l.req.WorkerBits)
	}
	owner := key + "/owner"
	for {
		if err := l.grant(ctx); err != nil {
			return err
		}
		rctx, cancel := h.request(ctx)
		r, err := h.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(owner), "=", 0)).
			Then(clientv3.OpPut(owner, h.record(l.req, w, h.s.Now(), time.Time{}), clientv3.WithLease(l.id)), clientv3.OpGet(key)).
			Else(clientv3.OpGet(owner)).
			Commit()
		cancel()
		if err != nil {
			return fmt.Errorf("etcd: claim %s: %w", owner, err)
		}
		if r.Succeeded {
			prev, err := parse(r.Responses[1].GetResponseRange().Kvs)
			if err != nil {
				return err
			}
			l.claimed(w, owner, key, r.Header.Revision, prev.Horizon)
			return nil
		}
		// Taken: no lease ages while this waits.
		if err := l.revoke(ctx); err != nil {
			return err
		}
		kvs := r.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			continue // gone in between
		}
		if err := h.waitOwner(ctx, l.req, kvs[0]); err != nil {
			return err
		}
	}
}

// stickyWorker returns the worker ID of the identity's key, handing out the
// next one (sticky/next) when the key is new.
func (h *Holder) stickyWorker(ctx context.Context, base, key string, req holder.Request) (int64, error) {
	next := base + "/next"
	for {
		rctx, cancel := h.request(ctx)
		r, err := h.cli.Txn(rctx).Then(clientv3.OpGet(key), clientv3.OpGet(next)).Commit()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("etcd: read %s: %w", key, err)
		}
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			rec, err := parse(kvs)
			return rec.Worker, err
		}
		var w, rev int64
		if kvs := r.Responses[1].GetResponseRange().Kvs; len(kvs) > 0 {
			if w, err = strconv.ParseInt(string(kvs[0].Value), 10, 64); err != nil {
				return 0, fmt.Errorf("etcd: key %s: %w", next, err)
			}
			rev = kvs[0].ModRevision
		}
		rctx, cancel = h.request(ctx)
		t, err := h.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0), clientv3.Compare(clientv3.ModRevision(next), "=", rev)).
			Then(clientv3.OpPut(next, strconv.FormatInt(w+1, 10)), clientv3.OpPut(key, h.record(req, w, h.s.Now(), time.Time{}))).
			Commit()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("etcd: create %s: %w", key, err)
		}
		if t.Succeeded {
			return w, nil
		}
	}
}

// waitOwner decides about an identity whose owner key kv exists: when the
// owner's lease was renewed within the owner's report interval (and the
// second etcd rounds remaining TTLs to), the owner is alive and the
// request is refused; otherwise it waits until the key is gone or the
// owner's lease had time to expire, and returns nil to try again.
func (h *Holder) waitOwner(ctx context.Context, req holder.Request, kv *mvccpb.KeyValue) error {
	if h.endedLease(ctx, clientv3.LeaseID(kv.Lease)) {
		return nil
	}
	o, _ := parse([]*mvccpb.KeyValue{kv})
	rctx, cancel := h.request(ctx)
	ttl, err := h.cli.TimeToLive(rctx, clientv3.LeaseID(kv.Lease))
	cancel()
	if err != nil {
		return fmt.Errorf("etcd: time to live of the lease %x on %s: %w", kv.Lease, kv.Key, err)
	}
	if ttl.TTL < 0 {
		return nil // expired: the key goes with it (0 is less than a second left)
	}
	remaining, granted := time.Duration(ttl.TTL)*time.Second, time.Duration(ttl.GrantedTTL)*time.Second
	report := cmp.Or(o.Report, h.s.Report)
	if remaining+report+time.Second >= granted {
		return fmt.Errorf("etcd: %w", &holder.IdentityInUseError{Identity: req.Instance.Key(),
			Holder: fmt.Sprintf("instance %s, host %s, pid %d, since %s", o.Instance, o.Host, o.PID, o.Since.Format(time.RFC3339)),
			Reason: fmt.Sprintf("is claimed (%s) by a live process: its etcd lease %x was renewed within the last %s", kv.Key, kv.Lease, report.Round(time.Millisecond))})
	}
	// Silent for longer than it renews: most likely dead. Wait for the
	// lease to run out, watching the key.
	wctx, cancel := context.WithTimeout(ctx, remaining+time.Second)
	defer cancel()
	for range h.cli.Watch(wctx, string(kv.Key), clientv3.WithRev(kv.ModRevision+1)) {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("etcd: waiting for %s to be released: %w", kv.Key, err)
	}
	return nil
}

// endedLease revokes id and reports true when it is the etcd lease of one
// of this holder's leases that has ended (lost; not yet released): its
// generator issues nothing more (its deadline passed, or etcd no longer
// holds its claim), and the worker ID's horizon bounds what it issued, so
// its identity need not wait for the etcd lease to run out.
func (h *Holder) endedLease(ctx context.Context, id clientv3.LeaseID) bool {
	h.mu.Lock()
	var mine *lease
	for l := range h.live {
		if l.id == id && l.Err() != nil {
			mine = l
		}
	}
	h.mu.Unlock()
	if mine == nil {
		return false
	}
	rctx, cancel := h.request(ctx)
	defer cancel()
	_, err := h.cli.Revoke(rctx, id)
	return err == nil || errors.Is(err, rpctypes.ErrLeaseNotFound)
}

// lease is a worker lease of either mode.
type lease struct {
	*holder.StaticLease
	h       *Holder
	req     holder.Request
	id      clientv3.LeaseID
	sent    time.Time     // when the grant was asked for
	granted time.Duration // the TTL etcd granted
	claim   string        // the claim key, attached to the etcd lease
	rev     int64         // the claim's CreateRevision
	key     string        // the persistent key holding the worker ID's horizon
	fence   *time.Timer
	stop    chan struct{}
	wg      sync.WaitGroup
	once    sync.Once
}

func (l *lease) claimed(w int64, claim, key string, rev int64, after time.Time) {
	l.StaticLease = holder.NewStaticLease(w, after)
	l.claim, l.key, l.rev = claim, key, rev
}

// vouch persists the horizon a grant or keep-alive sent at sent and
// answered with granted allows, then moves the lease's deadline and
// horizon forward.
func (l *lease) vouch(ctx context.Context, sent time.Time, granted time.Duration) error {
	if granted <= l.h.s.Margin+l.h.s.Report {
		return fmt.Errorf("etcd: lease %x was granted a TTL of %s, not more than margin %s plus report %s", l.id, granted, l.h.s.Margin, l.h.s.Report)
	}
	hz := sent.Add(l.h.fence(granted) + l.h.s.Report)
	if err := l.persist(ctx, hz); err != nil {
		if errors.Is(err, holder.ErrLeaseLost) {
			l.End(err)
		}
		return err
	}
	l.Renew(sent.Add(l.h.fence(granted)), hz)
	if l.fence != nil {
		l.fence.Reset(l.Deadline().Sub(l.h.s.Now()))
	}
	return nil
}

// persist writes hz as the worker ID's horizon, if the claim is still the
// one this lease created.
func (l *lease) persist(ctx context.Context, hz time.Time) error {
	rctx, cancel := l.h.request(ctx)
	defer cancel()
	r, err := l.h.cli.Txn(rctx).If(clientv3.Compare(clientv3.CreateRevision(l.claim), "=", l.rev)).
		Then(clientv3.OpPut(l.key, l.h.record(l.req, l.WorkerID(), l.h.s.Now(), hz))).
		Commit()
	if err != nil {
		return fmt.Errorf("etcd: write horizon of worker %d to %s: %w", l.WorkerID(), l.key, err)
	}
	if !r.Succeeded {
		return fmt.Errorf("%w: worker %d: claim %s (revision %d) is gone", holder.ErrLeaseLost, l.WorkerID(), l.claim, l.rev)
	}
	return nil
}

// renew keeps the etcd lease alive and persists the next horizon.
func (l *lease) renew() error {
	ctx, cancel := context.WithTimeout(context.Background(), l.h.s.Report)
	defer cancel()
	sent := l.h.s.Now()
	r, err := l.h.cli.KeepAliveOnce(ctx, l.id)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) || err == nil && r.TTL <= 0 {
		l.End(fmt.Errorf("%w: worker %d: etcd lease %x expired", holder.ErrLeaseLost, l.WorkerID(), l.id))
		return l.Err()
	}
	if err != nil {
		return err
	}
	return l.vouch(ctx, sent, time.Duration(r.TTL)*time.Second)
}

// start ends the lease on a timer at its deadline, so Done closes
// promptly (the generator checks the deadline itself), and keeps it alive.
func (l *lease) start() {
	// The timer may fire while Release revokes the lease (which clears
	// l.id): it names the etcd lease it was started for.
	id := l.id
	l.fence = time.AfterFunc(l.Deadline().Sub(l.h.s.Now()), func() {
		l.End(fmt.Errorf("%w: worker %d: no keep-alive of etcd lease %x answered for %s", holder.ErrLeaseLost,
			l.WorkerID(), id, l.h.fence(l.h.s.TTL)))
	})
	l.wg.Add(1)
	go l.run()
}

func (l *lease) run() {
	defer l.wg.Done()
	holder.KeepAlive(l, l.h.s.Report, l.stop, func() { l.renew() })
}

// Release implements holder.Lease: it stops issuing, persists the final
// horizon last (when known) and revokes the etcd lease, which deletes the
// claim.
func (l *lease) Release(ctx context.Context, last time.Time) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		l.fence.Stop()
		l.h.mu.Lock()
		delete(l.h.live, l)
		l.h.mu.Unlock()
		if !last.IsZero() {
			if perr := l.persist(ctx, last); perr != nil && !errors.Is(perr, holder.ErrLeaseLost) {
				err = perr
			}
		}
		err = errors.Join(err, l.revoke(ctx))
		if err != nil {
			err = fmt.Errorf("etcd: release worker %d: %w", l.WorkerID(), err)
		}
	})
	return err
}
