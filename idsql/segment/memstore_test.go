package segment_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/idsql/segment"
)

// memStore is an in-memory segment.Store for tests and benchmarks that need
// no database. It records every request and can be told to fail or block.
type memStore struct {
	mu       sync.Mutex
	keys     map[string]*memKey
	requests []segment.Request
	failErr  error         // when set, Allocate fails with it
	gate     chan struct{} // when set, Allocate waits for a receive... or ctx
	calls    atomic.Int64
}

type memKey struct{ max, step int64 }

func newMemStore(keys map[string]int64) *memStore {
	m := &memStore{keys: map[string]*memKey{}}
	for k, step := range keys {
		m.keys[k] = &memKey{step: step}
	}
	return m
}

func (m *memStore) Keys(ctx context.Context) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failErr != nil {
		return nil, m.failErr
	}
	var out []string
	for k := range m.keys {
		out = append(out, k)
	}
	slices.Sort(out)
	return out, nil
}

func (m *memStore) Allocate(ctx context.Context, req segment.Request) (segment.Range, error) {
	m.calls.Add(1)
	m.mu.Lock()
	gate, failErr := m.gate, m.failErr
	m.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return segment.Range{}, ctx.Err()
		}
	}
	if failErr != nil {
		return segment.Range{}, failErr
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	k, ok := m.keys[req.Key]
	if !ok {
		return segment.Range{}, fmt.Errorf("memstore: %q: %w", req.Key, segment.ErrUnknownKey)
	}
	step := req.Step
	if step == 0 {
		step = k.step
	}
	k.max += step
	return segment.Range{Key: req.Key, First: k.max - step + 1, Last: k.max, StoredStep: k.step, Instance: req.Instance, Time: time.Now()}, nil
}

func (m *memStore) setFail(err error) {
	m.mu.Lock()
	m.failErr = err
	m.mu.Unlock()
}

func (m *memStore) steps() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for _, r := range m.requests {
		out = append(out, r.Step)
	}
	return out
}

func (m *memStore) addKey(k string, step int64) {
	m.mu.Lock()
	m.keys[k] = &memKey{step: step}
	m.mu.Unlock()
}

func (m *memStore) removeKey(k string) {
	m.mu.Lock()
	delete(m.keys, k)
	m.mu.Unlock()
}

var errDown = errors.New("memstore: database down")

// fakeClock is an injected clock that moves only when told to.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
