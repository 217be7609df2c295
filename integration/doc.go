// Package integration holds end-to-end tests of idsql against real
// PostgreSQL and ZooKeeper servers. It has no non-test code.
//
// Run them through scripts/test, which starts both servers (or uses the ones
// named by IDSQL_TEST_PG_DSN and IDSQL_TEST_ZK, for example from
// docker compose):
//
//	scripts/test ./integration/...
//
// Outside CI a test whose server is missing skips; with CI set it fails.
package integration
