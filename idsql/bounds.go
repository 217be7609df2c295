package idsql

import (
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrNoTimeOrder is wrapped by the error of Config.Bounds for a table
// whose keys are not in time order, so that no key range holds the keys of
// a time range: a segment table's (they count up from a shared counter and
// carry no time).
var ErrNoTimeOrder = errors.New("idsql: keys not in time order")

// Bounds returns the smallest key range [lo, hi] holding every key of the
// snowflake table whose time (as decode reports it) lies in [from, to):
// snowflake.Layout.Bounds for the namespace's layout, with hi capped at the
// table's max_id. A query WHERE id BETWEEN lo AND hi then finds exactly
// the rows whose keys were made in the range, through the key's index, and
// the ranges of consecutive months are the bounds of key-range partitions
// (see cmd/idsql's partitions command).
//
// A segment table is refused with an error wrapping ErrNoTimeOrder. Times
// outside the layout are refused (snowflake.ErrRange), as is a range above
// the table's max_id.
func (c *Config) Bounds(table string, from, to time.Time) (lo, hi int64, err error) {
	tc, ok := c.Tables[table]
	if !ok {
		return 0, 0, fmt.Errorf("idsql: bounds: no table %q in the configuration", table)
	}
	if err := c.timeOrdered(table, tc); err != nil {
		return 0, 0, err
	}
	layout, err := c.SnowflakeLayout()
	if err != nil {
		return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w", table, err)
	}
	if lo, hi, err = layout.Bounds(from, to); err != nil {
		return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w", table, err)
	}
	if tc.MaxID > 0 && hi > tc.MaxID {
		if lo > tc.MaxID {
			return 0, 0, fmt.Errorf("idsql: bounds of table %s: %w: its keys in [%s, %s) would start at %d, above its max_id %d",
				table, snowflake.ErrRange, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano), lo, tc.MaxID)
		}
		hi = tc.MaxID
	}
	return lo, hi, nil
}

// timeOrdered returns nil when the table's keys are in the order of their
// time, so that layout bounds hold them: a snowflake table's, as it issues
// them. It is the one place Bounds (and the partitions built on it) learns
// what a table does to its keys: a setting that reorders them after they
// are made (a key shape spreading inserts, bit-reversing the time or
// putting hashed bits on top) must make this refuse the tables that use
// it. TestBoundsKnowsTableFields fails for a new TableConfig field until
// it is looked at here.
func (c *Config) timeOrdered(table string, t TableConfig) error {
	switch t.Strategy {
	case Snowflake:
		return nil
	case Segment:
		return fmt.Errorf("%w: table %s is a segment table: its keys count up from the counter of segment key %q and carry no time, "+
			"so no key range holds the keys of a time range. idsql_alloc_log records when each range of keys was allocated "+
			"(idsql lookup shows it for a key)", ErrNoTimeOrder, table, c.SegmentKey(table))
	}
	return fmt.Errorf("%w: table %s has strategy %q", ErrNoTimeOrder, table, t.Strategy)
}
