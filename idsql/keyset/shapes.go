package keyset

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/idsql/idsql/idsql/shape"
)

// Shape is a table's key shape (TableConfig.Shape): ordered, the default,
// or a spread that moves each key to anywhere in the table's key space by
// a bijection applied after the key is made and undone before it is
// decoded. See package shape.
type Shape = shape.Shape

// shapeFunc returns the table's shape in its key space: what its codec
// (Config.Codec) applies to every key Keys issues for the table, and what
// decode and Lookup undo.
//
// The key space is 63 bits, or, under a max_id, the bits of max_id, which
// a spread shape requires to be 2^B-1 (e.g. 9007199254740991 = 2^53-1)
// so that the shape maps [1, max_id] onto itself. A snowflake table's
// reverse shape reverses the time field in place; a segment table's
// reverses the whole key within the space. A hashed shape of N bits puts
// hash bits on top of the space, so the keys it takes must lie below
// 2^(B-N): a snowflake layout must leave N bits free under the space, and
// a segment table's keys stop there (Keys refuses the next one, as at a
// max_id).
func (c *Config) shapeFunc(tc TableConfig) (shape.Func, error) {
	s := tc.Shape
	if err := s.Check(); err != nil {
		return shape.Func{}, err
	}
	if s.IsOrdered() {
		return shape.New(s, shape.Space{Bits: 63})
	}
	space := shape.Space{Bits: 63}
	if tc.MaxID > 0 {
		b := bits.Len64(uint64(tc.MaxID))
		if tc.MaxID != int64(1)<<b-1 {
			return shape.Func{}, fmt.Errorf("%s with max_id %d: a spread shape maps the key space [1, max_id] onto itself, "+
				"so max_id must be 2^B-1 (for example %d = 2^%d-1, or %d = 2^%d-1), or 0 for the whole 63 bits",
				s, tc.MaxID, int64(1)<<(b-1)-1, b-1, int64(1)<<b-1, b)
		}
		space.Bits = b
	}
	if tc.Leased() {
		layout, err := c.SnowflakeLayout()
		if err != nil {
			return shape.Func{}, err
		}
		used := layout.TimeBits + layout.WorkerBits + layout.SequenceBits
		room := space.Bits - s.Bits // hashed bits go on top
		if used > room {
			what := fmt.Sprintf("the key space of %d bits", space.Bits)
			if tc.MaxID > 0 {
				what += fmt.Sprintf(" (max_id %d)", tc.MaxID)
			}
			if s.IsHashed() {
				return shape.Func{}, fmt.Errorf("%s needs %d free bits on top of the layout's keys, but layout %s takes %d of %s: "+
					"a snowflake table takes a hashed shape only with a 53-bit layout (js53, or custom bits adding up to 53) "+
					"and at most %d hashed bits; or use {spread: reverse}",
					s, s.Bits, layout.Name, used, what, space.Bits-53)
			}
			return shape.Func{}, fmt.Errorf("%s: layout %s's keys take %d bits, more than %s: "+
				"raise max_id to %d or more", s, layout.Name, used, what, int64(math.MaxInt64)>>(63-used))
		}
		space.Low, space.Width = layout.WorkerBits+layout.SequenceBits, layout.TimeBits
	}
	return shape.New(s, space)
}

// validateShape checks table name's shape against its layout and max_id.
func (c *Config) validateShape(name string, t TableConfig) error {
	if t.Shape.IsOrdered() && t.Shape.Bits == 0 {
		return nil
	}
	if _, err := c.shapeFunc(t); err != nil {
		return &FieldError{Field: "tables." + name + ".shape", Err: err}
	}
	return nil
}

// Spread reports whether the table's keys are shaped by a spread (not
// ordered).
func (t TableConfig) Spread() bool { return !t.Shape.IsOrdered() }
