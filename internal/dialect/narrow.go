package dialect

import (
	"errors"
	"fmt"
)

// ErrNarrowKey is wrapped by NarrowKey's errors; the idsql package exports
// it as idsql.ErrNarrowKey.
var ErrNarrowKey = errors.New("idsql: key column narrower than 64 bits")

// NarrowKey returns an error wrapping ErrNarrowKey when typ, the catalog
// type of the key column of table (as Columns spells it), is an integer
// type narrower than 64 bits, and nil otherwise. The error names the table,
// the column and its type, and gives the statement that widens it.
func (d Dialect) NarrowKey(table, column, typ string) error {
	bits := d.IntBits(typ)
	if bits == 0 || bits >= 64 {
		return nil
	}
	return fmt.Errorf("%w: table %s: key column %s is %s, a %d-bit integer, and idsql's keys are 64-bit: make it BIGINT (%s)",
		ErrNarrowKey, table, column, typ, bits, d.WidenKey(table, column))
}
