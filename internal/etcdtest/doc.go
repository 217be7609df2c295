// Package etcdtest gives tests a real etcd: the shared server that
// scripts/test starts (or docker compose), found through IDSQL_TEST_ETCD
// ("host:port"), and dedicated servers for tests that must stop and restart
// etcd.
//
// Shared server, one key prefix per test so tests run in parallel:
//
//	endpoints, prefix := etcdtest.Prefix(t) // e.g. "/idsql-test/TestLease-4242-7"
//	// keep every key under prefix; they are deleted when the test ends
//
//	endpoints, ns := etcdtest.Namespace(t) // for a configuration: namespace ns, default prefix
//
// Dedicated server (needs the etcd binary in IDSQL_TEST_ETCD_BIN, which
// scripts/test sets):
//
//	srv := etcdtest.StartServer(t)
//	srv.Stop()  // etcd is down; clients see their requests fail
//	srv.Start() // the same server, same data, same port
//
// Dedicated cluster, for quorum tests:
//
//	cl := etcdtest.StartCluster(t, etcdtest.ClusterSettings{Election: 500 * time.Millisecond})
//	i, _ := cl.Leader()
//	cl.Member(i).Kill()  // SIGKILL; the other two elect a leader
//	cl.Member(i).Start() // back, from its data
//
// Without IDSQL_TEST_ETCD (or the binary, for a dedicated server) a test
// skips with a message saying how to run it; with CI set it fails instead
// (see pgtest.Unavailable).
package etcdtest
