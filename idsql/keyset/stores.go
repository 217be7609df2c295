package keyset

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/idsql/idsql/idsql/kinds"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
)

// SegmentStore returns the segment store registered for dialect d, on
// db (idsql_alloc in the application's database, as Migrate creates it).
// d is a dialect of internal/dialect: the front doors of this module
// call it.
func SegmentStore(db *sql.DB, d dialect.Dialect) (*segment.SQLStore, error) {
	newStore, err := kinds.LookupStore(d.String())
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", err)
	}
	return newStore(db), nil
}

// HasSegmentTables reports whether cfg has a segment table.
func HasSegmentTables(cfg *Config) bool {
	for _, tc := range cfg.Tables {
		if tc.Strategy == Segment {
			return true
		}
	}
	return false
}

// DialectOf tells the SQL dialect of db from its driver (dialect.Of: the
// inner driver's, or the configured dialect, when db is wrapped by idsql;
// else the driver's own), for the front doors and the administration of
// this module. It is the one place that asks.
func DialectOf(db *sql.DB) (dialect.Dialect, error) {
	d, err := dialect.Of(db)
	if err != nil {
		return dialect.Unknown, fmt.Errorf("idsql: %w (known: %s): pass the stores yourself (MigrateIn, LookupIn)",
			err, strings.Join(dialect.Names(), ", "))
	}
	return d, nil
}
