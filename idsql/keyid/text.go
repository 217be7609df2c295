package keyid

import (
	"encoding/json"

	"github.com/idsql/idsql/idsql/keyset"
)

// The functions of a key type whose table has a text form (tables.T.text,
// see keyset.TextForm): its String, MarshalText and MarshalJSON write the
// form, and Parse, UnmarshalText and UnmarshalJSON read it and nothing
// else (a decimal string of a base62 form could be read either way), so a
// text with another table's prefix is refused. A JSON number is still
// accepted on input, as it cannot be mistaken. A keyed form (key_env)
// reads and writes only while its environment variable holds the secret:
// the errors then wrap keyset.ErrTextKey.

// ParseText parses s in form as a key of type T; typ names T in errors.
func ParseText[T ~int64](form keyset.TextForm, typ, s string) (T, error) {
	return parseText[T](form, typ, "parse", s)
}

func parseText[T ~int64](form keyset.TextForm, typ, op, s string) (T, error) {
	v, err := form.Parse(s)
	if err != nil {
		return 0, &Error{Type: typ, Op: op, Input: quote(s), Err: err}
	}
	return T(v), nil
}

// UnmarshalTextForm parses b in form and stores the key in dst; dst is
// left unchanged on error.
func UnmarshalTextForm[T ~int64](dst *T, form keyset.TextForm, typ string, b []byte) error {
	v, err := parseText[T](form, typ, "unmarshal", string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// MarshalJSONText returns id in form as a JSON string, or the error of
// form.AppendText (a keyed form whose secret is not set, a key a typeid
// form cannot write).
func MarshalJSONText[T ~int64](form keyset.TextForm, id T) ([]byte, error) {
	b := make([]byte, 0, 32)
	b = append(b, '"')
	b, err := form.AppendText(b, int64(id))
	if err != nil {
		return nil, err
	}
	return append(b, '"'), nil
}

// UnmarshalJSONText reads a JSON string in form, or a JSON integer, into
// dst. null leaves dst unchanged, as encoding/json does for other types; so
// does an error.
func UnmarshalJSONText[T ~int64](dst *T, form keyset.TextForm, typ string, b []byte) error {
	if len(b) == 0 || b[0] != '"' {
		// null or a number: as for decimal keys.
		return UnmarshalJSON(dst, typ, b)
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return &Error{Type: typ, Op: "unmarshal", Input: show(b), Err: err}
	}
	v, err := parseText[T](form, typ, "unmarshal", s)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}
