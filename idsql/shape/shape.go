package shape

import (
	"errors"
	"fmt"
	"math/bits"
)

// Spread names how a shape moves keys: Ordered (not at all), Reverse or
// Hashed.
type Spread string

// The spreads.
const (
	Ordered Spread = "ordered"
	Reverse Spread = "reverse"
	Hashed  Spread = "hashed"
	// Shard is Hashed's first name, which shard keys (a table's shard
	// column) made ambiguous. A Shape read from YAML, and every Shape
	// New and Check see, takes it as Hashed; the records idsql writes keep
	// it (Tag), so that those written before the rename still match.
	//
	// Deprecated: write Hashed ({spread: hashed, bits: N}).
	Shard Spread = "shard"
)

// MaxShardBits is the most hashed bits a Hashed shape puts on top.
const MaxShardBits = 16

// ErrShape is wrapped by every error about a shape that cannot apply to a
// space.
var ErrShape = errors.New("shape: invalid shape")

// ErrNotShaped is wrapped by the errors of Undo for a value that no key
// of the shape's space shapes to.
var ErrNotShaped = errors.New("shape: not a key of this shape")

// ErrRange is wrapped by the errors of Apply for a key outside what the
// shape takes (see Func.MaxKey).
var ErrRange = errors.New("shape: key out of range")

// Shape is a table's key shape. The zero value is Ordered.
//
// In YAML it is the scalar `ordered` or a mapping: `{spread: reverse}`,
// `{spread: hashed, bits: 6}` (`shard`, the hashed spread's first name,
// is read as hashed).
type Shape struct {
	// Spread is ordered (or empty), reverse or hashed.
	Spread Spread `yaml:"spread"`
	// Bits is the number of hashed bits of a hashed shape,
	// 1..MaxShardBits; 0 for the others.
	Bits int `yaml:"bits"`
}

// IsOrdered reports whether s is the identity.
func (s Shape) IsOrdered() bool { return s.Spread == "" || s.Spread == Ordered }

// String returns the shape as its YAML: ordered, {spread: reverse} or
// {spread: hashed, bits: N}.
func (s Shape) String() string {
	s = s.normal()
	switch {
	case s.IsOrdered():
		return string(Ordered)
	case s.Spread == Hashed:
		return fmt.Sprintf("{spread: hashed, bits: %d}", s.Bits)
	}
	return fmt.Sprintf("{spread: %s}", s.Spread)
}

// Tag returns the text idsql records for the shape (in idsql_shapes, and
// in the database-side defaults it installs): String, except that a
// hashed shape keeps the spread's first name, {spread: shard, bits: N}, as
// every record of it has since it was first written. A recorded format
// never changes.
func (s Shape) Tag() string {
	s = s.normal()
	if s.Spread == Hashed {
		return fmt.Sprintf("{spread: %s, bits: %d}", Shard, s.Bits)
	}
	return s.String()
}

// IsHashed reports whether s puts hashed bits on top of its keys (spread
// hashed, or its first name shard).
func (s Shape) IsHashed() bool { return s.normal().Spread == Hashed }

// normal returns s with the hashed spread under its current name.
func (s Shape) normal() Shape {
	if s.Spread == Shard {
		s.Spread = Hashed
	}
	return s
}

// Check reports a shape that names no spread, or bits that do not fit it.
func (s Shape) Check() error {
	s = s.normal()
	switch {
	case s.IsOrdered(), s.Spread == Reverse:
		if s.Bits != 0 {
			return fmt.Errorf("%w: bits apply to spread: hashed only", ErrShape)
		}
	case s.Spread == Hashed:
		if s.Bits < 1 || s.Bits > MaxShardBits {
			return fmt.Errorf("%w: hashed bits %d out of range 1..%d", ErrShape, s.Bits, MaxShardBits)
		}
	default:
		return fmt.Errorf("%w: unknown spread %q (want ordered, reverse or hashed)", ErrShape, s.Spread)
	}
	return nil
}

// UnmarshalYAML reads `ordered` or a mapping {spread, bits}. (It takes
// yaml's function form so that this package links no YAML library.)
func (s *Shape) UnmarshalYAML(unmarshal func(any) error) error {
	var name string
	if err := unmarshal(&name); err == nil {
		if name != string(Ordered) {
			return fmt.Errorf("%w: %q: write ordered, {spread: reverse} or {spread: hashed, bits: N}", ErrShape, name)
		}
		*s = Shape{Spread: Ordered}
		return nil
	}
	type plain Shape
	var p plain
	if err := unmarshal(&p); err != nil {
		return err
	}
	*s = Shape(p).normal()
	return nil
}

// Space is where a shape acts: keys lie in [1, 2^Bits-1], and a Reverse
// shape reverses bits Low..Low+Width-1 of them.
type Space struct {
	// Bits is the width of the key space, 2..63.
	Bits int
	// Low and Width are the field a Reverse shape reverses; Width 0 means
	// the whole space (Low 0, Width Bits). A snowflake table's is its time
	// field: Low = worker + sequence bits, Width = time bits.
	Low, Width int
}

// Func is a shape applied within a space. The zero value is not usable;
// New makes one.
type Func struct {
	shape  Shape
	space  Space
	maxKey int64  // the largest key Apply takes
	mask   uint64 // Reverse: the field, in place
}

// New returns shape s within space sp, or an error wrapping ErrShape when
// s cannot be a bijection there.
func New(s Shape, sp Space) (Func, error) {
	if err := s.Check(); err != nil {
		return Func{}, err
	}
	s = s.normal()
	if sp.Bits < 2 || sp.Bits > 63 {
		return Func{}, fmt.Errorf("%w: key space of %d bits; want 2..63", ErrShape, sp.Bits)
	}
	if sp.Width == 0 {
		sp.Low, sp.Width = 0, sp.Bits
	}
	if sp.Low < 0 || sp.Width < 1 || sp.Low+sp.Width > sp.Bits {
		return Func{}, fmt.Errorf("%w: field of bits %d..%d outside the %d-bit key space", ErrShape, sp.Low, sp.Low+sp.Width-1, sp.Bits)
	}
	f := Func{shape: s, space: sp, maxKey: int64(1)<<sp.Bits - 1}
	switch s.Spread {
	case Reverse:
		f.mask = (uint64(1)<<sp.Width - 1) << sp.Low
	case Hashed:
		if s.Bits >= sp.Bits {
			return Func{}, fmt.Errorf("%w: %d hashed bits leave no room in a %d-bit key space", ErrShape, s.Bits, sp.Bits)
		}
		f.maxKey = int64(1)<<(sp.Bits-s.Bits) - 1
	}
	if s.IsOrdered() {
		f.shape = Shape{Spread: Ordered}
	}
	return f, nil
}

// Shape returns the shape.
func (f Func) Shape() Shape { return f.shape }

// Space returns the space, its Width filled in.
func (f Func) Space() Space { return f.space }

// MaxKey is the largest key Apply takes: 2^Bits-1, or 2^(Bits-hashed
// bits)-1 for a Hashed shape.
func (f Func) MaxKey() int64 { return f.maxKey }

// Apply returns the shaped key of key, 1 <= key <= MaxKey; it is in
// [1, 2^Bits-1] too. Another key fails with an error wrapping ErrRange.
func (f Func) Apply(key int64) (int64, error) {
	if key < 1 || key > f.maxKey {
		return 0, fmt.Errorf("%w: %d is outside 1..%d, what shape %s takes in a %d-bit key space", ErrRange, key, f.maxKey, f.shape, f.space.Bits)
	}
	return f.apply(key), nil
}

func (f Func) apply(key int64) int64 {
	switch f.shape.Spread {
	case Reverse:
		return f.reverse(key)
	case Hashed:
		return int64(Hash(key, f.shape.Bits))<<(f.space.Bits-f.shape.Bits) | key
	}
	return key
}

// reverse reverses the bits of the field of key, in place.
func (f Func) reverse(key int64) int64 {
	u := uint64(key)
	field := (u & f.mask) >> f.space.Low
	rev := bits.Reverse64(field) >> (64 - f.space.Width)
	return int64(u&^f.mask | rev<<f.space.Low)
}

// Undo returns the key whose shaped key is shaped: Apply(Undo(k)) == k.
// A value no key shapes to (0, negative, beyond the space, or, hashed,
// one whose hash bits do not match its key) fails with an error wrapping
// ErrNotShaped.
func (f Func) Undo(shaped int64) (int64, error) {
	if shaped < 1 || shaped > int64(1)<<f.space.Bits-1 {
		return 0, fmt.Errorf("%w: %d is outside the key space 1..%d of shape %s", ErrNotShaped, shaped, int64(1)<<f.space.Bits-1, f.shape)
	}
	switch f.shape.Spread {
	case Reverse:
		return f.reverse(shaped), nil
	case Hashed:
		low := f.space.Bits - f.shape.Bits
		key := shaped & (int64(1)<<low - 1)
		if key == 0 || uint64(shaped)>>low != Hash(key, f.shape.Bits) {
			return 0, fmt.Errorf("%w: %d: its top %d bits are not the hash of its low %d bits (shape %s)", ErrNotShaped, shaped, f.shape.Bits, low, f.shape)
		}
		return key, nil
	}
	return shaped, nil
}

// Hash returns the bits-bit hash a Hashed shape puts on top of key: the top
// bits of the SplitMix64 finalizer of key, computed on uint64:
//
//	z = key; z = (z ^ z>>30) * 0xbf58476d1ce4e5b9; z = (z ^ z>>27) * 0x94d049bb133111eb
//	z = z ^ z>>31; hash = z >> (64 - bits)
func Hash(key int64, bits int) uint64 {
	z := uint64(key)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return z >> (64 - bits)
}
