package dialect

import (
	"errors"
	"fmt"
	"strings"
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
	uuid := ""
	if d.UUIDType(typ) != NoUUID {
		uuid = ", or give the table strategy uuid7 for UUID keys"
	}
	return fmt.Errorf("%w: table %s: key column %s is %s, not an integer type, and idsql's keys are 64-bit integers: make it BIGINT%s%s",
		ErrKeyType, table, column, typ, d.widenHint(table, column), uuid)
}

// UUIDStorage is how a key column holds a UUID key.
type UUIDStorage uint8

// How a column holds UUID keys.
const (
	NoUUID    UUIDStorage = iota // it cannot
	UUIDText                     // as its canonical text (8-4-4-4-12 hex digits)
	UUIDBytes                    // as its 16 bytes, in RFC 9562 order
)

// UUIDType returns how a column of catalog type typ (as Columns spells
// it) holds UUID keys.
func (d Dialect) UUIDType(typ string) UUIDStorage {
	return d.spec().uuidTypes[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(typ)), " ", "")]
}

// UUIDColumn returns how the key column of a table with UUID keys (a
// uuid7 table), of catalog type typ, holds them, or an error wrapping
// ErrKeyType that names the table, the column, its type and the types
// that do.
func (d Dialect) UUIDColumn(table, column, typ string) (UUIDStorage, error) {
	if s := d.UUIDType(typ); s != NoUUID {
		return s, nil
	}
	return NoUUID, fmt.Errorf("%w: table %s: key column %s is %s, and the table's keys are UUIDs (strategy uuid7): %s, or give the table strategy snowflake for BIGINT keys",
		ErrKeyType, table, column, typ, d.spec().uuidFix)
}

// widenHint is " (the statement that makes the column BIGINT)", or "" for
// a dialect that has none.
func (d Dialect) widenHint(table, column string) string {
	if w := d.WidenKey(table, column); w != "" {
		return " (" + w + ")"
	}
	return ""
}
