package idsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"
)

// Migrate creates idsql's tables in stores, and a segment key for every
// segment table of cfg that has none. A key for a table of db that already
// holds rows starts above MAX(key column), so a table that used BIGSERIAL
// adopts idsql without collisions. It is idempotent.
func Migrate(ctx context.Context, db *sql.DB, cfg *Config, stores Stores) error {
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
		if tc.Strategy == Segment && !tc.Gene().Plain() {
			if err := migrateGene(ctx, db, store, have, table, tc, key); err != nil {
				return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
			}
			continue
		}
		if tc.Strategy != Segment || have[key] {
			continue
		}
		spec := segment.KeySpec{Key: key, Step: tc.StepOrDefault(), Description: "table " + table}
		if tableExists(ctx, db, table) {
			adopt, err := adoptName(table, tc)
			if err != nil {
				return fmt.Errorf("idsql: migrate: %w", err)
			}
			spec.AdoptTable, spec.AdoptColumn = adopt, tc.KeyColumn()
		}
		if err := store.CreateKey(ctx, spec); err != nil {
			return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
		}
	}
	return nil
}

// tableExists probes a configured (hence well-formed) table name, quoted
// as PostgreSQL and SQLite quote identifiers, then as MySQL does.
func tableExists(ctx context.Context, db *sql.DB, table string) bool {
	for _, d := range []dialect.Dialect{dialect.PostgreSQL, dialect.MySQL} {
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
func migrateGene(ctx context.Context, db *sql.DB, store *segment.SQLStore, have map[string]bool, table string, tc TableConfig, key string) error {
	g := tc.Gene()
	adopt := tableExists(ctx, db, table)
	adoptTable, err := adoptName(table, tc)
	if adopt && err != nil {
		return err
	}
	// A table that used a plain key before: its shards start above every
	// key that one could have issued.
	var start int64
	if have[key] && g.ShardBits > 0 {
		infos, err := store.ListKeys(ctx)
		if err != nil {
			return err
		}
		for _, ki := range infos {
			if ki.Key == key {
				start = ki.MaxID>>(g.ShardBits+g.AppBits) + 1
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
		if adopt {
			spec.AdoptTable, spec.AdoptColumn, spec.AdoptShift = adoptTable, tc.KeyColumn(), g.ShardBits+g.AppBits
		}
		if err := store.CreateKey(ctx, spec); err != nil {
			return err
		}
	}
	return nil
}

// adoptName is a configured table name as segment stores read AdoptTable:
// "schema.table" unquoted, split at the dot.
func adoptName(table string, tc TableConfig) (string, error) {
	schema, name, _ := SplitTableName(table)
	if strings.Contains(schema, ".") || strings.Contains(name, ".") {
		return "", fmt.Errorf("table %s: a name with a dot inside its quotes cannot be adopted (start its segment key above MAX(%s) by hand)",
			table, tc.KeyColumn())
	}
	if schema != "" {
		return schema + "." + name, nil
	}
	return name, nil
}
