package segment

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Generator hands out IDs for every key of a Store, from two in-memory
// segments per key. It is safe for concurrent use.
type Generator struct {
	store Store
	s     Settings

	keys atomic.Pointer[map[string]*Key]
	// last is the key NextID found last, with the name its caller gave: a
	// caller that names one key with the same string finds it again by
	// comparing the string's address, without reading or hashing it.
	last atomic.Pointer[found]

	// bg guards starting background goroutines against Close.
	bg     sync.RWMutex
	closed bool
	ctx    context.Context // cancelled by Close; parent of background work
	cancel context.CancelFunc
	wg     sync.WaitGroup

	refreshMu      sync.Mutex        // serializes Refresh
	lastRefresh    time.Time         // Settings.Now of the last refresh; guarded by refreshMu
	lastRefreshErr error             // guarded by refreshMu
	refreshedAt    time.Time         // real (monotonic) time of the last refresh, for rate limiting
	all            map[*Key]struct{} // every handle ever made, closed by Close; guarded by refreshMu
}

// New returns a Generator over store. It reads the key list once (so a
// store that cannot be reached fails here) and then refreshes it every
// Settings.RefreshInterval until Close. Segments are loaded lazily: the
// first ID of each key waits for its first range.
func New(ctx context.Context, store Store, s Settings) (*Generator, error) {
	if store == nil {
		return nil, errors.New("segment: New: nil Store")
	}
	s, err := s.withDefaults()
	if err != nil {
		return nil, err
	}
	g := &Generator{store: store, s: s, all: map[*Key]struct{}{}}
	empty := map[string]*Key{}
	g.keys.Store(&empty)
	g.ctx, g.cancel = context.WithCancel(context.Background())
	if err := g.Refresh(ctx); err != nil {
		g.cancel()
		return nil, err
	}
	if s.RefreshInterval > 0 {
		g.wg.Add(1)
		go g.refreshLoop()
	}
	return g, nil
}

// Settings returns the settings in effect, defaults filled in.
func (g *Generator) Settings() Settings { return g.s }

func (g *Generator) refreshLoop() {
	defer g.wg.Done()
	t := time.NewTicker(g.s.RefreshInterval)
	defer t.Stop()
	for {
		select {
		case <-g.ctx.Done():
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(g.ctx, g.s.LoadTimeout)
			_ = g.Refresh(ctx) // recorded in lastRefreshErr, visible in Snapshot
			cancel()
		}
	}
}

// Refresh re-reads the key list from the store now: new keys become
// usable, keys whose row was deleted are dropped (their handles fail with
// ErrUnknownKey once their buffered IDs run out).
func (g *Generator) Refresh(ctx context.Context) error {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	return g.refreshLocked(ctx)
}

func (g *Generator) refreshLocked(ctx context.Context) error {
	if g.isClosed() {
		return ErrClosed
	}
	names, err := g.store.Keys(ctx)
	g.lastRefresh = g.s.Now()
	g.refreshedAt = time.Now()
	if err != nil {
		g.lastRefreshErr = fmt.Errorf("segment: refresh keys: %w", err)
		return g.lastRefreshErr
	}
	g.lastRefreshErr = nil
	old := *g.keys.Load()
	m := make(map[string]*Key, len(names))
	for _, n := range names {
		if k, ok := old[n]; ok {
			m[n] = k
		} else {
			k := newKey(g, n)
			g.all[k] = struct{}{}
			m[n] = k
		}
	}
	for n, k := range old {
		if _, ok := m[n]; !ok {
			k.removed.Store(true)
		}
	}
	g.keys.Store(&m)
	if l := g.last.Load(); l != nil && l.k.removed.Load() {
		g.last.CompareAndSwap(l, nil)
	}
	return nil
}

// minRefreshGap rate-limits the refresh a lookup of an unknown key causes.
const minRefreshGap = time.Second

// Key returns the handle of key name. Holding the handle skips the map
// lookup of NextID; it is the fastest way to take IDs. A name not known
// yet causes one refresh of the key list (at most one per second), so a key
// created a moment ago is found; a name that still does not exist yields an
// error wrapping ErrUnknownKey.
func (g *Generator) Key(ctx context.Context, name string) (*Key, error) {
	if k, ok := (*g.keys.Load())[name]; ok {
		return k, nil
	}
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	if k, ok := (*g.keys.Load())[name]; ok {
		return k, nil
	}
	if time.Since(g.refreshedAt) >= minRefreshGap {
		if err := g.refreshLocked(ctx); err != nil {
			return nil, keyErr(name, "find key", err)
		}
		if k, ok := (*g.keys.Load())[name]; ok {
			return k, nil
		}
	}
	return nil, keyErr(name, "find key", ErrUnknownKey)
}

// KeyNames returns the known keys, sorted.
func (g *Generator) KeyNames() []string {
	m := *g.keys.Load()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// NextID returns the next ID of key. It is Key(ctx, key) followed by
// (*Key).Next; callers in a hot loop should keep the *Key instead.
func (g *Generator) NextID(ctx context.Context, key string) (int64, error) {
	if l := g.last.Load(); l != nil && unsafe.StringData(l.name) == unsafe.StringData(key) && len(l.name) == len(key) {
		return l.k.Next(ctx)
	}
	return g.nextByLookup(ctx, key)
}

// found is a key NextID found and the name its caller gave for it.
type found struct {
	name string
	k    *Key
}

// nextByLookup is NextID for a name other than the last one's string:
// the last key when the names are equal, or else found in the key list;
// it becomes the last, under the caller's string.
func (g *Generator) nextByLookup(ctx context.Context, key string) (int64, error) {
	l := g.last.Load()
	if l != nil && l.name == key && !l.k.removed.Load() {
		return l.k.Next(ctx)
	}
	k, ok := (*g.keys.Load())[key]
	if !ok {
		var err error
		if k, err = g.Key(ctx, key); err != nil {
			return 0, err
		}
	}
	// A key keeps the found of the string that named it last, so that
	// callers taking turns with their own strings allocate nothing.
	if l = k.found.Load(); l == nil || unsafe.StringData(l.name) != unsafe.StringData(key) || len(l.name) != len(key) {
		l = &found{name: key, k: k}
		k.found.Store(l)
	}
	g.last.Store(l)
	return k.Next(ctx)
}

// NextIDs returns n IDs of key; see (*Key).NextIDs.
func (g *Generator) NextIDs(ctx context.Context, key string, n int) ([]int64, error) {
	k, err := g.Key(ctx, key)
	if err != nil {
		return nil, err
	}
	return k.NextIDs(ctx, n)
}

// Close stops the refresh and any background load and waits for them.
// After Close every call that needs a new range fails with ErrClosed; IDs
// are no longer handed out.
func (g *Generator) Close() error {
	g.bg.Lock()
	if g.closed {
		g.bg.Unlock()
		return nil
	}
	g.closed = true
	g.bg.Unlock()
	g.cancel()
	g.refreshMu.Lock()
	for k := range g.all {
		k.close()
	}
	g.refreshMu.Unlock()
	g.wg.Wait()
	return nil
}

// goBackground runs f in a goroutine tracked by Close; false if closed.
func (g *Generator) goBackground(f func()) bool {
	g.bg.RLock()
	defer g.bg.RUnlock()
	if g.closed {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

func (g *Generator) isClosed() bool {
	g.bg.RLock()
	defer g.bg.RUnlock()
	return g.closed
}
