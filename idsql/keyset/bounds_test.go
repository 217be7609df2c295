package keyset

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/dialect"

	"github.com/idsql/idsql/idsql/snowflake"
)

func TestConfigBounds(t *testing.T) {
	cfg, err := Parse("idsql.yaml", []byte(`
namespace: shop
layout: uid32
tables:
  orders:  {strategy: snowflake}
  small:   {strategy: snowflake, max_id: 500000000000000000}
  users:   {strategy: segment, key: people}
`), time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	feb := jan.AddDate(0, 1, 0)
	wantLo, wantHi, err := snowflake.UID32.Bounds(jan, feb)
	if err != nil {
		t.Fatal(err)
	}
	if lo, hi, err := cfg.Bounds("orders", jan, feb); err != nil || lo != wantLo || hi != wantHi {
		t.Errorf("Bounds(orders) = %d, %d, %v; want the layout's %d, %d", lo, hi, err, wantLo, wantHi)
	}

	// max_id caps hi, and refuses a range wholly above it.
	maxLo, _, _ := snowflake.UID32.Bounds(jan.AddDate(-4, 0, 0), feb)
	if maxLo > 5e17 || wantHi < 5e17 {
		t.Fatalf("test premise: max_id 5e17 is not between %d and %d", maxLo, wantHi)
	}
	if lo, hi, err := cfg.Bounds("small", jan.AddDate(-4, 0, 0), feb); err != nil || lo != maxLo || hi != 5e17 {
		t.Errorf("Bounds(small) = %d, %d, %v; want %d, max_id", lo, hi, err, maxLo)
	}
	if _, _, err := cfg.Bounds("small", jan.AddDate(20, 0, 0), jan.AddDate(21, 0, 0)); !errors.Is(err, snowflake.ErrRange) ||
		!strings.Contains(err.Error(), "max_id 500000000000000000") {
		t.Errorf("Bounds(small) above max_id: %v", err)
	}

	tests := []struct {
		table    string
		from, to time.Time
		is       error
		says     string
	}{
		{"users", jan, feb, ErrNoTimeOrder, `table users is a segment table: its keys count up from the counter of segment key "people" and carry no time`},
		{"nope", jan, feb, nil, `no table "nope" in the configuration`},
		{"orders", feb, jan, snowflake.ErrRange, "bounds of table orders: snowflake: invalid time range: from 2026-02-01T00:00:00Z is not before to 2026-01-01T00:00:00Z"},
		{"orders", jan.AddDate(-20, 0, 0), jan, snowflake.ErrRange, "before the layout's epoch 2016-05-20T00:00:00Z"},
	}
	for _, tt := range tests {
		_, _, err := cfg.Bounds(tt.table, tt.from, tt.to)
		if err == nil || (tt.is != nil && !errors.Is(err, tt.is)) || !strings.Contains(err.Error(), tt.says) {
			t.Errorf("Bounds(%s, %s, %s) = %v; want an error wrapping %v that says %q", tt.table, tt.from, tt.to, err, tt.is, tt.says)
		}
	}
}

// Bounds answers only for tables whose keys are in time order, which the
// table's codec decides from what Config.Codec gives it. Every TableConfig
// field is listed here once someone has decided whether it can reorder a
// table's keys; a new field (a key shape, say) fails this test until
// Config.Codec passes it to the codec and Codec.Bounds refuses the tables
// whose keys it reorders, or it is found harmless and listed.
func TestBoundsKnowsTableFields(t *testing.T) {
	reviewed := map[string]string{
		"Strategy": "segment tables are refused",
		"Column":   "names the column only",
		"Step":     "segment only",
		"Key":      "segment only",
		"GoName":   "names the Go type only",
		"Cached":   "same keys, made ahead by at most MaxDrift (documented on snowflake.Layout.Bounds)",
		"MaxID":    "caps hi",
		"Shard":    "segment only",
		"App":      "segment only",
		"FillZero": "which rows get keys, not which keys",
		"Text":     "the text form; the integer key is unchanged",
		"Buffer":   "segment only",
		"Shape":    "spread shapes are refused (TestBoundsRefusesSpread)",
	}
	for _, f := range reflect.VisibleFields(reflect.TypeFor[TableConfig]()) {
		if _, ok := reviewed[f.Name]; !ok {
			t.Errorf("TableConfig.%s is new to Bounds: if it can change the order of a snowflake table's keys, make "+
				"Config.Codec pass it on and Codec.Bounds refuse the tables that use it (with a test); then list it in this test", f.Name)
		}
	}
}

func TestMonthlyPartitionsSQL(t *testing.T) {
	cfg, err := Parse("idsql.yaml", []byte(`
namespace: shop
tables:
  orders: {strategy: snowflake}
  users:  {strategy: segment}
`), time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	// Any instant of the first month names it, in UTC: 23:00 at UTC-1 on
	// New Year's Eve is January. The partitions tile.
	got, err := cfg.MonthlyPartitionsSQL("orders", time.Date(2026, 12, 31, 23, 0, 0, 0, time.FixedZone("", -3600)), 2)
	if err != nil {
		t.Fatal(err)
	}
	jan := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	janLo, janHi, _ := cfg.Bounds("orders", jan, jan.AddDate(0, 1, 0))
	febLo, febHi, _ := cfg.Bounds("orders", jan.AddDate(0, 1, 0), jan.AddDate(0, 2, 0))
	for _, want := range []string{
		"from 2027-01 to 2027-02",
		fmt.Sprintf(`CREATE TABLE "orders_2027_01" PARTITION OF "orders" FOR VALUES FROM (%d) TO (%d);`, janLo, janHi+1),
		fmt.Sprintf(`CREATE TABLE "orders_2027_02" PARTITION OF "orders" FOR VALUES FROM (%d) TO (%d);`, febLo, febHi+1),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("partitions lack %q:\n%s", want, got)
		}
	}
	if janHi+1 != febLo {
		t.Errorf("January ends at %d, February starts at %d", janHi, febLo)
	}
	if _, err := cfg.MonthlyPartitionsSQL("orders", time.Now(), 0); err == nil {
		t.Error("0 months accepted")
	}
	if _, err := cfg.MonthlyPartitionsSQL("users", time.Now(), 1); !errors.Is(err, ErrNoTimeOrder) {
		t.Errorf("segment table: %v", err)
	}
	// The configuration's dialect decides: MySQL has no such partitions.
	cfg.Dialect = "mysql"
	if _, err := cfg.MonthlyPartitionsSQL("orders", time.Now(), 1); !errors.Is(err, dialect.ErrNoPartitions) {
		t.Errorf("dialect mysql: %v; want ErrNoPartitions", err)
	}
}

func TestBoundsRefusesSpread(t *testing.T) {
	cfg, err := Parse("idsql.yaml", []byte(`
namespace: shop
tables:
  orders: {strategy: snowflake, shape: {spread: reverse}}
  plain:  {strategy: snowflake, shape: ordered}
`), time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	_, _, err = cfg.Bounds("orders", from, from.AddDate(0, 1, 0))
	if !errors.Is(err, ErrNoTimeOrder) || !strings.Contains(err.Error(), "shape {spread: reverse}") {
		t.Errorf("Bounds of a reversed table: %v; want ErrNoTimeOrder naming the shape", err)
	}
	if _, err := cfg.MonthlyPartitionsSQL("orders", from, 1); !errors.Is(err, ErrNoTimeOrder) {
		t.Errorf("partitions of a reversed table: %v; want ErrNoTimeOrder", err)
	}
	if _, _, err := cfg.Bounds("plain", from, from.AddDate(0, 1, 0)); err != nil {
		t.Errorf("Bounds of an ordered table: %v", err)
	}
}
