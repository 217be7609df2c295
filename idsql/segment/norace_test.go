//go:build !race

package segment_test

// raceEnabled reports a -race build: timing figures are meaningless there.
const raceEnabled = false
