// Package keyform writes and reads keys in their text forms: decimal, a
// fixed-width encoding (base62, base58, crockford32) with an optional
// prefix, a keyed permutation under a secret from the environment, or a
// TypeID whose UUIDv7 carries a snowflake key's time. A Form is the value
// of a table's text form in idsql's configuration (tables.T.text). A Codec
// is one table's keys in all their forms: its shape applied and undone,
// its text form bound to its layout and shape, whether the texts sort as
// the keys, and time bounds; keyset.Config.Codec makes a table's, and the
// generated code keeps one per table.
//
// A form that has issued texts never changes: the golden vectors of
// idsql's testdata pin every encoding, the keyed permutation and TypeID.
package keyform
