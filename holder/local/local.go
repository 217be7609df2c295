package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/idsql/idsql/holder"
)

// DefaultRefresh is how often a lease rewrites its cache file.
const DefaultRefresh = 3 * time.Second

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
	WorkerID int64     `json:"worker_id"`
	Last     time.Time `json:"last_timestamp"`
	Table    string    `json:"table"`
	Instance string    `json:"instance"`
}

func (h *Holder) path(ns string, w int64) string {
	return filepath.Join(h.s.Dir, fmt.Sprintf("%s.worker-%d.json", ns, w))
}

// ReadCache returns the timestamp stored in a cache file, zero when the file
// does not exist.
func ReadCache(path string) (time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	var c cacheFile
	if err := json.Unmarshal(b, &c); err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", path, err)
	}
	return c.Last, nil
}

// writeCache replaces the file atomically (write, sync, rename).
func writeCache(path string, c cacheFile) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	tmp := path + ".tmp" + strconv.Itoa(os.Getpid())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// Acquire implements holder.Holder.
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
	last, err := ReadCache(path)
	if err != nil {
		return nil, fmt.Errorf("local: read cache file: %w", err)
	}
	now := h.s.Now()
	if err := holder.CheckClock(w, now, last); err != nil {
		return nil, fmt.Errorf("local: refusing worker %d (cache file %s): %w", w, path, err)
	}
	c := cacheFile{WorkerID: w, Last: now, Table: req.Table, Instance: req.Instance.Key()}
	if err := writeCache(path, c); err != nil {
		return nil, fmt.Errorf("local: write cache file: %w", err)
	}
	h.live[w] = true
	// The previous run's IDs are all before now's tick: start after it.
	l := &lease{StaticLease: holder.NewStaticLease(w, now), h: h, path: path, c: c, stop: make(chan struct{})}
	l.wg.Add(1)
	go l.run()
	return l, nil
}

type lease struct {
	*holder.StaticLease
	h    *Holder
	path string
	c    cacheFile
	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

func (l *lease) save() error {
	if hw := l.HighWater(); hw.After(l.c.Last) {
		l.c.Last = hw
	}
	if now := l.h.s.Now(); now.After(l.c.Last) {
		l.c.Last = now
	}
	return writeCache(l.path, l.c)
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
			// A failing write only weakens the start-up check of the next
			// run; it does not endanger uniqueness now.
			l.save()
		}
	}
}

// Release implements holder.Lease: it stops issuing, writes the final
// timestamp and frees the worker ID.
func (l *lease) Release(context.Context) error {
	var err error
	l.once.Do(func() {
		l.End(holder.ErrReleased)
		close(l.stop)
		l.wg.Wait()
		err = l.save()
		l.h.mu.Lock()
		delete(l.h.live, l.WorkerID())
		l.h.mu.Unlock()
		if err != nil {
			err = fmt.Errorf("local: write cache file: %w", err)
		}
	})
	return err
}
