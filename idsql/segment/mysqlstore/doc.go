// Package mysqlstore runs the segment store (segment.SQLStore) on MySQL
// (8.0.29 or later, for CREATE PROCEDURE IF NOT EXISTS) and MariaDB (the
// tests run on 10.11), through go-sql-driver/mysql, which it registers as
// the "mysql" database/sql driver.
//
// # Tables
//
// Migrate creates idsql_alloc and idsql_alloc_log as InnoDB tables: keys
// are VARCHAR(128) with the utf8mb4_bin collation (case-sensitive, as on
// PostgreSQL), IDs are BIGINT, and times are DATETIME(6) in the driver's
// loc (UTC by default), written by idsql's clock.
//
// # One round trip per range
//
// MySQL has no UPDATE ... RETURNING and no data-modifying WITH, so the
// UPDATE of the key's row and the INSERT of its log row cannot share one
// statement. Migrate therefore creates a stored procedure,
//
//	idsql_allocate_v1(step, now, key, limit, instance)
//
// that runs, in a transaction of its own,
//
//	UPDATE idsql_alloc SET max_id = max_id + step ... WHERE biz_tag = key
//	SELECT max_id, step ... (the row is locked by the UPDATE)
//	INSERT INTO idsql_alloc_log ...
//	COMMIT
//
// and returns max_id and the stored step as a result set. The store
// prepares the CALL once per pooled connection, so each allocation is one
// COM_STMT_EXECUTE: one round trip, the log row included, atomic. (A bare
// UPDATE ... SET max_id = LAST_INSERT_ID(max_id + step) is one round trip
// too, and its OK packet carries the new max_id, but it can neither log the
// range nor return the stored step.) The procedure runs with SQL SECURITY
// INVOKER, so the caller needs the same table privileges as without it,
// plus EXECUTE; Migrate needs CREATE ROUTINE.
//
// Where stored procedures are not available (TiDB, Vitess), clear the
// store SQL's Allocate: the store then runs START TRANSACTION, the UPDATE, a
// SELECT of the row, the INSERT and COMMIT, with the same guarantees, in
// eight round trips with go-sql-driver's defaults (it prepares, executes
// and closes every statement that has arguments, unless the DSN sets
// interpolateParams=true).
//
//	d := mysqlstore.SQL()
//	d.Allocate = nil
//	store := segment.NewSQLStore(db, d)
//
// # Durability
//
// A range must be on disk before it is handed out, or a crash of the
// server could hand it out again. On PostgreSQL the store forces
// synchronous_commit = on in every allocating transaction. InnoDB has no
// per-transaction setting: innodb_flush_log_at_trx_commit is global (1,
// the default, flushes the redo log at every commit; 2 survives a crash of
// mysqld but not of the operating system; 0 neither), and with the binary
// log on, a transaction whose binlog record was not synced is rolled back
// at recovery, so sync_binlog must be 1 too. The store cannot set either
// for itself; CheckDurable reports a server that does not commit
// durably, so that the CLI or a health check can say so.
//
// # Leaf
//
// segment.StoreSettings.LeafTable points the store at Meituan Leaf's
// leaf_alloc table, with Leaf still allocating from it:
//
//	store, err := mysqlstore.NewWith(db, segment.StoreSettings{LeafTable: "leaf_alloc"})
//
// The procedure of that table is named after it (idsql_allocate_v1_leaf_alloc)
// and declares its key parameter with the character set and collation of
// Leaf's biz_tag column, so that the UPDATE finds the row through the
// primary key instead of scanning (and locking) the table.
//
// # id_alloc
//
// NewIDAlloc adopts the (app_id, shard_id) table of the ID service whose
// keys carry their shard: segment key k#n of a key k mapped to an app_id
// draws from row (app_id, n), refusing to pass its max_limit_id. Each
// allocation is a transaction of three statements (UPDATE, SELECT, INSERT
// into idsql_alloc_log), not the one-round-trip procedure. The store is
// segment.IDAllocStore, which also runs on PostgreSQL.
package mysqlstore
