// Package peers measures idsql's generators against the Go libraries they
// are compared with in BENCHMARKS.md: github.com/bwmarrin/snowflake and
// github.com/sony/sonyflake. It is a module of its own so that those
// libraries never enter idsql's go.mod; it holds benchmarks only.
//
// Each benchmark runs idsql and the peer in the same process, alternating
// slices of a fixed duration side by side, and reports per-slice medians
// and the ratio of the medians: on a shared machine the noise then hits
// both sides alike. Process CPU per ID comes from getrusage(RUSAGE_SELF)
// around each slice.
//
//	cd integration/peers
//	go test -run '^$' -bench . -benchtime 15x
package peers
