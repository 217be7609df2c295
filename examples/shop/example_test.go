package shop_test

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/examples/shop"
	"github.com/idsql/idsql/idsql/keyset"
)

// An OrderID travels as a JSON string, so JavaScript clients keep every
// digit; a number is accepted on input.
func ExampleOrderID_MarshalJSON() {
	type order struct {
		ID   shop.OrderID `json:"id"`
		User shop.UserID  `json:"user"`
	}
	b, _ := json.Marshal(order{ID: 2006924430235693098, User: 1001})
	fmt.Println(string(b))

	var o order
	err := json.Unmarshal([]byte(`{"id": 2006924430235693098, "user": "1001"}`), &o)
	fmt.Println(o.ID, o.User, err)
	// Output:
	// {"id":"2006924430235693098","user":"1001"}
	// 2006924430235693098 1001 <nil>
}

// A snowflake ID decodes with the layout baked into the generated file.
func ExampleDecodeOrderID() {
	p, err := shop.DecodeOrderID(2006924430235693098)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.ID, p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	// Output: 2006924430235693098 2026-01-02T03:04:05.678Z 7 42
}

func ExampleParseOrderID() {
	id, err := shop.ParseOrderID("2006924430235693098")
	fmt.Println(id, id.Table(), err)
	_, err = shop.ParseOrderID("-1")
	fmt.Println(errors.Is(err, shop.ErrInvalidID))
	// Output:
	// 2006924430235693098 orders <nil>
	// true
}

// CheckConfig fails loudly when the configuration changed after the file
// was generated.
func ExampleCheckConfig() {
	cfg, err := keyset.Load("idsql.yaml")
	if err != nil {
		panic(err)
	}
	fmt.Println(shop.CheckConfig(cfg))

	cfg.Tables["orders"] = keyset.TableConfig{Strategy: keyset.Segment}
	fmt.Println(shop.CheckConfig(cfg))
	// Output:
	// <nil>
	// shop: idsql_gen.go does not match the configuration; run go generate: table "orders" has strategy segment, generated for snowflake
}

func TestScan(t *testing.T) {
	var id shop.OrderID
	for _, src := range []any{int64(42), []byte("42"), "42"} {
		id = 0
		if err := id.Scan(src); err != nil || id != 42 {
			t.Errorf("Scan(%#v) = %d, %v", src, id, err)
		}
	}
	for _, src := range []any{nil, int64(0), int64(-1), "x", 4.2} {
		if err := id.Scan(src); !errors.Is(err, shop.ErrInvalidID) {
			t.Errorf("Scan(%#v): %v, want ErrInvalidID", src, err)
		}
	}
	var n sql.Null[shop.OrderID]
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Errorf("sql.Null Scan(nil) = %+v, %v", n, err)
	}
	if err := n.Scan(int64(7)); err != nil || !n.Valid || n.V != 7 {
		t.Errorf("sql.Null Scan(7) = %+v, %v", n, err)
	}
	if v, err := shop.OrderID(9).Value(); v != int64(9) || err != nil {
		t.Errorf("Value = %#v, %v", v, err)
	}
}

func TestUnmarshalJSON(t *testing.T) {
	for in, want := range map[string]shop.UserID{`"5"`: 5, `5`: 5, `"\u0035"`: 5, `null`: 3} {
		id := shop.UserID(3)
		if err := json.Unmarshal([]byte(in), &id); err != nil || id != want {
			t.Errorf("unmarshal %s = %d, %v; want %d", in, id, err, want)
		}
	}
	for _, in := range []string{`""`, `"0"`, `-5`, `5.0`, `1e3`, `"9223372036854775808"`, `true`, `"5 "`} {
		var id shop.UserID
		if err := json.Unmarshal([]byte(in), &id); err == nil {
			t.Errorf("unmarshal %s accepted as %d", in, id)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	future, _ := shop.ParseOrderID(strconv.FormatInt(1<<62, 10))
	for _, id := range []int64{0, -1, int64(future)} {
		if _, err := shop.DecodeOrderID(id); !errors.Is(err, shop.ErrInvalidID) {
			t.Errorf("DecodeOrderID(%d): %v, want ErrInvalidID", id, err)
		}
	}
	if _, err := shop.DecodeUserID(0); !errors.Is(err, shop.ErrInvalidID) {
		t.Errorf("DecodeUserID(0): %v", err)
	}
	if p, err := shop.UserID(12).Decode(); err != nil || p.ID != 12 {
		t.Errorf("UserID(12).Decode() = %+v, %v", p, err)
	}
}

// FuzzJSONRoundTrip: whatever UnmarshalJSON accepts is a positive ID whose
// MarshalJSON reads back as the same ID, and every positive ID round-trips.
func FuzzJSONRoundTrip(f *testing.F) {
	for _, s := range []string{`"2006924430235693098"`, `1`, `"9223372036854775807"`, `null`, `"0"`, `-1`, `"\u0031"`, `"+7"`, `007`} {
		f.Add([]byte(s), int64(12345))
	}
	f.Fuzz(func(t *testing.T, in []byte, n int64) {
		var id shop.OrderID
		if err := id.UnmarshalJSON(in); err == nil && string(in) != "null" {
			if id <= 0 {
				t.Fatalf("%q accepted as %d", in, id)
			}
			roundTripJSON(t, id)
		}
		if n > 0 {
			roundTripJSON(t, shop.OrderID(n))
		}
	})
}

func roundTripJSON(t *testing.T, id shop.OrderID) {
	t.Helper()
	b, err := json.Marshal(id)
	if err != nil {
		t.Fatal(err)
	}
	if want := `"` + strconv.FormatInt(int64(id), 10) + `"`; string(b) != want {
		t.Fatalf("marshal %d = %s, want %s", id, b, want)
	}
	var back shop.OrderID
	if err := json.Unmarshal(b, &back); err != nil || back != id {
		t.Fatalf("%s read back as %d, %v; want %d", b, back, err, id)
	}
}

// FuzzTextRoundTrip: ParseOrderID, UnmarshalText and Scan agree, and what
// they accept prints and parses back to the same ID.
func FuzzTextRoundTrip(f *testing.F) {
	for _, s := range []string{"2006924430235693098", "1", "0", "-5", "x", "", "+3", "0009", "9223372036854775808"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := shop.ParseOrderID(s)
		var txt, scanned shop.OrderID
		terr := txt.UnmarshalText([]byte(s))
		serr := scanned.Scan(s)
		if (err == nil) != (terr == nil) || (err == nil) != (serr == nil) {
			t.Fatalf("%q: Parse %v, UnmarshalText %v, Scan %v", s, err, terr, serr)
		}
		if err != nil {
			if !errors.Is(err, shop.ErrInvalidID) {
				t.Fatalf("%q: %v does not wrap ErrInvalidID", s, err)
			}
			return
		}
		if id <= 0 || txt != id || scanned != id {
			t.Fatalf("%q: Parse %d, UnmarshalText %d, Scan %d", s, id, txt, scanned)
		}
		b, _ := id.MarshalText()
		back, err := shop.ParseOrderID(string(b))
		if err != nil || back != id || string(b) != id.String() {
			t.Fatalf("%d: text %q reads back as %d, %v", id, b, back, err)
		}
	})
}

func TestCheckConfigDrift(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*keyset.Config)
		want   string
	}{
		{"layout", func(c *keyset.Config) { c.Layout = keyset.LayoutConfig{Preset: "uid32"} }, "layout is 32/18/13 bits of 1s since 2016-05-20T00:00:00Z, generated for 41/10/12"},
		{"table removed", func(c *keyset.Config) { delete(c.Tables, "users") }, `table "users" is no longer configured`},
		{"table added", func(c *keyset.Config) { c.Tables["refunds"] = keyset.TableConfig{Strategy: keyset.Snowflake} }, `table "refunds" is configured but has no generated type`},
		{"go_name", func(c *keyset.Config) {
			tc := c.Tables["orders"]
			tc.GoName = "PurchaseID"
			c.Tables["orders"] = tc
		}, `table "orders" has go_name "PurchaseID", generated for ""`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := keyset.Load("idsql.yaml")
			if err != nil {
				t.Fatal(err)
			}
			tc.change(cfg)
			err = shop.CheckConfig(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("CheckConfig: %v, want %q", err, tc.want)
			}
		})
	}
	if err := shop.CheckConfig(nil); err == nil {
		t.Error("CheckConfig(nil) accepted")
	}
}
