package snowflake

import (
	"context"
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

// SystemClock is the real clock. Its Sleep burns no CPU: it waits on a
// Go timer, or, for short waits on Linux, blocks its thread in nanosleep
// (see Sleep).
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// preciseBelow is the longest wait SystemClock.Sleep makes with
// preciseSleep instead of a Go timer.
const preciseBelow = 2 * time.Millisecond

// Sleep implements Clock. A wait shorter than 2 ms (waiting for the next
// tick of a millisecond layout, or for a clock that stepped back a little)
// blocks the calling goroutine's thread in the kernel's high-resolution
// sleep where the platform has one (Linux): a Go timer wakes about a
// millisecond late for any wait under a millisecond, since the runtime's
// poller sleeps in whole milliseconds, and that would cost a millisecond
// layout a fifth of its ceiling. Such a wait is not interrupted by ctx; ctx
// is checked before and after it. Longer waits use a Go timer and end early
// when ctx is done.
func (SystemClock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d <= 0 {
		return nil
	}
	if d < preciseBelow && preciseSleep(d) {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
