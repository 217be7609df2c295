package peers

import (
	"context"
	"testing"
	"time"

	"github.com/sony/sonyflake"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/snowflake"
)

// IDs made by sony/sonyflake decode with idsql's Sony layout exactly as
// sonyflake.Decompose takes them apart, and idsql's Sony generator makes
// IDs that sonyflake.Decompose reads back the same way.
func TestSonyLayoutMatchesSonyflake(t *testing.T) {
	sf, err := sonyflake.New(sonyflake.Settings{MachineID: func() (uint16, error) { return 0xbeef, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 { // several ticks' sequences
		u, err := sf.NextID()
		if err != nil {
			t.Fatal(err)
		}
		id := int64(u)
		want := sonyflake.Decompose(u)
		got := snowflake.Sony.Decompose(id)
		tick := got.Time.Sub(snowflake.Sony.Epoch) / (10 * time.Millisecond)
		if uint64(tick) != want["time"] || uint64(got.Sequence) != want["sequence"] || uint64(got.Worker) != want["machine-id"] {
			t.Fatalf("%d: idsql Sony decodes tick %d, sequence %d, worker %d; sonyflake says %v", id, tick, got.Sequence, got.Worker, want)
		}
		if got.Worker != 0xbeef {
			t.Fatalf("%d: worker %#x, want 0xbeef", id, got.Worker)
		}
		if back, err := snowflake.Sony.Compose(got); err != nil || back != id {
			t.Fatalf("%d: Sony.Compose of its parts = %d, %v", id, back, err)
		}
	}
	g, err := snowflake.New(context.Background(), holder.NewStaticLease(0x4321, time.Time{}), snowflake.Settings{Layout: snowflake.Sony})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := g.AppendIDs(context.Background(), nil, 300) // more than one tick's 256
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		p, parts := snowflake.Sony.Decompose(id), sonyflake.Decompose(uint64(id))
		tick := p.Time.Sub(snowflake.Sony.Epoch) / (10 * time.Millisecond)
		if parts["machine-id"] != 0x4321 || parts["sequence"] != uint64(p.Sequence) || parts["time"] != uint64(tick) {
			t.Fatalf("idsql's Sony ID %d: sonyflake decomposes %v, idsql tick %d, sequence %d", id, parts, tick, p.Sequence)
		}
	}
}
