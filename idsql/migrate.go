package idsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/idsql/idsql/idsql/segment"
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
		if tc.Strategy != Segment || have[key] {
			continue
		}
		spec := segment.KeySpec{Key: key, Step: tc.StepOrDefault(), Description: "table " + table}
		if tableExists(ctx, db, table) {
			spec.AdoptTable, spec.AdoptColumn = table, tc.KeyColumn()
		}
		if err := store.CreateKey(ctx, spec); err != nil {
			return fmt.Errorf("idsql: migrate: table %s: %w", table, err)
		}
	}
	return nil
}

// tableExists probes a configured (hence well-formed) table name.
func tableExists(ctx context.Context, db *sql.DB, table string) bool {
	parts := strings.Split(table, ".")
	for i, p := range parts {
		parts[i] = quoteIdent(p)
	}
	rows, err := db.QueryContext(ctx, "SELECT 1 FROM "+strings.Join(parts, ".")+" WHERE 1 = 0")
	if err != nil {
		return false
	}
	return errors.Join(rows.Close(), rows.Err()) == nil
}
