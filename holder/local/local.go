package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/internal/atomicfile"
	"github.com/idsql/idsql/internal/filelock"
)

// DefaultRefresh is how often a lease moves its horizon forward in its cache
// file. A process restarted after a crash waits for the horizon its previous
// run had written, at most two refresh periods.
const DefaultRefresh = time.Second

// Settings configure a Holder. The zero value is not usable: Workers and Dir
// are required.
type Settings struct {
	// Workers maps "table@identity" or "identity" to a worker ID.
	Workers map[string]int64
	// Dir holds the cache files.
	Dir string
	// Refresh is how often the cache file is rewritten; 0 means
	// DefaultRefresh.
	Refresh time.Duration
	// Now is the wall clock; nil means time.Now.
	Now func() time.Time
}

// Holder hands out worker IDs from a static map.
type Holder struct {
	s    Settings
	mu   sync.Mutex
	live map[int64]bool
}

// New validates s and returns a Holder.
func New(s Settings) (*Holder, error) {
	if len(s.Workers) == 0 {
		return nil, errors.New("local: Settings.Workers is empty")
	}
	if s.Dir == "" {
		return nil, errors.New("local: Settings.Dir is empty")
	}
	seen := map[int64]string{}
	for k, w := range s.Workers {
		if w < 0 {
			return nil, fmt.Errorf("local: Settings.Workers[%q] = %d is negative", k, w)
		}
		if o, dup := seen[w]; dup {
			return nil, fmt.Errorf("local: Settings.Workers: %q and %q both map to worker %d", o, k, w)
		}
		seen[w] = k
	}
	if s.Refresh <= 0 {
		s.Refresh = DefaultRefresh
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("local: Settings.Dir: %w", err)
	}
	return &Holder{s: s, live: map[int64]bool{}}, nil
}

// cacheFile is the content of a cache file.
type cacheFile struct {
	WorkerID int64 `json:"worker_id"`
	// Horizon is the time the worker ID's IDs are all stamped before.
	Horizon  time.Time `json:"horizon"`
	Table    string    `json:"table"`
	Instance string    `json:"instance"`
	// PID and Since say which process holds the worker ID and since
	// when, for the error a second process on the host gets.
	PID   int       `json:"pid,omitempty"`
	Since time.Time `json:"since"`
}

func (h *Holder) path(ns string, w int64) string {
	return filepath.Join(h.s.Dir, fmt.Sprintf("%s.worker-%d.json", ns, w))
}

// ReadCache returns the horizon stored in a cache file, zero when the file
// does not exist.
func ReadCache(path string) (time.Time, error) {
	c, err := readCache(path)
	return c.Horizon, err
}

// readCache reads a cache file; the zero value when it does not exist.
func readCache(path string) (cacheFile, error) {
	var c cacheFile
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func writeCache(path string, c cacheFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, b)
}

// Acquire implements holder.Holder. The worker ID's lock file makes it
// exclusive on the host: a second process mapped to the same worker ID is
// refused while the first lives.
func (h *Holder) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	key := req.Table + "@" + req.Instance.Key()
	w, ok := h.s.Workers[key]
	if !ok {
		if w, ok = h.s.Workers[req.Instance.Key()]; !ok {
			return nil, fmt.Errorf("local: no worker ID configured for %q or %q", key, req.Instance.Key())
		}
	}
	if w >= req.MaxWorkers() {
		return nil, fmt.Errorf("local: worker ID %d for %q out of range 0..%d", w, key, req.MaxWorkers()-1)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.live[w] {
		return nil, fmt.Errorf("local: worker ID %d is already leased (identity %q serves more than one table?)", w, req.Instance.Key())
	}
	path := h.path(req.Namespace, w)
	lock, err := filelock.TryLock(path + ".lock")
	if errors.Is(err, filelock.ErrLocked) {
		who := ""
		if c, err := readCache(path); err == nil && c.PID != 0 {
			who = fmt.Sprintf("pid %d, instance %q, since %s", c.PID, c.Instance, c.Since.UTC().Format(time.RFC3339Nano))
		}
		return nil, fmt.Errorf("local: worker ID %d (%s): %w", w, path, &holder.IdentityInUseError{Identity: key, Holder: who,
			Reason: "maps to a worker ID that another live process on this host holds"})
	}
	if err != nil {
		return nil, fmt.Errorf("local: worker ID %d: %w", w, err)
	}
	after, err := ReadCache(path)
	if err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("local: read cache file: %w", err)
	}
	c := cacheFile{WorkerID: w, Horizon: h.horizon(), Table: req.Table, Instance: req.Instance.Key(),
		PID: req.Instance.PID, Since: h.s.Now()}
	if c.Horizon.Before(after) {
		c.Horizon = after
	}
	if err := writeCache(path, c); err != nil {
		lock.Unlock()
		return nil, fmt.Errorf("local: write cache file: %w", err)
	}
	h.live[w] = true
	l := &lease{StaticLease: holder.NewStaticLease(w, after), h: h, path: path, c: c, lock: lock, stop: make(chan struct{})}
	l.Renew(time.Time{}, c.Horizon)
	l.wg.Add(1)
	go l.run()
	return l, nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// horizon is how far a lease may issue on the strength of one cache write:
// two refresh periods, so one late write does not stop the generator.
func (h *Holder) horizon() time.Time { return h.s.Now().Add(2 * h.s.Refresh) }

type lease struct {
	*holder.StaticLease
	h    *Holder
	path string
	c    cacheFile
	lock *filelock.Lock
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func (l *lease) run() {
	defer l.wg.Done()
	t := time.NewTicker(l.h.s.Refresh)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			// The horizon moves only once it is on disk; a failing write
			// makes the generator stop at the last one. It never moves
			// back, also when the clock steps back: IDs up to it may
			// have been issued, and the next lease starts after it.
			c := l.c
			c.Horizon = later(l.h.horizon(), l.c.Horizon)
			if writeCache(l.path, c) == nil {
				l.c = c
				l.Renew(time.Time{}, c.Horizon)
			}
		}
	}
}

// Release implements holder.Lease: it stops issuing, writes the final
// horizon (last, when known) and frees the worker ID.
func (l *lease) Release(_ context.Context, last time.Time) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		if !last.IsZero() {
			l.c.Horizon = last
			if err = writeCache(l.path, l.c); err != nil {
				err = fmt.Errorf("local: write cache file: %w", err)
			}
		}
		l.lock.Unlock()
		l.h.mu.Lock()
		delete(l.h.live, l.WorkerID())
		l.h.mu.Unlock()
	})
	return err
}
