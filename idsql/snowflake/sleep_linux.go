package snowflake

import (
	"errors"
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread in nanosleep for d, which wakes
// within about a tenth of a millisecond of the deadline (the kernel's timer
// slack) and burns no CPU meanwhile. The goroutine's thread is in a system
// call for that time; the runtime hands its P to other goroutines if they
// need it. It reports whether it slept.
func preciseSleep(d time.Duration) bool {
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		err := syscall.Nanosleep(&ts, &rem)
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.EINTR) {
			return false
		}
		ts = rem // a signal (the runtime's preemption) ended it early: sleep the rest
	}
}
