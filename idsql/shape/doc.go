// Package shape implements key shapes: bijections of a table's keys,
// applied after a key is made and undone before it is decoded, so that
// keys of one table spread over the key space instead of growing in time
// order. Range-partitioned stores (CockroachDB, TiDB, YugabyteDB,
// Spanner) put every insert of a time-ordered key into their last range;
// a spread key lands anywhere.
//
// A Shape is Ordered (the identity, the default) or one of two spreads:
//
//   - Reverse bit-reverses one field of the key in place: a snowflake
//     key's time field (as CockroachDB's unordered_unique_rowid does), or
//     the whole key of a segment table (as Spanner's bit_reversed_positive
//     sequences do). Consecutive ticks (or numbers) differ in their lowest
//     bits, which reversal puts on top.
//   - Hashed puts Bits hashed bits on top of the key, as TiDB's AUTO_RANDOM
//     does: shaped = hash(key) << (space-Bits) | key, for keys below
//     2^(space-Bits). hash is the top Bits of the SplitMix64 finalizer of
//     the key (see Hash).
//
// Both act within a Space: keys lie in [1, 2^Space.Bits-1] (63 bits, or
// fewer when the table's max_id is 2^Bits-1), and a shaped key stays there.
// A bijection of the space that maps no key to 0 keeps keys unique,
// positive and within max_id. Undo refuses a value that no key shapes to
// (out of the space, 0, or, for Hashed, hash bits that do not match).
//
// What a spread key loses: order (a later key is not larger), so time-range
// scans by key and key-range partitions by month are impossible (idsql's
// Bounds refuses spread tables), and an index on the key takes inserts all
// over instead of at its right edge. What it keeps: uniqueness, decode and
// lookup (every reader undoes the shape first).
//
//	f, _ := shape.New(shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41})
//	k, _ := f.Apply(id) // what the table stores
//	id, _ = f.Undo(k)   // what decode reads
package shape
