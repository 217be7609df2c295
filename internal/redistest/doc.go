// Package redistest gives tests a real Redis: the one scripts/test starts
// (or docker compose), found through IDSQL_TEST_REDIS_ADDR ("host:port").
//
//	addr := redistest.Addr(t) // e.g. "127.0.0.1:6379", answered PING
//
// The server is shared by every test that runs at the same time: keep the
// keys a test writes under a prefix of its own, such as t.Name().
//
// Without the variable a test skips with a message saying how to run it;
// with CI set, a missing or unreachable server fails the test instead (see
// pgtest.Unavailable).
package redistest
