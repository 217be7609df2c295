package keyid_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/keyset"
)

// textOrderID is a key type with a text form, as idsqlgen declares one.
type textOrderID int64

var ordText = keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}

func (id textOrderID) MarshalJSON() ([]byte, error) { return keyid.MarshalJSONText(ordText, id) }
func (id *textOrderID) UnmarshalJSON(b []byte) error {
	return keyid.UnmarshalJSONText(id, ordText, "app.OrderID", b)
}

func TestText(t *testing.T) {
	const id = textOrderID(3844) // "100" in base62
	s := ordText.Format(int64(id))
	if s != "ord_00000000100" {
		t.Fatalf("Format = %q", s)
	}
	if got, err := keyid.ParseText[textOrderID](ordText, "app.OrderID", s); err != nil || got != id {
		t.Errorf("ParseText(%q) = %d, %v", s, got, err)
	}
	var u textOrderID
	if err := keyid.UnmarshalTextForm(&u, ordText, "app.OrderID", []byte(s)); err != nil || u != id {
		t.Errorf("UnmarshalTextForm(%q) = %d, %v", s, u, err)
	}
	// Another table's text, and decimal text, are refused with ErrInvalid.
	for _, in := range []string{"usr_00000000100", "3844", ""} {
		_, err := keyid.ParseText[textOrderID](ordText, "app.OrderID", in)
		if !errors.Is(err, keyid.ErrInvalid) || !errors.Is(err, keyset.ErrText) || !strings.HasPrefix(err.Error(), "app.OrderID: parse ") {
			t.Errorf("ParseText(%q) = %v, want ErrInvalid and ErrText naming the type", in, err)
		}
	}

	b, err := json.Marshal(struct{ ID textOrderID }{id})
	if err != nil || string(b) != `{"ID":"ord_00000000100"}` {
		t.Fatalf("Marshal = %s, %v", b, err)
	}
	for _, tc := range []struct {
		in   string
		want textOrderID
		err  bool
	}{
		{`"ord_00000000100"`, id, false},
		{`3844`, id, false}, // a JSON number cannot be mistaken
		{`null`, 7, false},  // unchanged
		{`"3844"`, 7, true}, // decimal text is not the form
		{`"usr_00000000100"`, 7, true},
	} {
		v := textOrderID(7)
		err := json.Unmarshal([]byte(tc.in), &v)
		if v != tc.want || (err != nil) != tc.err || err != nil && !errors.Is(err, keyid.ErrInvalid) {
			t.Errorf("Unmarshal(%s) = %d, %v; want %d, error %v (ErrInvalid)", tc.in, v, err, tc.want, tc.err)
		}
	}
}

// TestKeyedText: a keyed form writes and reads through the key type's
// functions while its variable is set; without it MarshalJSONText and
// ParseText fail with keyset.ErrTextKey, ParseText also with ErrInvalid.
func TestKeyedText(t *testing.T) {
	form := keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_", KeyEnv: "IDSQL_KEYID_TEST_KEY"}
	t.Setenv("IDSQL_KEYID_TEST_KEY", "1:keyid-test-secret-0123")
	j, err := keyid.MarshalJSONText(form, textOrderID(42))
	if err != nil || len(j) != 2+21 {
		t.Fatalf("MarshalJSONText = %s, %v", j, err)
	}
	var back textOrderID
	if err := keyid.UnmarshalJSONText(&back, form, "app.OrderID", j); err != nil || back != 42 {
		t.Fatalf("UnmarshalJSONText(%s) = %d, %v", j, back, err)
	}
	t.Setenv("IDSQL_KEYID_TEST_KEY", "")
	if _, err := keyid.MarshalJSONText(form, textOrderID(42)); !errors.Is(err, keyset.ErrTextKey) {
		t.Errorf("MarshalJSONText without the secret: %v", err)
	}
	if _, err := keyid.ParseText[textOrderID](form, "app.OrderID", string(j[1:len(j)-1])); !errors.Is(err, keyset.ErrTextKey) || !errors.Is(err, keyid.ErrInvalid) {
		t.Errorf("ParseText without the secret: %v", err)
	}
}
