package keyset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/internal/dialect"
)

// ErrShapeChanged is wrapped by the errors refusing a table whose
// configured shape differs from the shape recorded for it (Migrate records
// it in idsql_shapes): the keys of two shapes of one table can be equal,
// so a table keeps its shape unless Reshape proves they cannot meet.
var ErrShapeChanged = errors.New("idsql: table's key shape differs from the recorded one")

// RecordShapes records the shape of every table of cfg in idsql_shapes,
// in db (creating it), unless one is recorded: it is what Migrate does
// for shapes. A recorded shape that differs from the configured one is
// refused (ErrShapeChanged). The first record of a spread shape is
// refused too when the table has issued keys already (see issuedKeys):
// those were ordered. A database of a dialect idsql does not know is
// skipped when every table is ordered, and refused otherwise.
func RecordShapes(ctx context.Context, db *sql.DB, cfg *Config) error {
	d, err := dialect.Of(db)
	if err != nil {
		for _, t := range cfg.TableNames() {
			if cfg.Tables[t].Spread() {
				return fmt.Errorf("table %s has shape %s, whose record needs a database of a known dialect: %w", t, cfg.Tables[t].Shape, err)
			}
		}
		return nil
	}
	for _, s := range d.ShapeSchema() {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create idsql_shapes: %w", err)
		}
	}
	for _, table := range cfg.TableNames() {
		tc := cfg.Tables[table]
		rec, ok, err := readShape(ctx, db, d, cfg.Namespace, table)
		if err != nil {
			return err
		}
		if ok {
			if err := shapeMatches(cfg, table, rec); err != nil {
				return err
			}
			continue
		}
		if tc.Spread() {
			if what, err := issuedKeys(ctx, db, d, cfg, table); err != nil {
				return err
			} else if what != "" {
				return fmt.Errorf("%w: table %s: shape %s is configured, and no shape is recorded, but the table has issued keys (%s), "+
					"which were ordered: ordered and spread keys of one table can be equal. %s",
					ErrShapeChanged, table, tc.Shape, what, reshapeFix(table))
			}
		}
		now := time.Now().UTC().Format(time.RFC3339)
		if _, err := db.ExecContext(ctx, d.ShapeRecord(), cfg.Namespace, table, tc.Shape.Tag(), now); err != nil {
			return fmt.Errorf("table %s: record its shape in idsql_shapes: %w", table, err)
		}
		// Another migration may have recorded another shape first.
		if rec, ok, err = readShape(ctx, db, d, cfg.Namespace, table); err != nil {
			return err
		} else if ok {
			if err := shapeMatches(cfg, table, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// shapeRecord is a row of idsql_shapes.
type shapeRecord struct{ shape, recorded string }

// readShape returns table's recorded shape; ok is false when none is.
func readShape(ctx context.Context, db *sql.DB, d dialect.Dialect, namespace, table string) (shapeRecord, bool, error) {
	var r shapeRecord
	switch err := db.QueryRowContext(ctx, d.ShapeRead(), namespace, table).Scan(&r.shape, &r.recorded); {
	case errors.Is(err, sql.ErrNoRows):
		return r, false, nil
	case err != nil:
		return r, false, fmt.Errorf("table %s: read its shape from idsql_shapes: %w", table, err)
	}
	return r, true, nil
}

// shapeMatches refuses a recorded shape other than table's configured one.
func shapeMatches(cfg *Config, table string, rec shapeRecord) error {
	return shapeIs(cfg.Namespace, table, cfg.Tables[table].Shape, rec)
}

// shapeIs refuses a recorded shape other than s. Records hold Shape.Tag.
func shapeIs(namespace, table string, s Shape, rec shapeRecord) error {
	if rec.shape == s.Tag() {
		return nil
	}
	return fmt.Errorf("%w: table %s (namespace %s) is configured with shape %s, but its keys were issued with shape %s (recorded in idsql_shapes at %s): "+
		"keys of the two shapes can be equal. %s",
		ErrShapeChanged, table, namespace, s, rec.shape, rec.recorded, reshapeFix(table))
}

// reshapeFix is what the errors wrapping ErrShapeChanged tell to do.
func reshapeFix(table string) string {
	return fmt.Sprintf("Configure the recorded shape again; or, to change it, run `idsql migrate --reshape %s` "+
		"(it changes the record only when it can prove the two shapes' keys cannot meet); "+
		"or give the new shape to a new table (or segment key)", table)
}

// issuedKeys says what shows that table has issued keys ("" when nothing
// does): rows in the table itself, worker leases recorded for it in
// idsql_workers, or segment ranges logged for its key in
// idsql_alloc_log, whichever of those db holds.
func issuedKeys(ctx context.Context, db *sql.DB, d dialect.Dialect, cfg *Config, table string) (string, error) {
	var one int
	switch err := db.QueryRowContext(ctx, d.AnyRow(table)).Scan(&one); {
	case err == nil:
		return "the table holds rows", nil
	case errors.Is(err, sql.ErrNoRows), d.UndefinedTable(err):
	default:
		return "", fmt.Errorf("table %s: look for its rows: %w", table, err)
	}
	count := func(what, q string, args ...any) (string, error) {
		var n int64
		switch err := db.QueryRowContext(ctx, q, args...).Scan(&n); {
		case err == nil && n > 0:
			return fmt.Sprintf("%d %s", n, what), nil
		case err == nil, d.UndefinedTable(err):
			return "", nil
		default:
			return "", fmt.Errorf("table %s: count its %s: %w", table, what, err)
		}
	}
	if cfg.Tables[table].Leased() {
		return count("worker leases in idsql_workers", d.ShapeLeases(), cfg.Namespace, table)
	}
	key := cfg.SegmentKey(table)
	return count("ranges in idsql_alloc_log", d.ShapeRanges(), key, key+"#", key+"$")
}

// checkShape refuses to start table when the shape recorded for it
// differs from the configured one, or when the table is spread and no
// shape is recorded. It reads the record from the keys' database
// (KeysOptions.DB, else the worker registry's); without one, a spread
// table is refused, an ordered one passes.
func (k *Keys) checkShape(ctx context.Context, table string) error {
	var applied Shape // what the table's codec applies, fixed at NewKeys
	if c, err := k.codecs.Of(table); err == nil && c.Spread() {
		applied = c.ShapeFunc().Shape()
	}
	spread := !applied.IsOrdered()
	db := k.opts.DB
	if db == nil && k.opts.Registry != nil {
		db = k.opts.Registry.DB()
	}
	if db == nil {
		if spread {
			return fmt.Errorf("table %s has shape %s, which Keys checks against the shape recorded in the database: set KeysOptions.DB (the database idsql migrate ran on)", table, applied)
		}
		return nil
	}
	d, err := dialect.Of(db)
	if err != nil {
		if spread {
			return fmt.Errorf("table %s has shape %s, whose record needs a database of a known dialect: %w", table, applied, err)
		}
		return nil
	}
	rec, ok, err := readShape(ctx, db, d, k.cfg.Namespace, table)
	switch {
	case err != nil && d.UndefinedTable(errors.Unwrap(err)) && !spread:
		return nil // migrated before shapes were recorded: ordered
	case err != nil:
		if nm := notMigrated("table "+table+" (shape "+applied.String()+")", err); nm != nil {
			return nm
		}
		return err
	case ok:
		return shapeIs(k.cfg.Namespace, table, applied, rec)
	case spread:
		return fmt.Errorf("%w: table %s has shape %s, and no shape is recorded for it in idsql_shapes: %s to record it",
			ErrNotMigrated, table, applied, migrateFix)
	}
	return nil
}

// Reshape records table's configured shape in place of the recorded one,
// in db (the database Migrate ran on; it creates idsql_shapes there), when it can prove that no key the
// table issued under the recorded shape can equal one it will issue under
// the new: only when the table has issued no key (see Migrate's check:
// no rows, no worker lease, no segment range). Otherwise it refuses with
// an error wrapping ErrShapeChanged: give the new shape to a new table.
// A table without a record gets one, as Migrate would record it.
func Reshape(ctx context.Context, db *sql.DB, cfg *Config, table string) error {
	tc, ok := cfg.Tables[table]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	d, err := DialectOf(db)
	if err != nil {
		return fmt.Errorf("idsql: reshape %s: %w", table, err)
	}
	for _, s := range d.ShapeSchema() {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("idsql: reshape %s: create idsql_shapes: %w", table, err)
		}
	}
	rec, ok, err := readShape(ctx, db, d, cfg.Namespace, table)
	if err != nil {
		return fmt.Errorf("idsql: reshape %s: %w", table, err)
	}
	want := tc.Shape.Tag() // what records hold
	if ok && rec.shape == want {
		return nil
	}
	what, err := issuedKeys(ctx, db, d, cfg, table)
	if err != nil {
		return fmt.Errorf("idsql: reshape %s: %w", table, err)
	}
	if what != "" {
		from := "ordered (no shape recorded)"
		if ok {
			from = rec.shape
		}
		return fmt.Errorf("idsql: reshape %s: %w: the table has issued keys (%s) under shape %s, and a key of shape %s can equal one of them, "+
			"which idsql cannot rule out: keep shape %s, or give shape %s to a new table (or a new segment key)",
			table, ErrShapeChanged, what, from, want, from, want)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	if !ok {
		_, err = db.ExecContext(ctx, d.ShapeRecord(), cfg.Namespace, table, want, now)
	} else {
		_, err = db.ExecContext(ctx, d.ShapeRewrite(), want, now, cfg.Namespace, table, rec.shape)
	}
	if err != nil {
		return fmt.Errorf("idsql: reshape %s: %w", table, err)
	}
	rec, ok, err = readShape(ctx, db, d, cfg.Namespace, table)
	if err != nil || !ok || rec.shape != want {
		return fmt.Errorf("idsql: reshape %s: the record changed under it (another migration?): %v", table, err)
	}
	return nil
}
