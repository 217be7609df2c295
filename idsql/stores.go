package idsql

import (
	"database/sql"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
)

// Stores are where idsql keeps its records: the worker table and the
// segment allocations. A nil field skips that kind.
type Stores struct {
	Workers  *registry.Registry // idsql_workers: snowflake leases
	Segments *segment.SQLStore  // idsql_alloc and idsql_alloc_log: segment ranges
}

// StoresFor returns the stores on db, the application's database, for its
// dialect: the worker table on PostgreSQL and MySQL/MariaDB (tuned by hc's
// heartbeat, accept_lazy_commits and one_writer_node), none on SQLite,
// and the segment store registered for the dialect, accepting what hc
// accepts (PostgreSQL's is built in; MySQL's and SQLite's register when
// their packages, idsql/segment/mysqlstore and idsql/segment/sqlitestore,
// are imported). db may be the driver's own or
// the one Open or OpenDB returned; for the latter, the worker registry and
// segment store given in its KeysOptions, where the keys were recorded,
// come first (on SQLite the segment store is a file of its own, which
// only they name).
func StoresFor(db *sql.DB, hc keyset.HolderConfig) (Stores, error) {
	return storesFor(db, hc, true)
}

// storesFor is StoresFor; without needSegments (a configuration with no
// segment table), a dialect whose segment store is not linked gives no
// segment store instead of an error.
func storesFor(db *sql.DB, hc keyset.HolderConfig, needSegments bool) (Stores, error) {
	d, err := keyset.DialectOf(db)
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
	} else if s.Segments, err = keyset.SegmentStore(db, d); err != nil {
		if needSegments {
			return Stores{}, err
		}
		s.Segments = nil
	} else {
		hc.ConfigureStore(s.Segments)
	}
	if s.Workers == nil && d.HasWorkerTable() {
		rs := hc.RegistrySettings()
		rs.Dialect = d.String()
		s.Workers = registry.New(db, rs)
	}
	return s, nil
}
