package keyset_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

// Routing code computes a row's shard the way the wrapper does, and reads
// it back from a key.
func ExampleShardOf() {
	s, _ := keyset.ShardOf("alice@example.com", 6) // FNV-1a 64 of the bytes, mod 64
	fmt.Println(s)
	s, _ = keyset.ShardOf(12345, 6) // integers by value, mod 64
	fmt.Println(s)

	g := keyset.Gene{ShardBits: 6, AppBits: 8, App: 3}
	key, _ := g.Compose(1000, s) // 1000 << 14 | 57 << 8 | 3
	fmt.Println(key, g.Decompose(key))
	// Output:
	// 6
	// 57
	// 16398595 {1000 57 3}
}

// Routing by the configuration: the shard bits come from the table.
func ExampleConfig_ShardOf() {
	cfg, err := keyset.Parse("idsql.yaml", []byte(`namespace: shop
tables:
  orders: {strategy: segment, shard: {column: user_id, bits: 6}, app: {id: 3, bits: 8}}
`), time.Now())
	if err != nil {
		panic(err)
	}
	shard, _ := cfg.ShardOf("orders", "alice@example.com")
	fmt.Println("alice's orders live in shard", shard)

	var orderID int64 = 16398595 // read back from a request
	fmt.Println("order", orderID, "is in shard", cfg.Tables["orders"].Gene().Decompose(orderID).Shard)
	// Output:
	// alice's orders live in shard 6
	// order 16398595 is in shard 57
}

// The values other languages must reproduce (see ShardOf).
func TestShardOfVectors(t *testing.T) {
	type named string
	for _, tc := range []struct {
		v    any
		bits int
		want int
	}{
		{"alice@example.com", 6, 6},
		{[]byte("alice@example.com"), 6, 6},
		{named("alice@example.com"), 6, 6},
		{"13800138000", 6, 11},
		{"", 6, 37},
		{int64(-1), 6, 63},
		{int8(-1), 3, 7},
		{uint32(12345), 6, 57},
		{12345, 1, 1},
	} {
		if got, err := keyset.ShardOf(tc.v, tc.bits); err != nil || got != tc.want {
			t.Errorf("ShardOf(%#v, %d) = %d, %v; want %d", tc.v, tc.bits, got, err, tc.want)
		}
	}
	for _, v := range []any{nil, 1.5, true} {
		if _, err := keyset.ShardOf(v, 6); err == nil {
			t.Errorf("ShardOf(%#v) accepted", v)
		}
	}
}
