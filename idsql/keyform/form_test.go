package keyform_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyform"
)

var textForms = []keyform.Form{
	{},
	{Prefix: "ord_"},
	{Encoding: keyform.Base62},
	{Encoding: keyform.Base62, Prefix: "ord_"},
	{Encoding: keyform.Base58, Prefix: "u"},
	{Encoding: keyform.Crockford32},
}

func TestTextFormFormat(t *testing.T) {
	tests := []struct {
		form keyform.Form
		id   int64
		want string
	}{
		{keyform.Form{}, 42, "42"},
		{keyform.Form{Prefix: "ord_"}, 42, "ord_42"},
		{keyform.Form{Encoding: keyform.Base62}, 1, "00000000001"},
		{keyform.Form{Encoding: keyform.Base62, Prefix: "ord_"}, 62, "ord_00000000010"},
		{keyform.Form{Encoding: keyform.Base62}, math.MaxInt64, "AzL8n0Y58m7"},
		{keyform.Form{Encoding: keyform.Base58}, 1, "11111111112"},
		{keyform.Form{Encoding: keyform.Base58}, 58, "11111111121"},
		{keyform.Form{Encoding: keyform.Crockford32}, 31, "000000000000Z"},
		{keyform.Form{Encoding: keyform.Crockford32}, math.MaxInt64, "7ZZZZZZZZZZZZ"},
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
	b62 := keyform.Form{Encoding: keyform.Base62, Prefix: "ord_"}
	tests := []struct {
		form keyform.Form
		in   string
		want string
	}{
		{b62, "usr_00000000001", `want the prefix "ord_"`},
		{b62, "00000000001", `want the prefix "ord_"`},
		{b62, "ord_0001", "want 11 characters after the prefix, not 4"},
		{b62, "ord_0000000000-", `'-' is not a base62 digit`},
		{b62, "ord_00000000000", "zero is never a key"},
		{b62, "ord_zzzzzzzzzzz", "beyond the largest 64-bit key"},
		{keyform.Form{Encoding: keyform.Base58}, "10000000000", `'0' is not a base58 digit`},
		{keyform.Form{Encoding: keyform.Crockford32}, "8000000000000", "beyond the largest 64-bit key"},
		{keyform.Form{Encoding: keyform.Crockford32}, "000000000000U", `'U' is not a crockford32 digit`},
		{keyform.Form{}, "-5", "want a positive decimal integer"},
		{keyform.Form{}, "0", "want a positive decimal integer"},
	}
	for _, tt := range tests {
		_, err := tt.form.Parse(tt.in)
		if !errors.Is(err, keyform.ErrText) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: Parse(%q) = %v, want ErrText saying %q", tt.form, tt.in, err, tt.want)
		}
	}
	// Crockford's base 32 reads any case, and I, L as 1 and O as 0.
	c := keyform.Form{Encoding: keyform.Crockford32}
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
		if f.SortsAsKeys() != (f.Encoding != "") {
			t.Errorf("%v: SortsAsKeys() = %v", f, f.SortsAsKeys())
		}
		if !f.SortsAsKeys() {
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
