// Package registry keeps the worker table idsql_workers: one row per worker
// lease (namespace, worker ID, table, instance, holder kind, start, last
// heartbeat, high-water timestamp, release) in the application's own
// PostgreSQL or MySQL/MariaDB database. It is what reverse lookup reads:
// given a snowflake ID's namespace, worker ID and timestamp, Find returns
// the lease that issued it, even after the worker ID has been recycled from
// one table to another.
//
// # Exact boundaries
//
// Every row carries ids_after, a timestamp such that every ID issued under
// the lease has a strictly later tick. A recorded lease reports ids_after as
// its LastTime, and the snowflake generator only issues ticks after
// LastTime, so the promise holds by construction. ids_after is the later of
// the time the lease was recorded and every high-water timestamp persisted
// for the worker ID before; the previous lease of the same worker ID stopped
// (was fenced) before this one was granted. So for one worker ID the rows'
// ids_after values increase, and the ID whose tick starts at t belongs to the
// row with the greatest ids_after before t — provided t is not past that
// row's end (its release, or its last heartbeat plus Settings.Slack while it
// is live). Anything else is ErrNoLease, never a guess.
//
// # Databases
//
// The dialect is chosen once, in New: Settings.Dialect, or the driver of
// the database (lib/pq and pgx are PostgreSQL, go-sql-driver/mysql is
// MySQL, raw or wrapped by idsql.Open). Another driver is an error naming
// Settings.Dialect. Each statement is written once here and rendered in
// that dialect: internal/dialect holds the tables' schema and every fact
// that differs by database (bind parameters, time casts and arguments, the
// database clock, durable commits, the namespace lock, isolation, name
// lengths). What differs:
//
//	                   PostgreSQL                    MySQL / MariaDB
//	times              TIMESTAMPTZ                   DATETIME(6), UTC
//	database clock     clock_timestamp()             UTC_TIMESTAMP(6) + (SYSDATE(6) - NOW(6))
//	namespace lock     pg_advisory_xact_lock         row lock in idsql_worker_locks
//	idle lock holder   ended after a heartbeat       held until its connection ends
//	transactions       server default                READ COMMITTED
//	durable commits    SET LOCAL synchronous_commit  server settings checked (ErrNotDurable)
//	lease ID back      RETURNING                     LastInsertId
//
// On MySQL both clocks that a statement can read have a flaw: NOW() and
// UTC_TIMESTAMP() are the statement's start, stale after a lock wait, and
// SYSDATE() is local time, which may jump with daylight saving. Expiry uses
// UTC_TIMESTAMP plus the time elapsed since the statement began.
// Timestamps travel as UTC text and are read back as UTC whatever the DSN's
// parseTime and loc. Names (namespace, table, instance) have at most 191
// characters there, so the indexes fit every InnoDB row format; longer ones
// are refused, never truncated.
//
// A lease row lost in a database crash could hand its worker ID out twice.
// PostgreSQL commits every lease transaction synchronously, whatever the
// server's synchronous_commit. MySQL's per-commit flush is a global server
// setting that no session can raise, so recording a lease there checks it
// instead: innodb_flush_log_at_trx_commit must be 1 (or MariaDB's 3) and,
// with binary logging, sync_binlog 1; otherwise it fails with ErrNotDurable
// unless Settings.AcceptLazyCommits accepts the risk. Neither database is
// protected from what it cannot see: fsync disabled under it, a disk that
// lies, a replica promoted before it received the commit.
//
// # Twins
//
// A worker ID is held by one live row at a time, and a row that its
// process keeps renewing is never ended by another: Contend, which
// Recorded and holder/postgres use, refuses a newcomer that finds the
// worker ID's row renewed (a twin with a copied configuration) with an
// error naming the holder, and takes over only a row that expired or was
// not renewed for three heartbeats (past the horizon it persisted).
//
// # Use
//
//	reg := registry.New(db, registry.Settings{})
//	if err := reg.Migrate(ctx); err != nil { ... }
//	h := registry.Recorded(zkHolder, reg) // every lease recorded before Acquire returns
//	...
//	rec, err := reg.Find(ctx, "shop", parts.Worker, parts.Time)
//	// rec.Table == "orders"
package registry
