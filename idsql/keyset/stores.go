package keyset

import (
	"database/sql"
	"fmt"
	"strings"

	"github.com/idsql/idsql/holder/registry"
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

// NewKeysOn starts the key set of cfg whose records live in db, the
// application's database of dialect d, as Migrate creates them there: the
// worker table, where d keeps one, and the segment store registered for d,
// each unless opts names its own. Where the segment store must be a
// database apart (SQLite), segment tables need opts.SegmentStore. It is
// what each front door of this module (the database/sql wrapper, pgxid)
// starts when it is given no Keys; d is a dialect of internal/dialect.
func NewKeysOn(cfg *Config, opts KeysOptions, db *sql.DB, d dialect.Dialect) (*Keys, error) {
	if opts.DB == nil {
		opts.DB = db
	}
	if opts.SegmentStore == nil && HasSegmentTables(cfg) {
		if d.SegmentStoreApart() {
			for _, t := range cfg.TableNames() {
				if cfg.Tables[t].Strategy == Segment {
					return nil, fmt.Errorf("idsql: table %s: segment tables on %s need a segment store in a file of its own (KeysOptions.SegmentStore: sqlitestore.Open)", t, d)
				}
			}
		}
		store, err := SegmentStore(opts.DB, d)
		if err != nil {
			return nil, err
		}
		cfg.Holder.ConfigureStore(store)
		opts.SegmentStore = store
	}
	if opts.Registry == nil && d.HasWorkerTable() {
		s := cfg.Holder.RegistrySettings()
		s.Now, s.Dialect, s.Logger = opts.Now(), d.String(), opts.Logger
		opts.Registry = registry.New(opts.DB, s)
	}
	return NewKeys(cfg, opts)
}
