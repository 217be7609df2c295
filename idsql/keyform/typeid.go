package keyform

// TypeID text forms (Form.Encoding "typeid"): a snowflake key written as
// a TypeID (jetify's spec, v0.3), such as
//
//	user_01jq8y6t0070000000000g2w8a
//
// The TypeID's UUID is a UUIDv7 (RFC 9562) made from the key:
//
//	bits 127..80  unix_ts_ms  the key's time: epoch + tick × unit, in Unix ms
//	bits  79..76  ver         7
//	bits  75..64  rand_a      0
//	bits  63..62  var         10
//	bits  61..0   rand_b      the key's worker and sequence bits, as they lie
//	                          in the key (its low WorkerBits+SequenceBits bits)
//
// so any TypeID or UUIDv7 library reads the key's time as the UUID's time,
// and the exact key comes back: tick = (ms - epoch) / unit. That is lossless
// when the layout's unit is a whole number of milliseconds and its epoch
// falls on a whole millisecond at or after 1970 (every preset does); other
// layouts are refused when the configuration is validated. The UUIDs of one
// table sort as its keys do, and so do their TypeIDs byte by byte.
//
// Parsing accepts exactly the texts Format writes: the spec's rules (a
// prefix of a-z and _, 26 lowercase base32 characters, the first at most 7),
// then version 7, variant 10, rand_a zero, rand_b within the worker and
// sequence bits, and a time on a tick of the layout. A TypeID made by
// another generator (random rand_a and rand_b) is refused, never read as
// some other key.

import (
	"fmt"
	"time"

	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TypeID is the encoding of a text form that writes snowflake keys as
// TypeIDs: prefix, '_', and 26 lowercase base32 characters of a UUIDv7
// holding the key's time, worker and sequence.
const TypeID = "typeid"

// validTypeIDPrefix reports whether p follows the spec's rule for a
// TypeID prefix, ^([a-z]([a-z_]{0,61}[a-z])?)?$.
func validTypeIDPrefix(p string) bool {
	if len(p) > 63 {
		return false
	}
	for i := range len(p) {
		c := p[i]
		if (c < 'a' || c > 'z') && (c != '_' || i == 0 || i == len(p)-1) {
			return false
		}
	}
	return true
}

const typeIDDigits = "0123456789abcdefghjkmnpqrstvwxyz"

// typeIDValue maps a suffix character to its value, -1 for any other.
var typeIDValue = func() (v [256]int8) {
	for i := range v {
		v[i] = -1
	}
	for i := range len(typeIDDigits) {
		v[typeIDDigits[i]] = int8(i)
	}
	return v
}()

// tidLayout is what a TypeID form needs of the snowflake layout; the zero
// value means the form is not bound to one (see Form.WithLayout).
type tidLayout struct {
	epochMs  int64 // the layout's epoch in Unix milliseconds
	unitMs   int64 // its unit in milliseconds; 0 when unbound
	timeBits uint8
	lowBits  uint8 // worker + sequence bits
}

// typeIDLayout checks that l maps to UUIDv7 time losslessly.
func typeIDLayout(l snowflake.Layout) (tidLayout, error) {
	if err := l.Validate(); err != nil {
		return tidLayout{}, err
	}
	epochMs := l.Epoch.UnixMilli()
	switch {
	case l.Unit%time.Millisecond != 0:
		return tidLayout{}, fmt.Errorf("the layout's unit %s is not a whole number of milliseconds: "+
			"a TypeID's UUIDv7 holds Unix milliseconds, so its keys would not come back exactly", l.Unit)
	case l.Epoch.Nanosecond()%int(time.Millisecond) != 0:
		return tidLayout{}, fmt.Errorf("the layout's epoch %s is not on a whole millisecond: "+
			"a TypeID's UUIDv7 holds Unix milliseconds, so its keys would not come back exactly", l.Epoch.UTC().Format(time.RFC3339Nano))
	case epochMs < 0:
		return tidLayout{}, fmt.Errorf("the layout's epoch %s is before 1970: a UUIDv7's time is unsigned Unix milliseconds",
			l.Epoch.UTC().Format(time.RFC3339))
	}
	unitMs := int64(l.Unit / time.Millisecond)
	if l.MaxTick() > (1<<48-1-epochMs)/unitMs {
		return tidLayout{}, fmt.Errorf("the layout's %d time bits of %s reach past the 48-bit Unix milliseconds of a UUIDv7 (year 10889)",
			l.TimeBits, l.Unit)
	}
	return tidLayout{epochMs: epochMs, unitMs: unitMs, timeBits: uint8(l.TimeBits), lowBits: uint8(l.WorkerBits + l.SequenceBits)}, nil
}

// WithLayout returns f bound to the snowflake layout whose keys it writes,
// as a TypeID form needs (keyset.Config.TextForm binds the configured layout). For
// other encodings it returns f unchanged. A layout that does not map to a
// UUIDv7 losslessly (see TypeID) leaves the form unbound: it then fails to
// write or read any key, saying why.
func (f Form) WithLayout(l snowflake.Layout) Form {
	if f.Encoding == TypeID {
		f.tid, _ = typeIDLayout(l)
	}
	return f
}

// WithShape returns f bound to a spread table's key shape s in space sp
// (keyset.Config.Codec gives both and binds them): a TypeID form
// then writes the key as it was before its shape, so that its UUIDv7
// carries the key's time, worker and sequence, and reads back the shaped
// key the table stores. An ordered s, or another encoding, leaves f as it
// is (other encodings write the stored key itself). A shape that cannot
// apply to sp leaves the form refusing every key, saying why.
func (f Form) WithShape(s shape.Shape, sp shape.Space) Form {
	if f.Encoding != TypeID || s.IsOrdered() {
		return f
	}
	fn, err := shape.New(s, sp)
	if err != nil {
		f.tid = tidLayout{} // unbound: every key refused
		return f
	}
	f.shape = fn
	return f
}

// WithShapeFunc returns f bound to a spread table's key shape fn, as
// WithShape does from the shape and its space (keyset.Config.TextForm binds
// the table's). Other encodings, and the zero fn (ordered), leave f as it
// is.
func (f Form) WithShapeFunc(fn shape.Func) Form {
	if f.Encoding == TypeID {
		f.shape = fn
	}
	return f
}

// CheckLayout reports why a TypeID form cannot write the keys of layout l
// (see TypeID), or nil when it can.
func CheckLayout(l snowflake.Layout) error {
	_, err := typeIDLayout(l)
	return err
}

// errUnbound is the error of a TypeID form without a layout.
func (f Form) errUnbound() error {
	return fmt.Errorf("%w: the TypeID form %s is not bound to a snowflake layout whose unit is whole milliseconds (see Form.WithLayout and keyset.Config.TextForm)", ErrText, f)
}

// appendTypeID appends id as a TypeID.
func (f Form) appendTypeID(dst []byte, id int64) ([]byte, error) {
	t := f.tid
	if t.unitMs == 0 {
		return dst, f.errUnbound()
	}
	if !f.shape.Shape().IsOrdered() {
		key, err := f.shape.Undo(id)
		if err != nil {
			return dst, fmt.Errorf("%w: %w (%s)", ErrText, err, f)
		}
		id = key
	}
	if id <= 0 || uint64(id)>>(t.timeBits+t.lowBits) != 0 {
		return dst, fmt.Errorf("%w: %d is not a key of the form's layout (a positive number of %d bits) (%s)", ErrText, id, t.timeBits+t.lowBits, f)
	}
	tick, low := uint64(id)>>t.lowBits, uint64(id)&(1<<t.lowBits-1)
	ms := uint64(t.epochMs) + tick*uint64(t.unitMs)
	hi := ms<<16 | 0x7000 // version 7, rand_a 0
	lo := 1<<63 | low     // variant 10, rand_b
	if f.Prefix != "" {
		dst = append(dst, f.Prefix...)
		dst = append(dst, '_')
	}
	return appendTypeIDSuffix(dst, hi, lo), nil
}

// appendTypeIDSuffix appends the 26 characters of the 128-bit hi·2^64+lo.
func appendTypeIDSuffix(dst []byte, hi, lo uint64) []byte {
	start := len(dst)
	for range 26 {
		dst = append(dst, 0)
	}
	for i := start + 25; i >= start; i-- {
		dst[i] = typeIDDigits[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return dst
}

// parseTypeID reads s by the TypeID spec alone: its prefix and UUID.
func parseTypeID(s string) (prefix string, hi, lo uint64, err error) {
	suffix := s
	if i := lastUnderscore(s); i >= 0 {
		prefix, suffix = s[:i], s[i+1:]
		if prefix == "" {
			return "", 0, 0, fmt.Errorf("%w: a TypeID with a separator needs a prefix before it", ErrText)
		}
	}
	if !validTypeIDPrefix(prefix) {
		return "", 0, 0, fmt.Errorf("%w: %q is not a TypeID prefix (up to 63 of a-z and _, not at either end)", ErrText, prefix)
	}
	if len(suffix) != 26 {
		return "", 0, 0, fmt.Errorf("%w: a TypeID suffix has 26 characters, not %d", ErrText, len(suffix))
	}
	if suffix[0] > '7' {
		return "", 0, 0, fmt.Errorf("%w: a TypeID suffix starts with 0 to 7, not %q (it would exceed 128 bits)", ErrText, suffix[0])
	}
	for i := range 26 {
		d := typeIDValue[suffix[i]]
		if d < 0 {
			return "", 0, 0, fmt.Errorf("%w: %q is not a TypeID suffix character (lowercase 0-9a-z without i, l, o, u)", ErrText, suffix[i])
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(d)
	}
	return prefix, hi, lo, nil
}

func lastUnderscore(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '_' {
			return i
		}
	}
	return -1
}

// parseTypeIDKey reads s as a key of the TypeID form f.
func (f Form) parseTypeIDKey(s string) (int64, error) {
	t := f.tid
	if t.unitMs == 0 {
		return 0, f.errUnbound()
	}
	prefix, hi, lo, err := parseTypeID(s)
	if err != nil {
		return 0, fmt.Errorf("%w (%s)", err, f)
	}
	if prefix != f.Prefix {
		return 0, fmt.Errorf("%w: want the TypeID prefix %q, not %q (%s)", ErrText, f.Prefix, prefix, f)
	}
	ms, low := hi>>16, lo&(1<<62-1)
	switch {
	case hi>>12&0xf != 7 || lo>>62 != 2:
		return 0, fmt.Errorf("%w: its UUID is not a UUIDv7 (version %d, variant bits %b) (%s)", ErrText, hi>>12&0xf, lo>>62, f)
	case hi&0xfff != 0 || low>>t.lowBits != 0:
		return 0, fmt.Errorf("%w: its UUIDv7 has random bits a key of this layout does not make (%s)", ErrText, f)
	case ms < uint64(t.epochMs) || (ms-uint64(t.epochMs))%uint64(t.unitMs) != 0:
		return 0, fmt.Errorf("%w: its time %d ms is not the start of a tick of the layout (%s)", ErrText, ms, f)
	}
	tick := (ms - uint64(t.epochMs)) / uint64(t.unitMs)
	if tick>>t.timeBits != 0 {
		return 0, fmt.Errorf("%w: its time %d ms is past the layout's last tick (%s)", ErrText, ms, f)
	}
	id := int64(tick<<t.lowBits | low)
	if id == 0 {
		return 0, fmt.Errorf("%w: zero is never a key (%s)", ErrText, f)
	}
	if !f.shape.Shape().IsOrdered() {
		shaped, err := f.shape.Apply(id)
		if err != nil {
			return 0, fmt.Errorf("%w: %w (%s)", ErrText, err, f)
		}
		return shaped, nil
	}
	return id, nil
}
