package idsql

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/kinds"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
)

// Stores are where idsql keeps its records: the worker table and the
// segment allocations. A nil field skips that kind.
type Stores struct {
	Workers  *registry.Registry // idsql_workers: snowflake leases
	Segments *segment.SQLStore  // idsql_alloc and idsql_alloc_log: segment ranges
}

// StoresFor returns the stores on db, the application's database, for its
// dialect: the worker table on PostgreSQL and MySQL/MariaDB (tuned by hc's
// heartbeat and accept_lazy_commits), none on SQLite, and the segment
// store registered for the dialect (PostgreSQL's is built in; MySQL's and
// SQLite's register when their packages, idsql/segment/mysqlstore and
// idsql/segment/sqlitestore, are imported). db may be the driver's own or
// the one Open or OpenDB returned; for the latter, the worker registry and
// segment store given in its KeysOptions, where the keys were recorded,
// come first (on SQLite the segment store is a file of its own, which
// only they name).
func StoresFor(db *sql.DB, hc HolderConfig) (Stores, error) {
	d, err := dialectOf(db)
	if err != nil {
		return Stores{}, err
	}
	var given KeysOptions
	if w, ok := db.Driver().(*wrappedDriver); ok {
		given = w.opts.KeysOptions
	}
	s := Stores{Workers: given.Registry}
	if st, ok := given.SegmentStore.(*segment.SQLStore); ok {
		s.Segments = st
	} else if s.Segments, err = segmentStore(db, d); err != nil {
		return Stores{}, err
	}
	if s.Workers == nil && d.HasWorkerTable() {
		s.Workers = registry.New(db, registry.Settings{Heartbeat: hc.Heartbeat, Dialect: d.String(),
			AcceptLazyCommits: hc.AcceptLazyCommits})
	}
	return s, nil
}

// segmentStore returns the segment store registered for dialect d, on db.
func segmentStore(db *sql.DB, d dialect.Dialect) (*segment.SQLStore, error) {
	newStore, err := kinds.LookupStore(d.String())
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", err)
	}
	return newStore(db), nil
}

// hasSegmentTables reports whether cfg has a segment table.
func hasSegmentTables(cfg *Config) bool {
	for _, tc := range cfg.Tables {
		if tc.Strategy == Segment {
			return true
		}
	}
	return false
}

// dialectOf tells the SQL dialect of db from its driver (dialect.Of: the
// inner driver's, or the configured dialect, when db is wrapped by idsql;
// else the driver's own). It is the one place in package idsql that asks.
func dialectOf(db *sql.DB) (dialect.Dialect, error) {
	d, err := dialect.Of(db)
	if err != nil {
		return dialect.Unknown, fmt.Errorf("idsql: %w (known: %s): pass the stores yourself (MigrateIn, LookupIn)",
			err, strings.Join(dialect.Names(), ", "))
	}
	return d, nil
}
