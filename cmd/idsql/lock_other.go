//go:build !unix

package main

// lockDataDir is a no-op where flock is not available; do not run two
// embedded servers on one data directory there.
func lockDataDir(dir string) (release func(), err error) { return func() {}, nil }
