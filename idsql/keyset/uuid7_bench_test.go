package keyset_test

import (
	"context"
	"syscall"
	"testing"

	gofrs "github.com/gofrs/uuid/v5"
	"github.com/google/uuid"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyset"
)

// BenchmarkUUID7 is the time of one UUIDv7 key: idsql's (a uuid7 table's
// key from its key source, fenced by its lease, written as a UUID) beside
// google/uuid's NewV7 and gofrs/uuid's NewV7 in the same run, each as 16
// bytes. Every side's keys are checked to be version 7 and distinct from
// the one before. Run it alternated, a few rounds:
//
//	go test -run '^$' -bench 'UUID7$' -count 5 ./idsql/keyset/
func BenchmarkUUID7(b *testing.B) {
	ctx := context.Background()
	cfg := &keyset.Config{Namespace: "bench", Tables: map[string]keyset.TableConfig{"t": {Strategy: keyset.UUID7}}}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Fixed(1)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { keys.Close() })
	src, err := keys.Source(ctx, "t")
	if err != nil {
		b.Fatal(err)
	}
	codec, err := cfg.UUIDKeys("t")
	if err != nil {
		b.Fatal(err)
	}
	check := func(b *testing.B, last, u [16]byte) {
		if u == last || uuid.UUID(u).Version() != 7 {
			got, prev := uuid.UUID(u).String(), uuid.UUID(last).String() // made only here: no allocation per key
			b.Fatalf("%s after %s: not a new UUIDv7", got, prev)
		}
	}
	// cpu reports the process's CPU time per key beside the wall time:
	// idsql's keys come at most 4,096 a millisecond (the leaf layout's
	// sequence), so its wall time per key is that cap, 244 ns, not its
	// work.
	cpu := func(b *testing.B, run func()) {
		start := processCPU(b)
		run()
		b.ReportMetric(float64(processCPU(b)-start)/float64(b.N), "cpu-ns/op")
	}
	b.Run("idsql", func(b *testing.B) {
		var last [16]byte
		cpu(b, func() {
			for b.Loop() {
				id, err := src.NextID(ctx)
				if err != nil {
					b.Fatal(err)
				}
				u, err := codec.UUID(id)
				if err != nil {
					b.Fatal(err)
				}
				check(b, last, u)
				last = u
			}
		})
	})
	b.Run("google", func(b *testing.B) {
		var last [16]byte
		cpu(b, func() {
			for b.Loop() {
				u, err := uuid.NewV7()
				if err != nil {
					b.Fatal(err)
				}
				check(b, last, u)
				last = u
			}
		})
	})
	b.Run("gofrs", func(b *testing.B) {
		var last [16]byte
		cpu(b, func() {
			for b.Loop() {
				u, err := gofrs.NewV7()
				if err != nil {
					b.Fatal(err)
				}
				check(b, last, u)
				last = u
			}
		})
	})
}

// processCPU is the process's CPU time (user and system) so far, in ns.
func processCPU(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
