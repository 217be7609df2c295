package keyset_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

// A uuid7 table needs a layout whose keys map to UUIDv7s, and takes none
// of the settings that write or bound a 64-bit key; each refusal names
// the field.
func TestUUID7Config(t *testing.T) {
	ok := &keyset.Config{Namespace: "u", Tables: map[string]keyset.TableConfig{"a": {Strategy: keyset.UUID7}}}
	if err := ok.Validate(time.Now()); err != nil {
		t.Fatal(err)
	}
	if u, err := ok.UUIDKeys("a"); err != nil || u == nil {
		t.Fatalf("UUIDKeys(a) = %v, %v", u, err)
	}
	for name, c := range map[string]struct {
		cfg  keyset.Config
		want string
	}{
		"uid32 layout": {keyset.Config{Layout: keyset.LayoutConfig{Preset: "uid32"}, Tables: map[string]keyset.TableConfig{"a": {Strategy: keyset.UUID7}}}, "sequence bits"},
		"text":         {keyset.Config{Tables: map[string]keyset.TableConfig{"a": {Strategy: keyset.UUID7, Text: keyset.TextForm{Encoding: keyset.Base62}}}}, "text applies"},
		"max_id":       {keyset.Config{Tables: map[string]keyset.TableConfig{"a": {Strategy: keyset.UUID7, MaxID: 1000}}}, "max_id"},
		"step":         {keyset.Config{Tables: map[string]keyset.TableConfig{"a": {Strategy: keyset.UUID7, Step: 10}}}, "segment tables only"},
	} {
		c.cfg.Namespace = "u"
		err := c.cfg.Validate(time.Now())
		var fe *keyset.FieldError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(fe.Field, "tables.a") && !strings.HasPrefix(fe.Field, "layout") {
			t.Errorf("%s: %v; want a field error saying %q", name, err, c.want)
		}
	}
}
