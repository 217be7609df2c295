package idsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
)

// Migrate creates idsql's tables in db, the application's database
// (wrapped by idsql or not), in the stores of its dialect (StoresFor), and
// a segment key for every segment table of cfg that has none. See
// MigrateIn; MigrateWith also installs database-side key defaults.
func Migrate(ctx context.Context, db *sql.DB, cfg *Config) error {
	stores, err := storesFor(db, cfg.Holder, keyset.HasSegmentTables(cfg))
	if err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	return MigrateIn(ctx, db, cfg, stores)
}

// MigrateIn creates idsql's tables in stores, and a segment key for every
// segment table of cfg that has none. db is the application's database: a
// key for a table of db that already holds rows starts above MAX(key
// column), read there, so a table that used BIGSERIAL adopts idsql without
// collisions, whether the segment store is in the same database or (as on
// SQLite) in a file of its own. It records each table's key shape in
// idsql_shapes in db, refusing a shape that differs from the recorded one
// (see Reshape). It is idempotent.
func MigrateIn(ctx context.Context, db *sql.DB, cfg *Config, stores Stores) error {
	if err := db.PingContext(ctx); err != nil {
		if _, wrapped := db.Driver().(*wrappedDriver); wrapped {
			return fmt.Errorf("idsql: migrate: %w", err) // the wrapper says where already
		}
		d, _ := keyset.DialectOf(db)
		return fmt.Errorf("idsql: migrate: %w", d.ConnectError(err, ""))
	}
	if err := keyset.RecordShapes(ctx, db, cfg); err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	if stores.Workers != nil {
		if err := stores.Workers.Migrate(ctx); err != nil {
			return fmt.Errorf("idsql: migrate: %w", err)
		}
	}
	store := stores.Segments
	if store == nil {
		return nil
	}
	if err := store.Migrate(ctx); err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	existing, err := store.Keys(ctx)
	if err != nil {
		return fmt.Errorf("idsql: migrate: %w", err)
	}
	have := map[string]bool{}
	for _, k := range existing {
		have[k] = true
	}
	for _, table := range cfg.TableNames() {
		tc := cfg.Tables[table]
		key := cfg.SegmentKey(table)
		if tc.Strategy == keyset.Segment && !tc.Gene().Plain() {
			if err := migrateGene(ctx, db, store, have, table, tc, key); err != nil {
				return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
			}
			continue
		}
		if tc.Strategy != keyset.Segment || have[key] {
			continue
		}
		spec := segment.KeySpec{Key: key, Step: tc.StepOrDefault(), Description: "table " + table}
		if tableExists(ctx, db, table) {
			if spec.Start, err = adoptStart(ctx, db, table, tc.KeyColumn(), 0); err != nil {
				return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
			}
		}
		if err := store.CreateKey(ctx, spec); err != nil {
			return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
		}
	}
	return nil
}

// quotings returns the dialects whose identifier quoting reads db's
// tables: db's own (dialect.Of, raw or wrapped), or, for a driver it does
// not know, one of each quoting style (dialect.QuoteStyles: "name", then
// `name`).
func quotings(db *sql.DB) []dialect.Dialect {
	if d, err := dialect.Of(db); err == nil {
		return []dialect.Dialect{d}
	}
	return dialect.QuoteStyles()
}

// tableExists probes a configured (hence well-formed) table name, quoted
// as db's dialect quotes identifiers (see quotings).
func tableExists(ctx context.Context, db *sql.DB, table string) bool {
	for _, d := range quotings(db) {
		rows, err := db.QueryContext(ctx, "SELECT 1 FROM "+d.QuoteQualified(table)+" WHERE 1 = 0")
		if err == nil && errors.Join(rows.Close(), rows.Err()) == nil {
			return true
		}
	}
	return false
}

// migrateGene creates the segment key of every shard of a table whose keys
// carry shard or application bits (key#0, key#1, ...; the key itself
// without shard bits). A table that holds rows already has every shard
// start above the index of its largest key, so no key can collide with
// one it holds, whatever the shard.
func migrateGene(ctx context.Context, db *sql.DB, store *segment.SQLStore, have map[string]bool, table string, tc keyset.TableConfig, key string) error {
	g := tc.Gene()
	// A table that holds rows: every shard starts above the index of its
	// largest key.
	var start int64
	if tableExists(ctx, db, table) {
		var err error
		if start, err = adoptStart(ctx, db, table, tc.KeyColumn(), g.ShardBits+g.AppBits); err != nil {
			return err
		}
	}
	// A table that used a plain key before: its shards start above every
	// key that one could have issued.
	if have[key] && g.ShardBits > 0 {
		infos, err := store.ListKeys(ctx)
		if err != nil {
			return err
		}
		for _, ki := range infos {
			if ki.Key == key {
				start = max(start, ki.MaxID>>(g.ShardBits+g.AppBits)+1)
			}
		}
	}
	for s := range g.Shards() {
		name := g.ShardKey(key, s)
		if have[name] {
			continue
		}
		desc := "table " + table
		if g.ShardBits > 0 {
			desc = fmt.Sprintf("table %s, shard %d of %d", table, s, g.Shards())
		}
		spec := segment.KeySpec{Key: name, Step: tc.StepOrDefault(), Description: desc, Start: start}
		if err := store.CreateKey(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}

// adoptStart returns the first number a segment key of table may hand out
// so that none of its keys, number << shift | low bits, collides with one
// the table holds: above MAX(column) >> shift, or 1 for an empty table.
// The table is read through db, the application's database, with its
// dialect's quoting (see quotings).
func adoptStart(ctx context.Context, db *sql.DB, table, column string, shift int) (int64, error) {
	var err error
	for _, d := range quotings(db) {
		var cur sql.NullInt64
		q := "SELECT MAX(" + d.Quote(column) + ") FROM " + d.QuoteQualified(table)
		if err = db.QueryRowContext(ctx, q).Scan(&cur); err != nil {
			continue
		}
		n := cur.Int64 >> shift
		switch {
		case !cur.Valid || n < 1:
			return 1, nil
		case n >= segment.MaxID:
			return 0, fmt.Errorf("adopt MAX(%s): %w: MAX is %d", column, segment.ErrExhausted, cur.Int64)
		}
		return n + 1, nil
	}
	if dialect.AnyUndefinedColumn(err) {
		return 0, fmt.Errorf("the table has no column %s, which the configuration names as its key column: "+
			"set tables.%s.column in the configuration to the table's key column (or add the column): %w", column, table, err)
	}
	return 0, fmt.Errorf("adopt MAX(%s): %w", column, err)
}
