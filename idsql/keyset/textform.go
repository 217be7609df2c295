package keyset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

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

// ParseKey reads a key written as text by a person or a program: in
// decimal, or in the text form of one of c's tables (TableConfig.Text).
// table is the table whose form it was read in, "" for decimal. A text
// with a table's prefix is read in that table's form only; otherwise every
// reading, decimal and the forms without prefix, must agree on the value:
// a text of digits alone that is also a different key in such a form
// (key 32 in crockford32 is 0000000000010) is refused with an error
// wrapping ErrAmbiguousKey that gives both readings, never read as one of
// them silently. Errors wrap ErrText.
func (c *Config) ParseKey(s string) (id int64, table string, err error) {
	names := c.TableNames()
	for _, name := range names {
		f := c.TextForm(name)
		if f.Prefix == "" || !strings.HasPrefix(s, f.Lead()) {
			continue
		}
		id, err := f.Parse(s)
		if errors.Is(err, ErrTextKey) {
			return 0, "", fmt.Errorf("%q has the prefix of table %s, whose keyed text form cannot read it here: %w", s, name, err)
		}
		if err != nil {
			return 0, "", fmt.Errorf("%q has the prefix of table %s but is not one of its keys: %w", s, name, err)
		}
		return id, name, nil
	}
	dec, derr := strconv.ParseInt(s, 10, 64)
	isDec := derr == nil && dec > 0
	var others []string // readings other than the decimal one
	for _, name := range names {
		f := c.TextForm(name)
		if f.Prefix != "" || f.Encoding == "" {
			continue
		}
		v, err := f.Parse(s)
		switch {
		case err != nil:
		case isDec:
			if v != dec {
				others = append(others, fmt.Sprintf("as %d in the text form of table %s (%s)", v, name, f.Encoding))
			}
		case table == "":
			id, table = v, name
		case v != id:
			return 0, "", fmt.Errorf("%w: %w: %q reads as %d in the text form of table %s and as %d in that of table %s; give it in decimal",
				ErrText, ErrAmbiguousKey, s, id, table, v, name)
		}
	}
	if len(others) > 0 {
		return 0, "", fmt.Errorf("%w: %w: %q reads as the decimal %d, and %s: it is not decoded as either; "+
			"give the key with its table's prefix (set tables.T.text.prefix so that no key of a text form reads as a decimal number)",
			ErrText, ErrAmbiguousKey, s, dec, strings.Join(others, ", and "))
	}
	if isDec {
		return dec, "", nil
	}
	if table != "" {
		return id, table, nil
	}
	return 0, "", fmt.Errorf("%w: %q is neither a positive decimal integer nor a key in the text form of a configured table", ErrText, s)
}

// TextForm returns the text form of table (tables.T.text), bound to the
// configured snowflake layout and the table's shape when it is a typeid
// form (see TextForm.WithLayout and WithShape); the zero TextForm,
// decimal, for a table not configured.
func (c *Config) TextForm(table string) TextForm {
	f := c.Tables[table].Text
	if f.Encoding == TypeID {
		if l, err := c.SnowflakeLayout(); err == nil {
			f = f.WithLayout(l)
		}
		if s, err := c.ShapeFunc(table); err == nil {
			f = f.WithShapeFunc(s)
		}
	}
	return f
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
