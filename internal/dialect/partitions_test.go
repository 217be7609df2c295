package dialect

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestKeyPartitions(t *testing.T) {
	two := []KeyPartition{{Suffix: "2026_01", From: 10, To: 20}, {Suffix: "2026_02", From: 20, ToMax: true}}
	tests := []struct {
		table string
		parts []KeyPartition
		want  string
	}{
		{"orders", two, `CREATE TABLE "orders_2026_01" PARTITION OF "orders" FOR VALUES FROM (10) TO (20);` + "\n" +
			`CREATE TABLE "orders_2026_02" PARTITION OF "orders" FOR VALUES FROM (20) TO (MAXVALUE);` + "\n"},
		{`shop."Order ""Items"""`, two[:1], `CREATE TABLE "shop"."Order ""Items""_2026_01" PARTITION OF "shop"."Order ""Items""" FOR VALUES FROM (10) TO (20);` + "\n"},
		{"orders", []KeyPartition{{Suffix: "x", From: 0, To: math.MaxInt64}}, `CREATE TABLE "orders_x" PARTITION OF "orders" FOR VALUES FROM (0) TO (9223372036854775807);` + "\n"},
		{"orders", nil, ""},
	}
	for _, tt := range tests {
		got, err := PostgreSQL.KeyPartitions(tt.table, tt.parts)
		if err != nil || got != tt.want {
			t.Errorf("KeyPartitions(%s) = %q, %v; want %q", tt.table, got, err, tt.want)
		}
	}
	bad := []struct {
		d     Dialect
		table string
		parts []KeyPartition
		says  string
	}{
		{MySQL, "orders", two, "no key-range partitions"},
		{SQLite, "orders", two, "no key-range partitions"},
		{PostgreSQL, strings.Repeat("t", 56), two, "longer than PostgreSQL's 63 bytes"},
		{PostgreSQL, "orders", []KeyPartition{{Suffix: "a", From: 5, To: 5}}, "from 5 is not below to 5"},
		{PostgreSQL, "orders", []KeyPartition{{From: 5, To: 6}}, "empty suffix"},
		{PostgreSQL, "a.b.c", two, "invalid table name"},
	}
	for _, tt := range bad {
		_, err := tt.d.KeyPartitions(tt.table, tt.parts)
		if err == nil || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("%s.KeyPartitions(%s) = %v; want an error saying %q", tt.d, tt.table, err, tt.says)
		}
		if tt.d != PostgreSQL && !errors.Is(err, ErrNoPartitions) {
			t.Errorf("%s: %v does not wrap ErrNoPartitions", tt.d, err)
		}
	}
}
