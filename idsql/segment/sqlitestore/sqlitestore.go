package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/dialect"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// SQL returns the segment.StoreSQL for SQLite.
func SQL() segment.StoreSQL {
	return segment.StoreSQL{
		Dialect: dialect.SQLite,
		AllocSchema: `CREATE TABLE IF NOT EXISTS idsql_alloc (
	biz_tag     TEXT PRIMARY KEY,
	max_id      INTEGER NOT NULL DEFAULT 0 CHECK (max_id >= 0),
	step        INTEGER NOT NULL CHECK (step > 0),
	description TEXT NOT NULL DEFAULT '',
	update_time DATETIME NOT NULL
)`,
		LogSchema: []string{
			`CREATE TABLE IF NOT EXISTS idsql_alloc_log (
	id       INTEGER PRIMARY KEY,
	biz_tag  TEXT NOT NULL,
	first_id INTEGER NOT NULL,
	last_id  INTEGER NOT NULL,
	instance TEXT NOT NULL,
	created  DATETIME NOT NULL,
	CHECK (first_id <= last_id)
)`,
			`CREATE INDEX IF NOT EXISTS idsql_alloc_log_first ON idsql_alloc_log (first_id)`,
			`CREATE INDEX IF NOT EXISTS idsql_alloc_log_key ON idsql_alloc_log (biz_tag, first_id)`,
		},
	}
}

// New returns a store on db, an SQLite database opened with the "sqlite"
// driver. Prefer Open, which sets the pragmas concurrent allocators need.
func New(db *sql.DB) *segment.SQLStore {
	return segment.NewSQLStore(db, SQL())
}

// DSN returns the modernc.org/sqlite DSN Open uses for the file at path:
// WAL journaling, a 10 s busy timeout, synchronous FULL and immediate
// transactions. Open other pools on the same file with it, so that every
// writer waits for the lock instead of failing, and every commit is synced;
// it suits the application's own file too (a file other than the store's).
func DSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
}

// Open opens (creating if needed) the SQLite file at path with WAL
// journaling and a busy timeout, so several processes can allocate from
// the same file, and runs Migrate. Close the store's DB when done.
//
// Every commit is synced to disk (synchronous FULL): with WAL journaling
// the default NORMAL may lose the last commits to a power failure or an
// operating-system crash, and a lost allocation would hand its range out
// again. It costs one fsync per allocation.
func Open(ctx context.Context, path string) (*segment.SQLStore, error) {
	db, err := sql.Open("sqlite", DSN(path))
	if err != nil {
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	s := New(db)
	if err := s.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlitestore: open %s: %w", path, err)
	}
	return s, nil
}
