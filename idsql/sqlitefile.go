package idsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idsql/idsql/idsql/internal/engine"
)

// ErrSharedSQLiteFile reports a segment store in the application's own
// SQLite file. SQLite lets one connection write to a file at a time: a key
// range allocated while one of the application's transactions holds the
// file would wait for that transaction, which waits for the key (and a
// transaction that read before the allocation could no longer write). The
// store needs a file of its own.
var ErrSharedSQLiteFile = errors.New("idsql: the segment store is in the application's SQLite file")

// sqliteMainFile answers the file of an SQLite connection's main
// database; empty for an in-memory one.
const sqliteMainFile = "SELECT file FROM pragma_database_list WHERE name = 'main'"

// checkSQLiteStore refuses, where the segment store must be a database of
// its own (dialect.SegmentStoreApart: SQLite), a segment store (one with a
// DB, as sqlitestore's has) in the file cn is on. The first connection
// that passes settles it for the Connector.
func (c *Connector) checkSQLiteStore(ctx context.Context, cn *conn) error {
	if !c.dialect.SegmentStoreApart() || c.sqliteChecked.Load() {
		return nil
	}
	s, ok := c.keys.Options().SegmentStore.(interface{ DB() *sql.DB })
	if !ok {
		c.sqliteChecked.Store(true)
		return nil
	}
	var store string
	if err := s.DB().QueryRowContext(ctx, sqliteMainFile).Scan(&store); err != nil {
		return fmt.Errorf("idsql: read the SQLite file of the segment store: %w", err)
	}
	app, err := cn.queryString(ctx, sqliteMainFile)
	if err != nil {
		return fmt.Errorf("idsql: read the SQLite file of the application's connection: %w", err)
	}
	if store != "" && app != "" && sameFile(store, app) {
		return fmt.Errorf("%w, %s: open the store on a file of its own, such as sqlitestore.Open(ctx, %q)",
			ErrSharedSQLiteFile, app, filepath.Join(filepath.Dir(app), "idsql.db"))
	}
	c.sqliteChecked.Store(true)
	return nil
}

// sameFile reports whether paths a and b name one file.
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// queryString runs query over the inner connection and returns the first
// column of its first row.
func (c *conn) queryString(ctx context.Context, query string) (string, error) {
	rows, err := c.query(ctx, query, nil)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	v := make([]driver.Value, len(rows.Columns()))
	if err := rows.Next(v); err != nil {
		return "", err
	}
	return engine.ValueString(v[0]), nil
}
