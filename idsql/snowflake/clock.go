package snowflake

import (
	"context"
	"runtime"
	"time"
)

// A Clock is the generator's source of time. Tests inject a fake one so time
// can pass, stand still or step backwards without sleeping.
type Clock interface {
	// Now returns the current time. The system clock's readings carry
	// Go's monotonic reading, so a wall-clock step while running cannot
	// make the generator's time go backwards.
	Now() time.Time
	// Sleep waits for d, or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

// SystemClock is the real clock. Its Sleep spins for the last stretch of a
// wait: on virtual machines time.Sleep can overshoot by a millisecond, a
// whole tick of the leaf layout.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// spinBelow is how much of a wait SystemClock.Sleep spins instead of
// sleeping.
const spinBelow = 2 * time.Millisecond

// Sleep implements Clock.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	deadline := time.Now().Add(d)
	if d > spinBelow {
		t := time.NewTimer(d - spinBelow)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	for i := 0; time.Now().Before(deadline); i++ {
		if i%64 == 63 && ctx.Err() != nil {
			return ctx.Err()
		}
		runtime.Gosched()
	}
	return nil
}
