// Package zktest gives tests a real ZooKeeper: the shared server that
// scripts/test starts (or docker compose), found through IDSQL_TEST_ZK, and
// dedicated servers and ensembles for tests that must stop and restart them.
//
// Shared server, one chroot per test so tests run in parallel:
//
//	servers, chroot := zktest.Chroot(t) // e.g. "/idsql-test/TestLease-4242-7"
//	conn, _, err := zk.Connect(servers, 5*time.Second)
//	// use paths under chroot; the tree is removed when the test ends
//
// Dedicated server or ensemble (each needs java and IDSQL_TEST_ZK_CLASSPATH,
// which scripts/test sets):
//
//	srv := zktest.StartServer(t)
//	srv.Stop()  // the server is down; clients see connection loss
//	srv.Start() // the same server, same data, same port
//
//	ens := zktest.StartEnsemble(t, 3)
//	ens.Member(0).Stop() // the other two keep a quorum
//
//	// shorter ticks, and a proxy on each pair's quorum link
//	ens = zktest.StartQuorum(t, zktest.QuorumSettings{TickTime: 250 * time.Millisecond, Peer: proxy})
//	ens.Member(ens.Leader()).Kill() // SIGKILL; Launch and WaitServing bring it back
//
// Without IDSQL_TEST_ZK (or without java and a classpath, for the dedicated
// servers) a test skips with a message saying how to run it; with CI set it
// fails instead (see pgtest.Unavailable).
package zktest
