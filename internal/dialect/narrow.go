package dialect

import (
	"errors"
	"fmt"
)

// ErrNarrowKey is wrapped by KeyColumn's errors for an integer column
// narrower than 64 bits; the idsql package exports it as
// idsql.ErrNarrowKey.
var ErrNarrowKey = errors.New("idsql: key column narrower than 64 bits")

// ErrKeyType is wrapped by KeyColumn's errors for a column that does not
// hold integers (text, numeric, uuid, ...); the idsql package exports it
// as idsql.ErrKeyType.
var ErrKeyType = errors.New("idsql: key column not a 64-bit integer")

// KeyColumn returns an error when typ, the catalog type of the key column
// of table (as Columns spells it), cannot hold idsql's 64-bit integer
// keys: one wrapping ErrNarrowKey for an integer type narrower than 64
// bits, one wrapping ErrKeyType for a type that is not an integer type.
// The error names the table, the column and its type, and gives the
// statement that makes it BIGINT. It returns nil for a 64-bit integer
// type.
func (d Dialect) KeyColumn(table, column, typ string) error {
	bits, integer := d.KeyBits(typ)
	switch {
	case integer && bits >= 64:
		return nil
	case integer:
		return fmt.Errorf("%w: table %s: key column %s is %s, a %d-bit integer, and idsql's keys are 64-bit: make it BIGINT%s",
			ErrNarrowKey, table, column, typ, bits, d.widenHint(table, column))
	}
	return fmt.Errorf("%w: table %s: key column %s is %s, not an integer type, and idsql's keys are 64-bit integers: make it BIGINT%s",
		ErrKeyType, table, column, typ, d.widenHint(table, column))
}

// widenHint is " (the statement that makes the column BIGINT)", or "" for
// a dialect that has none.
func (d Dialect) widenHint(table, column string) string {
	if w := d.WidenKey(table, column); w != "" {
		return " (" + w + ")"
	}
	return ""
}
