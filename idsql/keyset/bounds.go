package keyset

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/internal/dialect"
)

// ErrNoTimeOrder is wrapped by the error of Config.Bounds for a table
// whose keys are not in time order, so that no key range holds the keys of
// a time range: a segment table's (they count up from a shared counter and
// carry no time), or a spread table's. It is keyform.ErrNoTimeOrder.
var ErrNoTimeOrder = keyform.ErrNoTimeOrder

// Bounds returns the smallest key range [lo, hi] holding every key of the
// snowflake table whose time (as decode reports it) lies in [from, to):
// the table's Codec.Bounds, snowflake.Layout.Bounds for the namespace's
// layout with hi capped at the table's max_id. A query WHERE id BETWEEN
// lo AND hi then finds exactly the rows whose keys were made in the range,
// through the key's index, and the ranges of consecutive months are the
// bounds of key-range partitions (see cmd/idsql's partitions command).
//
// A segment table, and a table with a spread shape (TableConfig.Shape),
// is refused with an error wrapping ErrNoTimeOrder. Times outside the
// layout are refused (snowflake.ErrRange), as is a range above the
// table's max_id.
func (c *Config) Bounds(table string, from, to time.Time) (lo, hi int64, err error) {
	if _, ok := c.Tables[table]; !ok {
		return 0, 0, fmt.Errorf("idsql: bounds: no table %q in the configuration: %w", table, ErrUnknownTable)
	}
	codec, err := c.Codec(table)
	if err != nil {
		return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w", table, err)
	}
	return codec.Bounds(from, to)
}

// MonthlyPartitionsSQL returns a PostgreSQL script that creates months
// partitions of the snowflake table, one per calendar month in UTC from
// the month holding first: a partition named after the table and month
// (orders_2026_01), in the table's schema, holding the month's key range
// (Config.Bounds), FOR VALUES FROM (lo) TO (hi+1). Consecutive months
// share their bounds, so the partitions neither overlap nor leave gaps.
// The table must be created PARTITION BY RANGE of its key column; a row
// whose key falls in no partition is refused by PostgreSQL (add a DEFAULT
// partition, or the next months, before they come).
//
// A segment table is refused (ErrNoTimeOrder), as are months outside the
// layout's time (snowflake.ErrRange), names PostgreSQL would truncate, and
// a configuration whose dialect has no such partitions (dialect: mysql or
// sqlite; one that names none is taken as PostgreSQL's).
func (c *Config) MonthlyPartitionsSQL(table string, first time.Time, months int) (string, error) {
	if months < 1 {
		return "", fmt.Errorf("idsql: partitions of table %s: %d months; want at least 1", table, months)
	}
	first = first.UTC()
	start := time.Date(first.Year(), first.Month(), 1, 0, 0, 0, 0, time.UTC)
	parts := make([]dialect.KeyPartition, 0, months)
	for i := range months {
		from, to := start.AddDate(0, i, 0), start.AddDate(0, i+1, 0)
		lo, hi, err := c.Bounds(table, from, to)
		if err != nil {
			return "", err
		}
		p := dialect.KeyPartition{Suffix: from.Format("2006_01"), From: lo, To: hi + 1, ToMax: hi == math.MaxInt64}
		parts = append(parts, p)
	}
	d := dialect.PostgreSQL // the default of a configuration that names no dialect
	if c.Dialect != "" {
		var err error
		if d, err = dialect.ByName(c.Dialect); err != nil {
			return "", &FieldError{Field: "dialect", Err: err}
		}
	}
	stmts, err := d.KeyPartitions(table, parts)
	if err != nil {
		return "", fmt.Errorf("idsql: partitions of table %s: %w", table, err)
	}
	layout, err := c.SnowflakeLayout()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "-- Key-range partitions, one per month (UTC) from %s to %s, of a table created\n"+
		"-- PARTITION BY RANGE of its key column; layout %s.\n",
		start.Format("2006-01"), start.AddDate(0, months-1, 0).Format("2006-01"), layout)
	b.WriteString(stmts)
	return b.String(), nil
}
