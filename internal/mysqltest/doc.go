// Package mysqltest gives tests a real MySQL-compatible server: the MariaDB
// that scripts/test starts (or MySQL 8 from docker compose), found through
// IDSQL_TEST_MYSQL_DSN, a go-sql-driver/mysql DSN such as
//
//	idsql:idsql@tcp(127.0.0.1:3306)/idsql_test
//
// whose user may create and drop databases. Each test gets a database of its
// own, so tests run in parallel without seeing each other's tables:
//
//	db, dsn := mysqltest.Open(t) // database e.g. "t_testlease_4242_7"
//	_, err := db.ExecContext(ctx, `CREATE TABLE item (id BIGINT PRIMARY KEY)`)
//	// the database is dropped when the test ends
//
// DSNs built here scan DATETIME and TIMESTAMP columns into time.Time
// (parseTime=true) unless IDSQL_TEST_MYSQL_DSN says otherwise, and allow one
// statement per query (multiStatements stays off unless the variable turns it
// on).
//
// A test that crashes and restarts the database mid-run starts a MariaDB of
// its own instead (the mariadbd in IDSQL_TEST_MYSQL_BIN, which scripts/test
// sets), like pgtest.StartServer:
//
//	srv := mysqltest.StartServer(t) // srv.DSN(): root on its idsql_test
//	srv.Crash()                     // SIGKILL, as a crash would
//	srv.Start()                     // InnoDB recovers from its redo log
//
// Without the variables a test skips with a message saying how to run it;
// with CI set, a missing or unreachable server fails the test instead (see
// pgtest.Unavailable).
package mysqltest
