// Package integration holds end-to-end tests of idsql against real
// PostgreSQL, MariaDB, ZooKeeper, Redis and etcd servers. It has no non-test code, apart from the
// helper commands the chaos tests run (internal/chaosproc,
// internal/redisqproc).
//
// Run them through scripts/test, which starts both servers (or uses the ones
// named by IDSQL_TEST_PG_DSN and IDSQL_TEST_ZK, for example from
// docker compose):
//
//	scripts/test ./integration/...
//
// Outside CI a test whose server is missing skips; with CI set it fails.
//
// # Chaos tests
//
// TestChaos (Linux only) takes issue 11's promise "never two issuers on
// one worker ID" to processes. Each holder mode that can collide has a
// subtest, run one after another: ZooKeeperSticky and ZooKeeperRecycle,
// PostgresSticky, PostgresLease and PostgresDisposable, and Local (go test
// -run 'TestChaos/Local' runs one). A test starts a private PostgreSQL (and
// ZooKeeper) of its own, builds internal/chaosproc and runs at least six
// copies of it; each inserts rows through idsql's wrapper into a table with
// a snowflake key and one with a segment key (no unique constraint, so that
// duplicates are stored and counted) and prints every key once its
// transaction committed. Then it plays, in order:
//
//   - five busy processes stopped (SIGSTOP) past their 2s session timeout
//     or lease TTL while successors take their worker IDs (ZooKeeper and
//     PostgreSQL sticky: a replacement with the same identity on "another
//     host", that is with a cache directory of its own; local: one on the
//     same host, which must wait or refuse), then continued (SIGCONT):
//     none may issue one key under the worker ID it lost. Stopping a process is also how
//     the tests expire ZooKeeper sessions (zktest has no expiry helper);
//   - sticky modes: a second process with the identity of a running one, on
//     the same host and on another, which must refuse with an error naming
//     the identity, or wait; and two processes with no identity at all,
//     which must never share a worker ID (issue 11 expects a refusal);
//   - a process killed and a successor on its worker ID started with its
//     clock behind the predecessor's last keys (0.4s, then 2s, at the
//     moment it first reads its clock), which must start above them or
//     refuse with an error about the clock;
//   - random faults: SIGKILL and restart, SIGSTOP shorter and longer than
//     the timeout, PostgreSQL and ZooKeeper restarts, new processes. Every
//     kind is played at least once (one that cannot be played when drawn
//     is tried again; the test fails if one never was), and a SIGSTOP
//     counts only once the kernel shows the process stopped. After the
//     last fault every process of the fleet, restarted and spawned ones
//     included, must issue keys of both tables again.
//
// At the end it checks that no key is stored twice, that every
// acknowledged key is stored, that no tick of a worker ID was used by two
// processes, that every snowflake key is explained (as lookup would) by a
// lease of the process that issued it, and each scenario's own promise.
// The log reports keys per process, the faults injected and what each
// scenario did.
//
// The tests must not depend on how fast a loaded machine is. They wait for
// events (a first key, a refusal, a claim gone from PostgreSQL or
// ZooKeeper, a resumed process printing again), with generous bounds,
// rather than for fixed times, and a scenario whose setting depends on
// timing checks that it was played: the pause scenario needs one stopped
// process whose worker ID went to a successor (the others are logged), and
// a process that was stopped inside a transaction holding a lock that
// claims of worker IDs wait for (a heartbeat between UPDATE and COMMIT) is
// continued for a moment and stopped again, since while it holds that lock
// no successor can claim a worker ID. Each helper connects with
// application_name chaos/<name>, so that the log can say which process's
// transaction another waits for.
//
// # Twin and clock tests
//
// TestTwin, TestClockStep and TestClockSuccessor (issue 28) run a few
// chaos helpers on the shared servers, drawing keys without inserting rows
// (-draw), with the worker table on PostgreSQL or MariaDB (-driver mysql),
// for every holder: local, postgres (sticky, and lease and disposable for
// twins), ZooKeeper sticky and etcd sticky (and recycle for twins). TestTwin starts a copy of a running process
// (same identity, its own cache directory): it must be refused with an
// error naming the holder, or get another worker ID. TestClockStep steps a
// running process's wall clock back 5s and forward 30s and slews it
// (-clock-file, re-read on SIGUSR1); TestClockSuccessor starts successors
// 10s and 60s behind the persisted horizon, which must wait and refuse.
// A step back by d must stop the stepped process for about d (d − 100ms to
// d plus a heartbeat), a forward step or a slew not at all (the 100ms rule
// below). Each checks that no key was issued twice and that a process the fault
// did not touch never paused more than 100ms, by its keys' times, beyond
// what a control process paused around the same time (a loaded machine
// stalls every process at once) and the time it noted it did not run.
// Each logs its rows of RELIABILITY.md.
//
//	CI=true go test ./integration/ -run 'Twin|Clock' -v
//
// TestChaosRedisQueue does the same for the Redis queue
// (idsql/segment/redisqueue): four or more internal/redisqproc processes
// take keys of one segment key through a private Redis and PostgreSQL while
// the test kills processes (SIGKILL) and starts new ones, restarts
// PostgreSQL, and kills Redis a moment after a SAVE, so that it reloads
// lists holding keys popped since. Each kind of fault is played at least
// once, and Redis is restarted again until a reloaded list held keys
// handed out already. No key printed by a process or still waiting in
// Redis may appear twice (a reloaded key handed out again is named as
// such), each must lie in a range of idsql_alloc_log, and most keys, over
// the run and after the last fault, must have come through Redis rather
// than the processes' fallback generators (told apart by the instance
// names of their ranges).
//
// TestEtcdChaos (etcd_test.go) runs the same helper with holder.kind etcd,
// recycle and sticky, on an etcd of its own (internal/etcdtest): a process
// killed and restarted, one stopped past its 2s lease TTL while a successor
// takes its worker ID, a twin on a live sticky identity (refused at once,
// naming the owner's pid, while the owner goes on), and etcd restarted
// under the fleet; then the same checks of the stored keys. It takes about
// 20s, both modes in parallel.
//
// Every chaos test has a control process no fault touches, and bounds the
// pauses of the processes a fault did not touch against it (three
// heartbeats beyond the control's for the inserting fleets, 100ms for the
// Redis queue's output); every kill must find its process running, and
// every server restart is proved by the server's own uptime (or Redis's
// run_id).
//
//	CI=true go test ./integration/ -run Chaos -v
//
// They take about three minutes together on two cores (each about one,
// running GOMAXPROCS at a time). Two variables change that:
//
//   - IDSQL_CHAOS_DURATION: how long each test injects random faults after
//     its scenarios, 15s by default. For a soak, give more and raise go
//     test's timeout: IDSQL_CHAOS_DURATION=10m go test -timeout 0 ...
//   - IDSQL_CHAOS_SEED: the seed of the random fault choices; each test logs
//     the one it used, so a failing sequence can be replayed.
//
// # Partition tests
//
// TestPartition puts a Toxiproxy proxy (github.com/Shopify/toxiproxy/v2,
// run inside the test process) between one of two in-process issuers and
// its coordination server, for every holder kind and mode (ZooKeeper and
// etcd, sticky and recycle; PostgreSQL and MariaDB sticky, disposable
// and lease; the local map recording to the worker table), the segment
// stores on PostgreSQL and MariaDB, and the Redis queue. Both issue keys through
// keyset.Keys; the other issuer talks to the servers directly. The faults:
// a short blackhole (packets dropped both ways, healed within the lease),
// one healed after the lease expired, connections reset, replies delayed
// by more than the lease margin, and one-way loss of replies or of
// requests. Its checker reports and asserts, per case: no key issued
// twice; the faulted issuer issued no key stamped after the fault plus the
// lease TTL while cut off (holders whose leases expire); the untouched
// issuer never paused more than 100 ms (beyond any stall of the test
// process or of the servers, which meters of their own measure); and the
// faulted issuer issued again within one TTL of healing. A case that
// missed only one of the last two (timing goals) is played up to twice
// more and fails if its last try misses too. It also reports segment keys skipped. It uses
// the shared servers (IDSQL_TEST_*), a schema, database or namespace per
// case, and takes about a minute:
//
//	CI=true go test ./integration/ -run Partition -v
//
// With IDSQL_CHAOS_DURATION it repeats every case until that much time
// has passed; the table in RELIABILITY.md came from
//
//	IDSQL_CHAOS_DURATION=10m go test ./integration/ -run Partition -v -timeout 0 -parallel 12
//
// # Quorum tests
//
// TestZooKeeperQuorum and TestEtcdQuorum (quorum_test.go) run the
// ZooKeeper and etcd holders, sticky and recycle, against a three-member
// cluster of their own on loopback (zktest.StartQuorum,
// etcdtest.StartCluster), with four in-process issuers per mode: one
// pinned to each member and one that knows all three. They play the
// leader killed (SIGKILL) and restarted, a follower cut off from the
// other members while its clients stay connected (proxies in the test
// process between the members, quorum_net_test.go), the majority lost
// for longer than a session or lease, and a rolling restart; and check
// duplicates, keys past the fencing deadline, the pauses of issuers that
// kept quorum and the recovery of those cut off (see quorum_test.go and
// RELIABILITY.md). Both take about 40s, in parallel; the full form plays
// the sequence three times:
//
//	IDSQL_QUORUM_FULL=1 CI=true go test ./integration/ -run Quorum -v
package integration
