package dialect

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrNoPartitions is wrapped by the error of a dialect for which idsql
// prints no key-range partitions (every one but PostgreSQL).
var ErrNoPartitions = errors.New("dialect: no key-range partitions for this database")

// pgMaxIdent is the longest identifier PostgreSQL keeps, in bytes
// (NAMEDATALEN - 1); it truncates longer ones.
const pgMaxIdent = 63

// A KeyPartition is one partition of a table partitioned by range of its
// key column: the keys From <= key < To, or every key from From up when
// ToMax is set.
type KeyPartition struct {
	// Suffix names the partition: the table's name, "_", Suffix
	// (orders_2026_01 for 2026_01), in the table's schema.
	Suffix string
	From   int64
	To     int64 // exclusive; ignored when ToMax
	ToMax  bool  // no upper bound (MAXVALUE): the key space's last keys
}

// KeyPartitions returns the statements that attach parts to table, a
// table partitioned by RANGE of its key column: on PostgreSQL one
//
//	CREATE TABLE "orders_2026_01" PARTITION OF "orders" FOR VALUES FROM (lo) TO (hi+1);
//
// a line per part, identifiers quoted, each partition in the table's
// schema. A partition name longer than PostgreSQL's 63 bytes is an error
// (PostgreSQL would truncate it, and two partitions could get one name),
// as is a part with From not below To. Other dialects: ErrNoPartitions.
func (d Dialect) KeyPartitions(table string, parts []KeyPartition) (string, error) {
	if !d.spec().rangePartitions {
		return "", fmt.Errorf("%w: %s (idsql prints PostgreSQL's declarative partitions)", ErrNoPartitions, d)
	}
	maxIdent := d.spec().maxIdent
	parent, err := d.QuoteTable(table)
	if err != nil {
		return "", err
	}
	names := nameParts(table)
	var schema string
	if len(names) == 2 {
		schema = d.Quote(names[0]) + "."
	}
	var b strings.Builder
	for _, p := range parts {
		name := names[len(names)-1] + "_" + p.Suffix
		switch {
		case p.Suffix == "":
			return "", fmt.Errorf("dialect: partition of %s: empty suffix", table)
		case maxIdent > 0 && len(name) > maxIdent:
			return "", fmt.Errorf("dialect: partition name %q is longer than %s's %d bytes; it would be truncated", name, d.spec().title, maxIdent)
		case !p.ToMax && p.From >= p.To:
			return "", fmt.Errorf("dialect: partition %s: from %d is not below to %d", name, p.From, p.To)
		}
		quoted, err := d.QuoteIdent(name)
		if err != nil {
			return "", err
		}
		to := strconv.FormatInt(p.To, 10)
		if p.ToMax {
			to = "MAXVALUE"
		}
		fmt.Fprintf(&b, "CREATE TABLE %s%s PARTITION OF %s FOR VALUES FROM (%d) TO (%s);\n", schema, quoted, parent, p.From, to)
	}
	return b.String(), nil
}
