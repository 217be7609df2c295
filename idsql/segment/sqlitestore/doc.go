// Package sqlitestore is the embedded store of the segment generator: the
// schema of segment.SQLStore (idsql_alloc, idsql_alloc_log) in a local
// SQLite file through modernc.org/sqlite, a pure Go driver (no cgo), for
// running idsql with no database server.
//
// Only commands and tests import it, so library users who never use it do
// not compile SQLite.
//
//	store, err := sqlitestore.Open(ctx, "/var/lib/idsql/segments.db")
//	if err != nil { ... }
//	defer store.DB().Close()
//	gen, err := segment.New(ctx, store, segment.Settings{})
package sqlitestore
