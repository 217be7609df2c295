package idsql_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
)

var textForms = []idsql.TextForm{
	{},
	{Prefix: "ord_"},
	{Encoding: idsql.Base62},
	{Encoding: idsql.Base62, Prefix: "ord_"},
	{Encoding: idsql.Base58, Prefix: "u"},
	{Encoding: idsql.Crockford32},
}

func TestTextFormFormat(t *testing.T) {
	tests := []struct {
		form idsql.TextForm
		id   int64
		want string
	}{
		{idsql.TextForm{}, 42, "42"},
		{idsql.TextForm{Prefix: "ord_"}, 42, "ord_42"},
		{idsql.TextForm{Encoding: idsql.Base62}, 1, "00000000001"},
		{idsql.TextForm{Encoding: idsql.Base62, Prefix: "ord_"}, 62, "ord_00000000010"},
		{idsql.TextForm{Encoding: idsql.Base62}, math.MaxInt64, "AzL8n0Y58m7"},
		{idsql.TextForm{Encoding: idsql.Base58}, 1, "11111111112"},
		{idsql.TextForm{Encoding: idsql.Base58}, 58, "11111111121"},
		{idsql.TextForm{Encoding: idsql.Crockford32}, 31, "000000000000Z"},
		{idsql.TextForm{Encoding: idsql.Crockford32}, math.MaxInt64, "7ZZZZZZZZZZZZ"},
	}
	for _, tt := range tests {
		if got := tt.form.Format(tt.id); got != tt.want {
			t.Errorf("%v: Format(%d) = %q, want %q", tt.form, tt.id, got, tt.want)
		}
		if got, err := tt.form.Parse(tt.want); err != nil || got != tt.id {
			t.Errorf("%v: Parse(%q) = %d, %v; want %d", tt.form, tt.want, got, err, tt.id)
		}
	}
}

func TestTextFormParseErrors(t *testing.T) {
	b62 := idsql.TextForm{Encoding: idsql.Base62, Prefix: "ord_"}
	tests := []struct {
		form idsql.TextForm
		in   string
		want string
	}{
		{b62, "usr_00000000001", `want the prefix "ord_"`},
		{b62, "00000000001", `want the prefix "ord_"`},
		{b62, "ord_0001", "want 11 characters after the prefix, not 4"},
		{b62, "ord_0000000000-", `'-' is not a base62 digit`},
		{b62, "ord_00000000000", "zero is never a key"},
		{b62, "ord_zzzzzzzzzzz", "beyond the largest 64-bit key"},
		{idsql.TextForm{Encoding: idsql.Base58}, "10000000000", `'0' is not a base58 digit`},
		{idsql.TextForm{Encoding: idsql.Crockford32}, "8000000000000", "beyond the largest 64-bit key"},
		{idsql.TextForm{Encoding: idsql.Crockford32}, "000000000000U", `'U' is not a crockford32 digit`},
		{idsql.TextForm{}, "-5", "want a positive decimal integer"},
		{idsql.TextForm{}, "0", "want a positive decimal integer"},
	}
	for _, tt := range tests {
		_, err := tt.form.Parse(tt.in)
		if !errors.Is(err, idsql.ErrText) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: Parse(%q) = %v, want ErrText saying %q", tt.form, tt.in, err, tt.want)
		}
	}
	// Crockford's base 32 reads any case, and I, L as 1 and O as 0.
	c := idsql.TextForm{Encoding: idsql.Crockford32}
	for _, in := range []string{"000000000001z", "oooooooooooiZ", "0000000000L1Z"} {
		want := int64(1)<<5 | 31
		if in == "0000000000L1Z" {
			want = 1<<10 | 1<<5 | 31
		}
		if got, err := c.Parse(in); err != nil || got != want {
			t.Errorf("crockford32 Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

// TestTextFormSorts: with an encoding, texts sort byte by byte as their
// keys do.
func TestTextFormSorts(t *testing.T) {
	ids := []int64{1, 9, 10, 61, 62, 63, 3843, 3844, 1 << 32, 1<<53 - 1, 1 << 53, math.MaxInt64 - 1, math.MaxInt64}
	for _, f := range textForms {
		if f.Encoding == "" {
			continue
		}
		for i := 1; i < len(ids); i++ {
			if a, b := f.Format(ids[i-1]), f.Format(ids[i]); a >= b {
				t.Errorf("%v: %d < %d but %q >= %q", f, ids[i-1], ids[i], a, b)
			}
		}
	}
}

// FuzzTextForm: every positive key survives Format and Parse in every
// form, texts keep the keys' order, and whatever Parse accepts formats
// back to a text that parses to the same key.
func FuzzTextForm(f *testing.F) {
	for _, id := range []int64{1, 42, 61, 62, 1 << 53, math.MaxInt64} {
		f.Add(id, id+1, "ord_00000000010")
	}
	f.Add(int64(7139826715123912704), int64(9), "000000000001z")
	f.Add(int64(3), int64(-1), "11111111121")
	f.Fuzz(func(t *testing.T, a, b int64, s string) {
		for _, form := range textForms {
			if a > 0 {
				if got, err := form.Parse(form.Format(a)); err != nil || got != a {
					t.Fatalf("%v: Parse(Format(%d)) = %d, %v", form, a, got, err)
				}
				if b > a && form.Encoding != "" && form.Format(a) >= form.Format(b) {
					t.Fatalf("%v: %d < %d but %q >= %q", form, a, b, form.Format(a), form.Format(b))
				}
			}
			if v, err := form.Parse(s); err == nil {
				if v <= 0 {
					t.Fatalf("%v: Parse(%q) = %d, not positive", form, s, v)
				}
				if back, err := form.Parse(form.Format(v)); err != nil || back != v {
					t.Fatalf("%v: Parse(%q) = %d, but Format gives %q", form, s, v, form.Format(v))
				}
			}
		}
	})
}

func TestTextFormConfig(t *testing.T) {
	good := "namespace: n\ntables:\n  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}\n  users: {strategy: segment, text: {encoding: crockford32}}\n"
	cfg, err := idsql.Parse("x.yaml", []byte(good), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tables["orders"].Text; got != (idsql.TextForm{Encoding: idsql.Base62, Prefix: "ord_"}) {
		t.Errorf("orders text %+v", got)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"namespace: n\ntables:\n  orders: {strategy: snowflake, text: {encoding: base64}}\n", `x.yaml:3: tables.orders.text.encoding: unknown encoding "base64" (want base62, base58, crockford32 or typeid`},
		{"namespace: n\ntables:\n  orders: {strategy: snowflake, text: {prefix: 'ord-'}}\n", `x.yaml:3: tables.orders.text.prefix: "ord-" is not a prefix: 1 to 16 letters, digits and _`},
		{"namespace: n\ntables:\n  a: {strategy: snowflake, text: {prefix: x_}}\n  b: {strategy: snowflake, text: {prefix: x_}}\n", `tables.b.text.prefix: prefix "x_" is also the prefix of table a`},
		{"namespace: n\ntables:\n  a: {strategy: snowflake, text: {encodng: base62}}\n", `tables.a.text.encodng: unknown key "encodng"; did you mean "encoding"?`},
	} {
		if _, err := idsql.Parse("x.yaml", []byte(tt.yaml), time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse = %v\nwant an error containing %q", err, tt.want)
		}
	}
}

func TestConfigParseKey(t *testing.T) {
	cfg := &idsql.Config{Namespace: "n", Tables: map[string]idsql.TableConfig{
		"orders": {Strategy: idsql.Snowflake, Text: idsql.TextForm{Encoding: idsql.Base62, Prefix: "ord_"}},
		"users":  {Strategy: idsql.Segment, Text: idsql.TextForm{Encoding: idsql.Base58}},
		"carts":  {Strategy: idsql.Segment, Text: idsql.TextForm{Encoding: idsql.Crockford32}},
		"plain":  {Strategy: idsql.Segment},
	}}
	tests := []struct {
		in    string
		id    int64
		table string
		err   string
	}{
		{"ord_00000000100", 3844, "orders", ""},
		{"12345", 12345, "", ""},
		{"123456789012", 123456789012, "", ""}, // digits alone, no text form reads: decimal
		// Digits alone that are also another key in a form without prefix:
		// refused with both readings, never read as one of them silently.
		{"11111111121", 0, "", `"11111111121" reads as the decimal 11111111121, and as 58 in the text form of table users (base58): it is not decoded as either; give the key with its table's prefix (set tables.T.text.prefix`},
		{"0000000000010", 0, "", `"0000000000010" reads as the decimal 10, and as 32 in the text form of table carts (crockford32)`},
		{"1111111112z", 58 + 57, "users", ""},
		{"000000000001Z", 63, "carts", ""},
		{"ord_1", 0, "", `"ord_1" has the prefix of table orders but is not one of its keys`},
		{"usr_1", 0, "", `"usr_1" is neither a positive decimal integer nor a key in the text form of a configured table`},
		{"0", 0, "", "is neither a positive decimal integer"},
	}
	for _, tt := range tests {
		id, table, err := cfg.ParseKey(tt.in)
		if tt.err != "" {
			if !errors.Is(err, idsql.ErrText) || !strings.Contains(err.Error(), tt.err) || strings.Contains(tt.err, "reads as") != errors.Is(err, idsql.ErrAmbiguousKey) {
				t.Errorf("ParseKey(%q) = %d, %q, %v; want ErrText saying %q", tt.in, id, table, err, tt.err)
			}
			continue
		}
		if err != nil || id != tt.id || table != tt.table {
			t.Errorf("ParseKey(%q) = %d, %q, %v; want %d, %q", tt.in, id, table, err, tt.id, tt.table)
		}
	}
}
