package keyset

import (
	"errors"
	"fmt"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TextForm is a table's text form (tables.T.text): see keyform.Form, where
// it is written and read.
type TextForm = keyform.Form

// The encodings of a table's text form (TextForm.Encoding): see keyform.
const (
	Base62      = keyform.Base62
	Base58      = keyform.Base58
	Crockford32 = keyform.Crockford32
	TypeID      = keyform.TypeID
)

// The errors of text forms, from keyform: errors.Is matches either name.
var (
	// ErrText is wrapped by every error about a text that is not a key in
	// a table's text form.
	ErrText = keyform.ErrText
	// ErrAmbiguousKey is wrapped (with ErrText) by the error of ParseKey
	// for a text that reads as two different keys.
	ErrAmbiguousKey = keyform.ErrAmbiguousKey
	// ErrTextKey is wrapped by the error of a keyed text form whose
	// secrets are missing or malformed; the error names the variable.
	ErrTextKey = keyform.ErrTextKey
)

// TextForm returns the text form of table (tables.T.text), bound to its
// layout and shape (see Config.Codec and Codec.Form); the zero TextForm,
// decimal, for a table not configured or one whose codec cannot be made.
// Each call makes the codec anew: to write or read many keyed texts, keep
// the table's Codec.
func (c *Config) TextForm(table string) TextForm {
	codec, err := c.Codec(table)
	if err != nil {
		return TextForm{}
	}
	return codec.Form()
}

// validateText checks table name's text form t.Text: its fields, that its
// prefix (with a TypeID's separator) is no other table's (prefixes maps
// each lead seen to its table), and that a typeid form keys a snowflake
// table of a layout that maps to UUIDv7 time losslessly.
func (c *Config) validateText(name string, t TableConfig, layout snowflake.Layout, prefixes map[string]string) error {
	field := "tables." + name + ".text"
	if f, err := t.Text.Validate(); err != nil {
		return &FieldError{Field: field + "." + f, Err: err}
	}
	if p := t.Text.Lead(); p != "" {
		if other, dup := prefixes[p]; dup {
			return &FieldError{Field: field + ".prefix", Err: fmt.Errorf("prefix %q is also the prefix of table %s: a prefix names one table's keys", p, other)}
		}
		prefixes[p] = name
	}
	if t.Text.Encoding == TypeID {
		if t.Strategy != Snowflake {
			return &FieldError{Field: field + ".encoding", Err: errors.New("typeid applies to snowflake tables only: a TypeID's UUIDv7 carries the key's time, and a segment key has none")}
		}
		if err := keyform.CheckLayout(layout); err != nil {
			return &FieldError{Field: field + ".encoding", Err: fmt.Errorf("typeid cannot write this layout's keys: %w", err)}
		}
	}
	return nil
}
