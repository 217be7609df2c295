package keyset

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"reflect"
	"strconv"
)

// ShardConfig takes a table's shard from a column of each inserted row:
//
//	orders: {strategy: segment, shard: {column: user_id, bits: 6}}
//
// The key then carries the shard ("gene" keys): a key alone routes to the
// shard of its row's column value. See ShardOf for the shard of a value.
type ShardConfig struct {
	// Column is the column whose value picks the shard. Required.
	Column string `yaml:"column"`
	// Bits is the number of shard bits, 1..MaxShardBits: 2^Bits shards.
	Bits int `yaml:"bits"`
}

// AppConfig puts a fixed application ID into the low bits of a table's
// keys:
//
//	orders: {strategy: segment, app: {id: 3, bits: 8}}
type AppConfig struct {
	// ID is the application ID, 0..2^Bits-1.
	ID int64 `yaml:"id"`
	// Bits is the number of application bits, 1..MaxAppBits.
	Bits int `yaml:"bits"`
}

// Bounds of the gene bits. A sharded table has one segment key per shard in
// the store, hence the tighter bound on shard bits; together they leave the
// index at least 39 bits.
const (
	MaxShardBits = 12
	MaxAppBits   = 16
	maxGeneBits  = 24
)

// Gene is the layout of a segment table's key when it carries a shard
// and an application ID:
//
//	key = index << (ShardBits + AppBits) | shard << AppBits | App
//
// index is the number the table's segment key (one per shard) hands out:
// 1, 2, 3, ... So keys are positive, unique per table (two keys of one
// shard differ in index, two of different shards in shard bits), and a key
// alone says its shard and application. The zero Gene is the plain layout,
// key = index.
type Gene struct {
	ShardBits int
	AppBits   int
	App       int64
}

// GeneParts is a gene key taken apart.
type GeneParts struct {
	Index int64 // the number the shard's segment key handed out
	Shard int   // 0 when the table has no shard bits
	App   int64 // 0 when the table has no application bits
}

// ShardColumn returns the column whose value picks the shard of each
// row's key (Shard.Column), or "" for a table without Shard.
func (t TableConfig) ShardColumn() string {
	if t.Shard == nil {
		return ""
	}
	return t.Shard.Column
}

// ShardBits returns the number of shard bits (Shard.Bits), 0 for a table
// without Shard.
func (t TableConfig) ShardBits() int {
	if t.Shard == nil {
		return 0
	}
	return t.Shard.Bits
}

// Gene returns the table's key layout; the zero Gene for tables without
// shard or app.
func (t TableConfig) Gene() Gene {
	var g Gene
	if t.Shard != nil {
		g.ShardBits = t.Shard.Bits
	}
	if t.App != nil {
		g.AppBits, g.App = t.App.Bits, t.App.ID
	}
	return g
}

// Plain reports whether keys are the bare index (no shard, no app bits).
func (g Gene) Plain() bool { return g.ShardBits == 0 && g.AppBits == 0 }

// Shards returns the number of shards, 1 without shard bits.
func (g Gene) Shards() int { return 1 << g.ShardBits }

// MaxIndex is the largest index whose key fits in a positive int64.
func (g Gene) MaxIndex() int64 { return math.MaxInt64 >> (g.ShardBits + g.AppBits) }

// Compose returns the key of index in shard. It fails for an index beyond
// MaxIndex or a shard out of range; it never wraps.
func (g Gene) Compose(index int64, shard int) (int64, error) {
	if index < 1 || index > g.MaxIndex() {
		return 0, fmt.Errorf("%w: index %d does not fit in %d bits", ErrKeySpaceExhausted, index, 63-g.ShardBits-g.AppBits)
	}
	if shard < 0 || shard >= g.Shards() {
		return 0, fmt.Errorf("idsql: shard %d out of range 0..%d", shard, g.Shards()-1)
	}
	return index<<(g.ShardBits+g.AppBits) | int64(shard)<<g.AppBits | g.App, nil
}

// Decompose takes key apart. It does not check that the key was issued.
func (g Gene) Decompose(key int64) GeneParts {
	return GeneParts{
		Index: key >> (g.ShardBits + g.AppBits),
		Shard: int(key>>g.AppBits) & (1<<g.ShardBits - 1),
		App:   key & (1<<g.AppBits - 1),
	}
}

// ShardKey returns the segment key of shard for a table whose segment key
// is key: key itself without shard bits, else key#shard (orders#0,
// orders#1, ...), one row of the store each.
func (g Gene) ShardKey(key string, shard int) string {
	if g.ShardBits == 0 {
		return key
	}
	return key + "#" + strconv.Itoa(shard)
}

// ErrShardValue is wrapped by errors about a value ShardOf cannot place.
var ErrShardValue = errors.New("idsql: value cannot pick a shard")

// ShardOf returns the shard, 0..2^bits-1, of value: the same computation
// the wrapper applies to the shard column of every row it inserts, so
// routing code needs no formula of its own.
//
//   - Integers (any Go integer type): value mod 2^bits, taking the low bits
//     of the two's-complement value, so -1 is in shard 2^bits-1.
//   - Strings and []byte: FNV-1a 64 of the bytes (UTF-8 for strings), mod
//     2^bits (its low bits).
//   - A driver.Valuer: the shard of its Value.
//
// Anything else (floats, booleans, times, NULL) is refused with an error
// wrapping ErrShardValue. The type matters: the integer 42 and the string
// "42" fall in different shards, so route with the type you insert.
//
// To reproduce FNV-1a 64 elsewhere: h = 0xcbf29ce484222325; for each byte
// b: h ^= b; h *= 0x100000001b3 (mod 2^64); shard = h & (2^bits-1). In Java
// use a long and the same steps (not String.hashCode); in Python
// h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF.
func ShardOf(value any, bits int) (int, error) {
	if bits < 0 || bits > MaxShardBits {
		return 0, fmt.Errorf("idsql: %d shard bits out of range 0..%d", bits, MaxShardBits)
	}
	mask := uint64(1)<<bits - 1
	switch v := value.(type) {
	case int64:
		return int(uint64(v) & mask), nil
	case string:
		return int(fnv1a(v) & mask), nil
	case []byte:
		h := fnv.New64a()
		h.Write(v)
		return int(h.Sum64() & mask), nil
	case nil:
		return 0, fmt.Errorf("%w: NULL", ErrShardValue)
	case driver.Valuer:
		dv, err := v.Value()
		if err != nil {
			return 0, fmt.Errorf("%w: %T: %w", ErrShardValue, value, err)
		}
		if _, again := dv.(driver.Valuer); again {
			return 0, fmt.Errorf("%w: %T's Value is a driver.Valuer again", ErrShardValue, value)
		}
		return ShardOf(dv, bits)
	}
	rv := reflect.ValueOf(value)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return int(uint64(rv.Int()) & mask), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return int(rv.Uint() & mask), nil
	case reflect.String:
		return int(fnv1a(rv.String()) & mask), nil
	}
	return 0, fmt.Errorf("%w: %T (want an integer or a string)", ErrShardValue, value)
}

// fnv1a is FNV-1a 64 of s, without converting s to []byte.
func fnv1a(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

// validateKeySpace checks the max_id, shard and app fields of table name.
func (c *Config) validateKeySpace(name string, t TableConfig) error {
	field := "tables." + name
	fail := func(sub, format string, args ...any) error {
		return &FieldError{Field: field + sub, Err: fmt.Errorf(format, args...)}
	}
	if t.MaxID < 0 {
		return fail(".max_id", "%d is negative", t.MaxID)
	}
	if t.Leased() && (t.Shard != nil || t.App != nil) {
		which := ".shard"
		if t.Shard == nil {
			which = ".app"
		}
		return fail(which, "applies to segment tables only: a snowflake key's bits are the namespace's layout "+
			"(time, worker, sequence), shared by every table and read by decode and lookup, so shard or application bits "+
			"would have to come out of the time bits of every table; use a segment table")
	}
	if s := t.Shard; s != nil {
		if !identRE.MatchString(s.Column) {
			return fail(".shard.column", "%q is not a valid column name", s.Column)
		}
		if s.Column == t.KeyColumn() {
			return fail(".shard.column", "%s is the key column", s.Column)
		}
		if s.Bits < 1 || s.Bits > MaxShardBits {
			return fail(".shard.bits", "%d out of range 1..%d", s.Bits, MaxShardBits)
		}
	}
	if a := t.App; a != nil {
		if a.Bits < 1 || a.Bits > MaxAppBits {
			return fail(".app.bits", "%d out of range 1..%d", a.Bits, MaxAppBits)
		}
		if a.ID < 0 || a.ID >= 1<<a.Bits {
			return fail(".app.id", "%d out of range 0..%d for %d bits", a.ID, int64(1)<<a.Bits-1, a.Bits)
		}
	}
	g := t.Gene()
	if g.ShardBits+g.AppBits > maxGeneBits {
		return fail("", "shard bits and app bits add up to %d, more than %d", g.ShardBits+g.AppBits, maxGeneBits)
	}
	if t.MaxID != 0 && t.MaxID < 1<<(g.ShardBits+g.AppBits) {
		return fail(".max_id", "%d leaves no key: the first key of this layout is %d", t.MaxID, int64(1)<<(g.ShardBits+g.AppBits))
	}
	if t.Strategy == Segment && g.ShardBits > 0 {
		if key := c.SegmentKey(name); len(g.ShardKey(key, g.Shards()-1)) > 128 {
			return fail(".key", "%q with its shard suffix (#%d) is longer than 128 bytes", key, g.Shards()-1)
		}
	}
	return nil
}
