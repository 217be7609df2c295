// Package sqlitestore is the embedded store of the segment generator: the
// schema of segment.SQLStore (idsql_alloc, idsql_alloc_log) in a local
// SQLite file through modernc.org/sqlite, a pure Go driver (no cgo), for
// running idsql with no database server.
//
// Give the store a file of its own, not the application's: SQLite lets one
// connection write to a file at a time, so a store in the application's
// file could not allocate a range while one of the application's
// transactions holds the file (the idsql wrapper refuses that set-up with
// idsql.ErrSharedSQLiteFile). Back the store up with the application's
// file: restored from an older copy, it would hand out keys again.
//
// Only commands and tests import it, so library users who never use it do
// not compile SQLite.
//
//	store, err := sqlitestore.Open(ctx, "/var/lib/idsql/segments.db")
//	if err != nil { ... }
//	defer store.DB().Close()
//	gen, err := segment.New(ctx, store, segment.Settings{})
package sqlitestore
