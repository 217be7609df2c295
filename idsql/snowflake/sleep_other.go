//go:build !linux

package snowflake

import "time"

// preciseSleep is Linux only; elsewhere SystemClock.Sleep uses a Go timer
// for every wait.
func preciseSleep(time.Duration) bool { return false }
