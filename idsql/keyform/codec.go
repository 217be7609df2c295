package keyform

import (
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrNoTimeOrder is wrapped by the error of Codec.Bounds for a table whose
// keys are not in time order, so that no key range holds the keys of a
// time range: a segment table's (they count up from a shared counter and
// carry no time), or a spread table's.
var ErrNoTimeOrder = errors.New("idsql: keys not in time order")

// Spec says what one table does to its keys, for NewCodec:
// keyset.Config.Codec fills it from the configuration, and the generated
// code from the configuration it was generated for.
type Spec struct {
	// Table is the table's name, for errors.
	Table string
	// Layout is a snowflake table's layout; the zero Layout for a table
	// whose keys carry no time (a segment table).
	Layout snowflake.Layout
	// SegmentKey is a segment table's counter (its idsql_alloc row), named
	// in errors.
	SegmentKey string
	// Shape is the table's key shape in the key space Space (the zero
	// Shape and Space: ordered, 63 bits).
	Shape shape.Shape
	Space shape.Space
	// Form is the table's text form, unbound: NewCodec binds it to Layout
	// and the shape.
	Form Form
	// MaxID is the table's max_id, 0 for none.
	MaxID int64
}

// Codec is one table's key codec: the single place that applies and undoes
// the table's shape, writes and reads its keys' text form (TypeID and
// keyed forms included), says whether those texts sort as the keys, and
// turns a time range into a key range. keyset.Keys shapes the keys it
// issues with it; decode, lookup, the ID server, the CLI and the generated
// code read keys with it. A keyed form's parsed key ring is kept in its
// codec (parsed again when the variable's value changes), never in the
// process. A Codec is immutable and safe for concurrent use.
type Codec struct {
	spec  Spec
	shape shape.Func // the table's shape in its space; ordered when not spread
	form  Form       // Spec.Form bound to the layout, the shape and a ring slot
}

// NewCodec returns the codec of spec, or an error naming what in it cannot
// be: a shape that does not fit its space, a text form that is not valid,
// or a typeid form without a layout that maps to UUIDv7 time.
func NewCodec(spec Spec) (*Codec, error) {
	space := spec.Space
	if space.Bits == 0 {
		space = shape.Space{Bits: 63}
	}
	fn, err := shape.New(spec.Shape, space)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", spec.Table, err)
	}
	f := spec.Form
	if field, err := f.Validate(); err != nil {
		return nil, fmt.Errorf("table %s: text form %s: %w", spec.Table, field, err)
	}
	if f.Encoding == TypeID {
		if spec.Layout.TimeBits == 0 {
			return nil, fmt.Errorf("table %s: the typeid text form applies to snowflake tables only: a TypeID's UUIDv7 carries the key's time", spec.Table)
		}
		if err := CheckLayout(spec.Layout); err != nil {
			return nil, fmt.Errorf("table %s: typeid cannot write this layout's keys: %w", spec.Table, err)
		}
		f = f.WithLayout(spec.Layout).WithShapeFunc(fn)
	}
	if f.Keyed() {
		f.rings = new(ringSlot)
	}
	return &Codec{spec: spec, shape: fn, form: f}, nil
}

// MustCodec is NewCodec for a spec known to be valid, as the generated
// code's, which was checked when it was generated; it panics otherwise.
func MustCodec(spec Spec) *Codec {
	c, err := NewCodec(spec)
	if err != nil {
		panic("idsql: " + err.Error())
	}
	return c
}

// Table returns the table's name.
func (c *Codec) Table() string { return c.spec.Table }

// Spread reports whether the table's keys are shaped by a spread (not
// ordered).
func (c *Codec) Spread() bool { return !c.shape.Shape().IsOrdered() }

// ShapeFunc returns the table's shape in its key space.
func (c *Codec) ShapeFunc() shape.Func { return c.shape }

// Shape returns key, as the table made it, as the table stores it: the
// key itself for an ordered table. A key outside what the shape takes
// (shape.Func.MaxKey) is refused.
func (c *Codec) Shape(key int64) (int64, error) {
	if !c.Spread() {
		return key, nil
	}
	return c.shape.Apply(key)
}

// Unshape returns the key the table made, before its shape, of id as the
// table stores it: what decode takes apart; id itself for an ordered
// table. A value no key of the shape gives is refused (shape.Func.Undo).
func (c *Codec) Unshape(id int64) (int64, error) {
	if !c.Spread() {
		return id, nil
	}
	key, err := c.shape.Undo(id)
	if err != nil {
		return 0, fmt.Errorf("idsql: table %s: %w", c.spec.Table, err)
	}
	return key, nil
}

// Form returns the table's text form, bound to its layout and shape and
// keeping its key ring in the codec.
func (c *Codec) Form() Form { return c.form }

// Format returns id in the table's text form (see Form.Format).
func (c *Codec) Format(id int64) string { return c.form.Format(id) }

// AppendText appends id in the table's text form to dst (see
// Form.AppendText).
func (c *Codec) AppendText(dst []byte, id int64) ([]byte, error) { return c.form.AppendText(dst, id) }

// Parse reads a key in the table's text form (see Form.Parse).
func (c *Codec) Parse(s string) (int64, error) { return c.form.Parse(s) }

// SortsAsKeys reports whether the table's texts sort byte by byte as the
// keys it stores (see Form.SortsAsKeys).
func (c *Codec) SortsAsKeys() bool { return c.form.SortsAsKeys() }

// Decode takes a key of the table, as the table stores it, apart: its
// shape undone, then its layout's fields, with a time at most skew after
// now (see snowflake.Layout.Decode). A segment table's keys carry no
// fields and are refused.
func (c *Codec) Decode(id int64, now time.Time, skew time.Duration) (snowflake.Parts, error) {
	if !c.HasTime() {
		return snowflake.Parts{}, fmt.Errorf("idsql: table %s is not a snowflake table: its keys carry no time, worker or sequence", c.spec.Table)
	}
	key, err := c.Unshape(id)
	if err != nil {
		return snowflake.Parts{}, err
	}
	return c.spec.Layout.Decode(key, now, skew)
}

// Bounds returns the smallest key range [lo, hi] holding every key of the
// table whose time (as Decode reports it) lies in [from, to):
// snowflake.Layout.Bounds, with hi capped at the table's max_id. A segment
// table, and a spread one, is refused with an error wrapping
// ErrNoTimeOrder; times outside the layout (snowflake.ErrRange), and a
// range above max_id, are refused too.
func (c *Codec) Bounds(from, to time.Time) (lo, hi int64, err error) {
	table := c.spec.Table
	switch {
	case !c.HasTime():
		return 0, 0, fmt.Errorf("%w: table %s is a segment table: its keys count up from the counter of segment key %q and carry no time, "+
			"so no key range holds the keys of a time range. idsql_alloc_log records when each range of keys was allocated "+
			"(idsql lookup shows it for a key)", ErrNoTimeOrder, table, c.spec.SegmentKey)
	case c.Spread():
		return 0, 0, fmt.Errorf("%w: table %s has shape %s: its keys are spread over the key space on purpose, "+
			"so the keys of a time range lie all over it and no key range holds them; "+
			"query by a time column (decode still gives each key's time)", ErrNoTimeOrder, table, c.shape.Shape())
	}
	if lo, hi, err = c.spec.Layout.Bounds(from, to); err != nil {
		return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w", table, err)
	}
	if maxID := c.spec.MaxID; maxID > 0 && hi > maxID {
		if lo > maxID {
			return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w: its keys in [%s, %s) would start at %d, above its max_id %d",
				table, snowflake.ErrRange, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano), lo, maxID)
		}
		hi = maxID
	}
	return lo, hi, nil
}

// HasTime reports whether the table's keys carry a time (a snowflake
// table's, with a layout).
func (c *Codec) HasTime() bool { return c.spec.Layout.TimeBits > 0 }
