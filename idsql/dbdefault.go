package idsql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/internal/dialect"
)

// DefaultDBBlock is the number of keys in each block a database-side
// default is given, when MigrateOptions.DBBlock is zero.
const DefaultDBBlock = 1 << 20

// ErrNoDBDefault is wrapped by the error refusing a database-side default
// on a database that cannot serve one (SQLite, MySQL 8).
var ErrNoDBDefault = dialect.ErrNoDBDefault

// MigrateOptions changes what MigrateWith does. The zero value does what
// Migrate does.
type MigrateOptions struct {
	// Stores are where idsql keeps its records; nil means StoresFor(db,
	// cfg.Holder), as Migrate does (MigrateIn's stores).
	Stores *Stores

	// DBDefaults also installs a database-side default on the key column
	// of every segment table of cfg without shard or app bits, so that
	// writers that do not go through idsql (psql, COPY, other languages,
	// INSERT ... SELECT) get keys that are unique against idsql's: a block
	// of DBBlock keys is allocated from the table's segment key like any
	// process's range and logged in idsql_alloc_log under the instance
	// "database", so Lookup traces the keys and no process is ever given
	// them. PostgreSQL serves the block from a sequence bounded to it
	// (MINVALUE/MAXVALUE, NO CYCLE) through the function idsql_next_key;
	// MariaDB from a sequence in DEFAULT NEXT VALUE FOR. A used-up block
	// fails the INSERT with an error naming "idsql migrate --db-defaults",
	// which allocates a fresh block and moves the sequence to it: running
	// it again does so whenever less than a tenth of the block is left,
	// and otherwise changes nothing.
	//
	// Every snowflake table of cfg without shard or app bits gets a
	// default too: the database composes its keys under a worker ID
	// reserved for the table in idsql_workers (instance "database"), taken
	// from the top holder.database_workers IDs of the layout, which no
	// holder hands to a process (cfg must set it, and so must every
	// process of the namespace). The keys come from counters of tick and
	// sequence that only move forward, so they never repeat, also when
	// the database clock steps back (the keys are then stamped ahead of
	// it), and they start past every earlier lease of the worker ID. No
	// database-side writer holds a lock another waits for, and none is
	// taken per row: PostgreSQL draws from one of four slot sequences,
	// each transaction holding its slot's advisory lock shared, and moves
	// a slot forward to the clock only while no transaction holds it;
	// MariaDB's BEFORE INSERT trigger keys a session's rows from a block
	// of its own, kept in user variables, taken from a horizon of
	// sequences under a lock held for a few draws. Go processes compose
	// their own keys and take neither.
	//
	// A table with a spread shape (TableConfig.Shape) gets the same
	// default, its keys then shaped in SQL as the table's processes shape
	// theirs: on PostgreSQL the default calls idsql_shape_key around the
	// key, on MariaDB a BEFORE INSERT trigger shapes it (a segment table's
	// trigger draws from the sequence; its column default becomes 0).
	//
	// The table must exist. SQLite and MySQL 8 (no sequences) are refused
	// with ErrNoDBDefault.
	DBDefaults bool

	// DBBlock is the number of keys per block of a database-side default
	// (default DefaultDBBlock).
	DBBlock int64
}

// MigrateWith is Migrate (or, with o.Stores, MigrateIn) with options: see
// MigrateOptions.
func MigrateWith(ctx context.Context, db *sql.DB, cfg *Config, o MigrateOptions) error {
	var stores Stores
	if o.Stores != nil {
		stores = *o.Stores
	} else {
		var err error
		if stores, err = storesFor(db, cfg.Holder, keyset.HasSegmentTables(cfg)); err != nil {
			return fmt.Errorf("idsql: migrate: %w", err)
		}
	}
	if err := MigrateIn(ctx, db, cfg, stores); err != nil || !o.DBDefaults {
		return err
	}
	d, err := keyset.DialectOf(db)
	if err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	switch server, err := d.Sequenceless(ctx, db); {
	case err != nil:
		return fmt.Errorf("idsql: migrate: database defaults: %w", err)
	case server != "":
		return fmt.Errorf("idsql: migrate: database defaults on %s: %w: it has no sequences "+
			"(a BEFORE INSERT trigger would be needed; not implemented)", server, ErrNoDBDefault)
	}
	switch cluster, err := d.MultiWriter(ctx, db); {
	case err != nil:
		return fmt.Errorf("idsql: migrate: database defaults: %w", err)
	case cluster != "":
		return fmt.Errorf("idsql: migrate: database defaults on %s: %w: the snowflake default's trigger takes GET_LOCK and the "+
			"segment default draws from a sequence, and on such a cluster both are each node's own, so writers on two nodes could take "+
			"the same keys; install no defaults there (writers go through idsql), or on a server that is not a cluster node", cluster, ErrNoDBDefault)
	}
	stmts, err := dbDefaults(d, cfg, o.DBBlock)
	if err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	for _, s := range stmts {
		table := s.table
		if !tableExists(ctx, db, table) {
			return fmt.Errorf("idsql: migrate: database default for table %s: no such table: create it first", table)
		}
		if _, err := db.ExecContext(ctx, s.sql); err != nil {
			return fmt.Errorf("idsql: migrate: database default for table %s: %w", table, err)
		}
	}
	return nil
}

// DBDefaultsSQL returns the SQL that MigrateWith runs with DBDefaults on
// a database of the named dialect ("postgres", "mysql" for MariaDB), as a
// script for its own client (psql, mariadb), for a DBA who installs the
// defaults by hand after idsql migrate has created the segment keys. Each
// statement allocates and logs its block itself.
func DBDefaultsSQL(dialectName string, cfg *Config, block int64) (string, error) {
	d, err := dialect.ByName(dialectName)
	if err != nil {
		return "", fmt.Errorf("idsql: %w", err)
	}
	stmts, err := dbDefaults(d, cfg, block)
	if err != nil {
		return "", fmt.Errorf("idsql: %w", err)
	}
	var b strings.Builder
	for _, s := range stmts {
		fmt.Fprintf(&b, "-- %s: keys of table %s, column %s, from segment key %s\n", dialect.DBInstance, s.table, cfg.Tables[s.table].KeyColumn(), cfg.SegmentKey(s.table))
		b.WriteString(d.ClientScript([]string{s.sql}))
	}
	return b.String(), nil
}

// tableSQL is one table's statement.
type tableSQL struct{ table, sql string }

// dbDefault is one plain table's database-side default as the dialect
// describes it: a segment one (seg) or a snowflake one (sf).
type dbDefault struct {
	table string
	seg   *dialect.DBDefault
	sf    *dialect.DBSnowflake
}

// plainDefaults describes the database-side default of every plain table
// of cfg (no shard or app bits), in table order, with blocks of block
// keys (0: DefaultDBBlock).
func plainDefaults(cfg *Config, block int64) ([]dbDefault, error) {
	if block == 0 {
		block = DefaultDBBlock
	}
	var out []dbDefault
	for _, table := range cfg.TableNames() {
		tc := cfg.Tables[table]
		if !tc.Gene().Plain() || tc.Strategy == keyset.UUID7 {
			continue // uuid7 tables have no database-side default yet
		}
		codec, err := cfg.Codec(table)
		if err != nil {
			return nil, err
		}
		f := codec.ShapeFunc()
		if tc.Strategy == keyset.Snowflake {
			sf, err := snowflakeDBDefault(cfg, table, f)
			if err != nil {
				return nil, err
			}
			out = append(out, dbDefault{table: table, sf: &sf})
			continue
		}
		limit := min(int64(segment.MaxID), f.MaxKey())
		if tc.MaxID > 0 {
			limit = min(limit, tc.MaxID)
		}
		out = append(out, dbDefault{table: table, seg: &dialect.DBDefault{Table: table, Column: tc.KeyColumn(),
			Key: cfg.SegmentKey(table), Block: block, MaxID: limit, Shape: dbShape(f)}})
	}
	return out, nil
}

// dbDefaults returns the statement installing each plain table's
// database-side default, in table order.
func dbDefaults(d dialect.Dialect, cfg *Config, block int64) ([]tableSQL, error) {
	defs, err := plainDefaults(cfg, block)
	if err != nil {
		return nil, err
	}
	out := make([]tableSQL, 0, len(defs))
	for _, def := range defs {
		var s string
		if def.sf != nil {
			s, err = d.SnowflakeDBDefault(*def.sf)
		} else {
			s, err = d.DBDefault(*def.seg)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, tableSQL{table: def.table, sql: s})
	}
	return out, nil
}

// DBDefaultGrants returns the statements that let role (as the database
// writes it: app, or 'app'@'%' on MariaDB) key the rows it inserts around
// idsql (psql, COPY, INSERT ... SELECT) by the database-side defaults
// MigrateWith installs for cfg on a database of the named dialect: what
// the defaults draw from with the inserting role's privileges. The role
// needs INSERT on the tables besides, and none of idsql's runtime grants
// (dialect RuntimeGrants, for the application's role). `idsql migrate
// --print-grants ROLE --db-defaults` prints them.
func DBDefaultGrants(dialectName string, cfg *Config, role string) ([]string, error) {
	d, err := dialect.ByName(dialectName)
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", err)
	}
	defs, err := plainDefaults(cfg, 0)
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", err)
	}
	var out []string
	for _, def := range defs {
		var g []string
		if def.sf != nil {
			g, err = d.SnowflakeDBDefaultGrants(*def.sf, role)
		} else {
			g, err = d.DBDefaultGrants(*def.seg, role)
		}
		if err != nil {
			return nil, fmt.Errorf("idsql: %w", err)
		}
		out = append(out, g...)
	}
	return out, nil
}

// snowflakeDBDefault describes snowflake table's database-side default,
// under a worker ID of the configuration's holder.database_workers,
// shaped by f.
func snowflakeDBDefault(cfg *Config, table string, f shape.Func) (dialect.DBSnowflake, error) {
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return dialect.DBSnowflake{}, err
	}
	hc := cfg.Holder
	if hc.DatabaseWorkers == 0 {
		return dialect.DBSnowflake{}, &keyset.FieldError{Field: "holder.database_workers", Err: fmt.Errorf(
			"is 0, so no worker ID is kept for the database-side default of snowflake table %s: "+
				"set it (1 per snowflake table, e.g. %d) in the configuration of every process of namespace %q, restart them, then install the defaults",
			table, len(cfg.SnowflakeTables()), cfg.Namespace)}
	}
	tc := cfg.Tables[table]
	return dialect.DBSnowflake{
		Namespace: cfg.Namespace, Table: table, Column: tc.KeyColumn(),
		Epoch: layout.Epoch, Unit: layout.Unit,
		TimeBits: layout.TimeBits, WorkerBits: layout.WorkerBits, SequenceBits: layout.SequenceBits, WorkerLow: layout.WorkerLow,
		Reserved: hc.DatabaseWorkers, MaxKey: tc.MaxID, Shape: dbShape(f),
		Stale: max(registry.DefaultSlack, 3*hc.HeartbeatOrDefault()),
	}, nil
}

// dbShape is f as the database-side SQL applies it: the zero KeyShape for
// an ordered f.
func dbShape(f shape.Func) dialect.KeyShape {
	s := f.Shape()
	if s.IsOrdered() {
		return dialect.KeyShape{}
	}
	sp := f.Space()
	k := dialect.KeyShape{Name: s.Tag(), Reverse: s.Spread == shape.Reverse,
		SpaceBits: sp.Bits, Low: sp.Low, Width: sp.Width, MaxKey: f.MaxKey()}
	if s.IsHashed() {
		k.ShardBits = s.Bits
	}
	return k
}
