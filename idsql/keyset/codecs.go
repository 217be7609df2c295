package keyset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/idsql/idsql/idsql/keyform"
)

// Codec is one table's key codec: its shape, text form and time bounds
// (see keyform.Codec). Config.Codec makes one; Keys.Codecs holds those the
// keys issue with.
type Codec = keyform.Codec

// Codec returns table's codec, made from its configuration: the one place
// that reads what a table does to its keys after they are made (its
// strategy's layout, shape in its key space, text form and max_id). A
// table not configured is an error wrapping ErrUnknownTable; a setting the
// codec cannot take is a *FieldError naming it.
func (c *Config) Codec(table string) (*Codec, error) {
	tc, ok := c.Tables[table]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	spec := keyform.Spec{Table: table, Form: tc.Text, MaxID: tc.MaxID}
	switch tc.Strategy {
	case Snowflake, UUID7:
		layout, err := c.SnowflakeLayout()
		if err != nil {
			return nil, err
		}
		spec.Layout = layout
	default:
		spec.SegmentKey = c.SegmentKey(table)
	}
	if tc.Spread() {
		f, err := c.shapeFunc(tc)
		if err != nil {
			return nil, &FieldError{Field: "tables." + table + ".shape", Err: err}
		}
		spec.Shape, spec.Space = f.Shape(), f.Space()
	}
	codec, err := keyform.NewCodec(spec)
	if err != nil {
		return nil, &FieldError{Field: "tables." + table, Err: err}
	}
	return codec, nil
}

// Codecs are the codecs of a configuration's tables, made once: what reads
// a key whose table may not be known (ParseKey, UnshapeKey).
type Codecs struct {
	names []string // sorted
	of    map[string]*Codec
	// uuid reads the UUIDs of the uuid7 tables (all of the namespace's
	// layout); nil when there are none.
	uuid *keyform.UUIDKeys
}

// Codecs returns the codecs of c's tables (see Config.Codec).
func (c *Config) Codecs() (*Codecs, error) {
	cs := &Codecs{names: c.TableNames(), of: make(map[string]*Codec, len(c.Tables))}
	for _, name := range cs.names {
		codec, err := c.Codec(name)
		if err != nil {
			return nil, err
		}
		cs.of[name] = codec
		if cs.uuid == nil {
			if cs.uuid, err = c.UUIDKeys(name); err != nil {
				return nil, err
			}
		}
	}
	return cs, nil
}

// Of returns table's codec, or an error wrapping ErrUnknownTable.
func (cs *Codecs) Of(table string) (*Codec, error) {
	if codec, ok := cs.of[table]; ok {
		return codec, nil
	}
	return nil, fmt.Errorf("%w: %q", ErrUnknownTable, table)
}

// ParseKey reads a key written as text by a person or a program: in
// decimal, in the text form of one of the tables (TableConfig.Text), or,
// when a table has UUID keys (strategy uuid7), as a UUID in any of its
// usual text forms (keyform.ParseUUID), which gives the key it carries.
// table is the table whose form it was read in, "" for decimal and UUIDs
// (a UUID's table is its worker lease's: Lookup). A text
// with a table's prefix is read in that table's form only; otherwise every
// reading, decimal and the forms without prefix, must agree on the value:
// a text of digits alone that is also a different key in such a form
// (key 32 in crockford32 is 0000000000010) is refused with an error
// wrapping ErrAmbiguousKey that gives both readings, never read as one of
// them silently. Errors wrap ErrText.
func (cs *Codecs) ParseKey(s string) (id int64, table string, err error) {
	if cs.uuid != nil {
		if b, uerr := keyform.ParseUUID(s); uerr == nil {
			k, err := cs.uuid.Key(b)
			if err != nil {
				return 0, "", fmt.Errorf("%w: %q is a UUID, but not a key of a uuid7 table of this namespace's layout: %w", ErrText, s, err)
			}
			return k, "", nil
		}
	}
	for _, name := range cs.names {
		f := cs.of[name].Form()
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
	for _, name := range cs.names {
		f := cs.of[name].Form()
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

// ErrTableNeeded is wrapped by UnshapeKey's error for an ID given without
// its table when the configuration has snowflake tables with spread
// shapes: each reads the ID differently, so whose key it is must be said.
var ErrTableNeeded = errors.New("idsql: the ID's table is needed")

// UnshapeKey returns id, a snowflake key of table as the table stores it,
// before the table's shape (Codec.Unshape), and the shape's name, "" for
// an ordered table. table "" means the table is not known: id is returned
// as it is, unless some snowflake tables have spread shapes, which read it
// differently; the error then wraps ErrTableNeeded and names them. A table
// not configured, or not a snowflake table, is refused. decode in the CLI
// and the ID server's decode endpoint read keys with it.
func (cs *Codecs) UnshapeKey(table string, id int64) (key int64, shape string, err error) {
	if table == "" {
		var spread []string
		for _, name := range cs.names {
			if c := cs.of[name]; c.Spread() && c.HasTime() {
				spread = append(spread, name+" "+c.ShapeFunc().Shape().String())
			}
		}
		if len(spread) > 0 {
			return 0, "", fmt.Errorf("%w: snowflake tables with spread shapes (%s) read an ID differently", ErrTableNeeded, strings.Join(spread, ", "))
		}
		return id, "", nil
	}
	c, err := cs.Of(table)
	switch {
	case err != nil:
		return 0, "", err
	case !c.HasTime():
		return 0, "", fmt.Errorf("table %s is not a snowflake table", table)
	case !c.Spread():
		return id, "", nil
	}
	key, err = c.Unshape(id)
	return key, c.ShapeFunc().Shape().String(), err
}
