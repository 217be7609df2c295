// Package clocktest provides a fake clock for tests: time passes only when a
// test says so or when a caller sleeps, so tests never sleep for real.
package clocktest

import (
	"context"
	"sync"
	"time"
)

// Fake is a manual clock. Sleep advances it by the requested duration, so a
// generator waiting for the next tick gets it at once. It is safe for
// concurrent use.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	slept  time.Duration
	sleeps int
}

// New returns a fake clock reading now.
func New(now time.Time) *Fake { return &Fake{now: now} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Sleep advances the clock by d and records the sleep.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if d > 0 {
		f.now = f.now.Add(d)
	}
	f.slept += d
	f.sleeps++
	return nil
}

// Add moves the clock by d, which may be negative (a clock stepping back).
func (f *Fake) Add(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// Set sets the clock to t.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Slept reports how many times Sleep was called and for how long in all.
func (f *Fake) Slept() (calls int, total time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sleeps, f.slept
}
