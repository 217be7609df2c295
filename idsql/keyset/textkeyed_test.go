package keyset_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

// TestKeyedTextValidate: key_env needs an encoding, a prefix and a
// variable name; the configuration loads without the variable set.
func TestKeyedTextValidate(t *testing.T) {
	for _, tt := range []struct {
		form        keyset.TextForm
		field, want string
	}{
		{keyset.TextForm{Prefix: "ord_", KeyEnv: "K"}, "key_env", "needs an encoding"},
		{keyset.TextForm{Encoding: keyset.Base62, KeyEnv: "K"}, "key_env", "needs a prefix"},
		{keyset.TextForm{Encoding: keyset.Base62, Prefix: "o_", KeyEnv: "1:secret"}, "key_env", "not an environment variable name"},
		{keyset.TextForm{Encoding: keyset.TypeID, Prefix: "user", KeyEnv: "K"}, "key_env", "cannot be keyed"},
	} {
		field, err := tt.form.Validate()
		if field != tt.field || err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: Validate = %q, %v; want %q saying %q", tt.form, field, err, tt.field, tt.want)
		}
	}
	t.Setenv("IDSQL_TEST_ORD_KEY", "")
	cfg, err := keyset.Parse("x.yaml", []byte("namespace: n\ntables:\n  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_, key_env: IDSQL_TEST_ORD_KEY}}\n"), time.Now())
	if err != nil {
		t.Fatalf("config with key_env, variable unset: %v", err)
	}
	if _, _, err := codecsOf(t, cfg).ParseKey("ord_1000000000000000a"); !errors.Is(err, keyset.ErrTextKey) {
		t.Errorf("ParseKey without the variable: %v; want ErrTextKey", err)
	}
	t.Setenv("IDSQL_TEST_ORD_KEY", "1:Ab3dEf6hIj9kLm2nOp5qRs8t")
	text := cfg.TextForm("orders").Format(987654321)
	if id, table, err := codecsOf(t, cfg).ParseKey(text); err != nil || id != 987654321 || table != "orders" {
		t.Errorf("ParseKey(%q) = %d, %q, %v", text, id, table, err)
	}
}
