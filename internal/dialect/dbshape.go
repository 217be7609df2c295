package dialect

import (
	"fmt"
	"strconv"
	"strings"
)

// The key shapes of the database-side defaults: a table with a spread
// shape (package shape) gets keys composed as an ordered table's are,
// then moved by the same bijection the Go processes apply, so a key the
// database makes and a key a process makes are equal only if their
// unshaped keys are, which the worker reservation and the segment blocks
// rule out. The SQL computes exactly shape.Func.Apply (the conformance
// test compares the two over many keys): Reverse reverses the field's bits
// in place through the field's binary text; Shard puts the top bits of
// the SplitMix64 finalizer of the key on top of the space, multiplying
// modulo 2^64 in exact decimal arithmetic (neither database multiplies
// 64-bit integers modulo 2^64 on its own). A key outside what the shape
// takes fails the INSERT, as Apply refuses it.

// KeyShape is a table's key shape (package shape's Func) as the
// database-side SQL applies it; the zero KeyShape is ordered, and moves no
// key.
type KeyShape struct {
	// Name is the shape as the configuration writes it ("reverse",
	// "shard(6)"); it travels in the tag.
	Name string
	// Reverse: the bits of the field [Low, Low+Width) are reversed in place.
	Reverse bool
	// ShardBits > 0: a hashed shape, the hash's top ShardBits bits put on
	// top of the space.
	ShardBits int
	// SpaceBits, Low and Width are the space the shape moves keys in and
	// its field (shape.Space).
	SpaceBits, Low, Width int
	// MaxKey is the largest key the shape takes (shape.Func.MaxKey).
	MaxKey int64
}

// Spread reports whether s moves keys (a reverse or hashed shape).
func (s KeyShape) Spread() bool { return s.Reverse || s.ShardBits > 0 }

// shapeTag names a shape within its space: it travels in the default
// (PostgreSQL) or the trigger (MariaDB), where an install finds it and
// leaves a matching default alone.
func shapeTag(s KeyShape) string {
	return fmt.Sprintf("idsql-shape:%s@%d.%d.%d", s.Name, s.SpaceBits, s.Low, s.Width)
}

// pgShapeCall wraps the PostgreSQL expression key in idsql_shape_key for
// a spread s; an ordered s leaves key as it is.
func pgShapeCall(s KeyShape, key, table string) string {
	if !s.Spread() {
		return key
	}
	return fmt.Sprintf("idsql_shape_key(%s, %s, %s, %d, %d, %d, %d)",
		key, lit(table), lit(shapeTag(s)), s.SpaceBits, s.Low, s.Width, s.ShardBits)
}

// pgShapeFunction is the PL/pgSQL function the PostgreSQL defaults of
// spread tables call: idsql_shape_key(k, table, tag, space bits, field low
// bit, field width, shard bits) is shape.Func.Apply(k) for a Reverse
// shape (shard bits 0) or a Shard one. A statement of a DO block.
const pgShapeFunction = `CREATE OR REPLACE FUNCTION idsql_shape_key(k bigint, tbl text, tag text, space_bits int, low int, width int, shard_bits int)
	RETURNS bigint LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $shape$
	DECLARE
		lo int := space_bits - shard_bits;
		m bigint;
		z bigint;
		u numeric;
	BEGIN
		IF k < 1 OR k > (9223372036854775807 >> (63 - lo)) THEN
			RAISE EXCEPTION 'idsql: key % of table % is outside 1..%, what its shape (%) takes',
				k, tbl, 9223372036854775807 >> (63 - lo), tag USING ERRCODE = 'numeric_value_out_of_range';
		END IF;
		IF shard_bits = 0 THEN
			m := (9223372036854775807 >> (63 - width)) << low;
			RETURN (k & ~m) | (lpad(reverse(right(((k & m) >> low)::bit(64)::text, width)), 64, '0')::bit(64)::bigint << low);
		END IF;
		-- SplitMix64's finalizer on 64 bits: z is a uint64 in bigint's
		-- bits; >> is arithmetic, so a logical shift masks the sign.
		z := k # (k >> 30);
		u := (z::numeric * 13787848793156543929) % 18446744073709551616;
		z := (CASE WHEN u >= 9223372036854775808 THEN u - 18446744073709551616 ELSE u END)::bigint;
		z := z # ((z >> 27) & (9223372036854775807 >> 26));
		u := ((z::numeric + CASE WHEN z < 0 THEN 18446744073709551616 ELSE 0 END) * 10723151780598845931) % 18446744073709551616;
		z := (CASE WHEN u >= 9223372036854775808 THEN u - 18446744073709551616 ELSE u END)::bigint;
		z := z # ((z >> 31) & (9223372036854775807 >> 30));
		RETURN (((z >> (64 - shard_bits)) & ((1::bigint << shard_bits) - 1)) << lo) | k;
	END
	$shape$`

// mariaShapeDecl is what MariaDB's shape statements declare, at the top of
// the trigger's body.
const mariaShapeDecl = "\tDECLARE k BIGINT;\n\tDECLARE z BIGINT UNSIGNED;\n\tDECLARE shape_msg VARCHAR(512);\n"

// mariaShape returns MariaDB's statements (of a trigger body, indented
// twice) that replace the key in the variable k by the shape's Apply(k),
// refusing a key outside what s takes; "" for an ordered s.
func mariaShape(s KeyShape, table string) string {
	if !s.Spread() {
		return ""
	}
	lo := s.SpaceBits - s.ShardBits
	maxIn := strconv.FormatInt(int64(1)<<lo-1, 10)
	var b strings.Builder
	fmt.Fprintf(&b, "\t\tIF k < 1 OR k > %s THEN\n", maxIn)
	fmt.Fprintf(&b, "\t\t\tSET shape_msg = CONCAT('idsql: key ', k, ' of table %s is outside 1..%s, what its shape (%s) takes');\n", table, maxIn, shapeTag(s))
	b.WriteString("\t\t\tSIGNAL SQLSTATE '22003' SET MESSAGE_TEXT = shape_msg;\n\t\tEND IF;\n")
	if s.Reverse {
		mask := (uint64(1)<<s.Width - 1) << s.Low
		keep := (uint64(1)<<63 - 1) &^ mask
		fmt.Fprintf(&b, "\t\tSET k = (k & %d) | (CAST(CONV(REVERSE(LPAD(BIN((k & %d) >> %d), %d, '0')), 2, 10) AS UNSIGNED) << %d);\n",
			keep, mask, s.Low, s.Width, s.Low)
		return b.String()
	}
	// SplitMix64's finalizer on BIGINT UNSIGNED, multiplying modulo 2^64
	// in DECIMAL, whose 65 digits hold the whole product.
	b.WriteString("\t\tSET z = k ^ (k >> 30);\n")
	b.WriteString("\t\tSET z = CAST(MOD(CAST(z AS DECIMAL(40,0)) * 13787848793156543929, 18446744073709551616) AS UNSIGNED);\n")
	b.WriteString("\t\tSET z = z ^ (z >> 27);\n")
	b.WriteString("\t\tSET z = CAST(MOD(CAST(z AS DECIMAL(40,0)) * 10723151780598845931, 18446744073709551616) AS UNSIGNED);\n")
	b.WriteString("\t\tSET z = z ^ (z >> 31);\n")
	fmt.Fprintf(&b, "\t\tSET k = ((z >> %d) << %d) | k;\n", 64-s.ShardBits, lo)
	return b.String()
}
