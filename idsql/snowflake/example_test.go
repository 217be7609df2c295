package snowflake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/snowflake"
)

func ExampleLayout_Decompose() {
	p := snowflake.Leaf.Decompose(1541815603606036480)
	fmt.Println(p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	// Output: 2022-06-28T16:07:40.105Z 378 0
}

func ExampleLayout_Compose() {
	id, err := snowflake.Leaf.Compose(snowflake.Parts{
		Time:     time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Worker:   7,
		Sequence: 42,
	})
	fmt.Println(id, err)
	// Output: 2006924427391954986 <nil>
}

func ExamplePreset() {
	l, _ := snowflake.Preset("uid32")
	fmt.Println(l)
	fmt.Println("good until", l.Horizon().Format(time.DateOnly))
	_, err := snowflake.Preset("uid")
	fmt.Println(err)
	// Output:
	// uid32 (32/18/13 bits, 1s since 2016-05-20T00:00:00Z)
	// good until 2152-06-26
	// snowflake: invalid layout: preset "uid" (28 time bits of seconds from 2016-05-20) ran out on 2024-11-20; use "uid32" (32 bits, good until 2152-06-26)
}

func ExampleGenerator() {
	ctx := context.Background()
	lease, err := holder.Fixed(7).Acquire(ctx, holder.Request{
		Namespace: "shop", Table: "orders", WorkerBits: snowflake.Leaf.WorkerBits,
	})
	if err != nil {
		panic(err)
	}
	g, err := snowflake.New(ctx, lease, snowflake.Settings{Layout: snowflake.Leaf})
	if err != nil {
		panic(err)
	}
	a, _ := g.NextID(ctx)
	b, _ := g.NextID(ctx)
	fmt.Println(a < b, snowflake.Leaf.Decompose(a).Worker)
	// Output: true 7
}

func ExampleLayout_Bounds() {
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lo, hi, err := snowflake.Leaf.Bounds(jan, jan.AddDate(0, 1, 0))
	fmt.Println(lo, hi, err)
	// Every key of January 2026 is in [lo, hi], and only those.
	fmt.Println(snowflake.Leaf.Decompose(lo).Time.UTC(), snowflake.Leaf.Decompose(hi).Time.UTC())
	// Times outside the layout are refused, not clamped.
	_, _, err = snowflake.JS53.Bounds(time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), jan)
	fmt.Println(err)
	// Output:
	// 2006515713438646272 2017749737272246271 <nil>
	// 2026-01-01 00:00:00 +0000 UTC 2026-01-31 23:59:59.999 +0000 UTC
	// snowflake: invalid time range: from 2024-12-01T00:00:00Z is before the layout's epoch 2025-01-01T00:00:00Z (layout js53 (38/8/7 bits, 10ms since 2025-01-01T00:00:00Z))
}
