package keyset_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

func TestTextFormConfig(t *testing.T) {
	good := "namespace: n\ntables:\n  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}\n  users: {strategy: segment, text: {encoding: crockford32}}\n"
	cfg, err := keyset.Parse("x.yaml", []byte(good), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Tables["orders"].Text; got != (keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}) {
		t.Errorf("orders text %+v", got)
	}
	for _, tt := range []struct{ yaml, want string }{
		{"namespace: n\ntables:\n  orders: {strategy: snowflake, text: {encoding: base64}}\n", `x.yaml:3: tables.orders.text.encoding: unknown encoding "base64" (want base62, base58, crockford32 or typeid`},
		{"namespace: n\ntables:\n  orders: {strategy: snowflake, text: {prefix: 'ord-'}}\n", `x.yaml:3: tables.orders.text.prefix: "ord-" is not a prefix: 1 to 16 letters, digits and _`},
		{"namespace: n\ntables:\n  a: {strategy: snowflake, text: {prefix: x_}}\n  b: {strategy: snowflake, text: {prefix: x_}}\n", `tables.b.text.prefix: prefix "x_" is also the prefix of table a`},
		{"namespace: n\ntables:\n  a: {strategy: snowflake, text: {encodng: base62}}\n", `tables.a.text.encodng: unknown key "encodng"; did you mean "encoding"?`},
	} {
		if _, err := keyset.Parse("x.yaml", []byte(tt.yaml), time.Now()); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse = %v\nwant an error containing %q", err, tt.want)
		}
	}
}

func TestConfigParseKey(t *testing.T) {
	cfg := &keyset.Config{Namespace: "n", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: keyset.Snowflake, Text: keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}},
		"users":  {Strategy: keyset.Segment, Text: keyset.TextForm{Encoding: keyset.Base58}},
		"carts":  {Strategy: keyset.Segment, Text: keyset.TextForm{Encoding: keyset.Crockford32}},
		"plain":  {Strategy: keyset.Segment},
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
		id, table, err := codecsOf(t, cfg).ParseKey(tt.in)
		if tt.err != "" {
			if !errors.Is(err, keyset.ErrText) || !strings.Contains(err.Error(), tt.err) || strings.Contains(tt.err, "reads as") != errors.Is(err, keyset.ErrAmbiguousKey) {
				t.Errorf("ParseKey(%q) = %d, %q, %v; want ErrText saying %q", tt.in, id, table, err, tt.err)
			}
			continue
		}
		if err != nil || id != tt.id || table != tt.table {
			t.Errorf("ParseKey(%q) = %d, %q, %v; want %d, %q", tt.in, id, table, err, tt.id, tt.table)
		}
	}
}

// codecsOf returns the codecs of cfg's tables.
func codecsOf(t testing.TB, cfg *keyset.Config) *keyset.Codecs {
	t.Helper()
	cs, err := cfg.Codecs()
	if err != nil {
		t.Fatal(err)
	}
	return cs
}
