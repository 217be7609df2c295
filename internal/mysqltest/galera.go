package mysqltest

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
)

// GaleraProvider is where Debian's galera-4 puts the wsrep provider.
const GaleraProvider = "/usr/lib/galera/libgalera_smm.so"

// Cluster is a MariaDB Galera cluster of this test's own: n nodes on
// loopback ports, each taking writes, state transfers by rsync.
type Cluster struct {
	t     testing.TB
	Nodes []*Server
}

// StartGalera starts a Galera cluster of n MariaDB nodes for this test
// (the first bootstraps it, the others join it by state transfer), waits
// until every node is synced with all n, and stops them when the test
// ends. It needs mariadbd (IDSQL_TEST_MYSQL_BIN), Debian's galera-4 and
// rsync; without them the test skips, or fails under CI.
func StartGalera(t testing.TB, n int) *Cluster {
	t.Helper()
	if _, err := os.Stat(GaleraProvider); err != nil {
		pgtest.Unavailable(t, "the Galera provider ("+err.Error()+"; Debian's galera-4)")
	}
	for _, tool := range []string{"rsync", "wsrep_sst_rsync"} {
		if _, err := execLookPath(tool); err != nil {
			pgtest.Unavailable(t, tool+" (Debian's rsync and mariadb-server)")
		}
	}
	ports := testproc.FreePorts(t, 3*n) // per node: its gcomm, IST and SST ports
	var peers []string
	for i := range n {
		peers = append(peers, fmt.Sprintf("127.0.0.1:%d", ports[3*i]))
	}
	c := &Cluster{t: t}
	for i := range n {
		gcomm, ist, sst := ports[3*i], ports[3*i+1], ports[3*i+2]
		extra := fmt.Sprintf(`binlog_format = ROW
innodb_autoinc_lock_mode = 2
wsrep_on = ON
wsrep_provider = %s
wsrep_cluster_name = idsql_test
wsrep_cluster_address = gcomm://%s
wsrep_node_address = 127.0.0.1
wsrep_node_name = node%d
wsrep_provider_options = "base_port=%d;gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;gcache.size=16M"
wsrep_sst_method = rsync
wsrep_sst_receive_address = 127.0.0.1:%d
`, GaleraProvider, strings.Join(peers, ","), i+1, gcomm, gcomm, ist, sst)
		s := newServer(t, nil, extra)
		if i == 0 {
			s.args = []string{"--wsrep-new-cluster"}
			s.Start()
			s.args = nil // restarted, it joins the cluster it made
			db := s.open("")
			if _, err := db.Exec("CREATE DATABASE " + serverDB); err != nil {
				t.Fatalf("mysqltest: create database %s: %v", serverDB, err)
			}
			db.Close()
		} else {
			s.Start()
		}
		c.Nodes = append(c.Nodes, s)
	}
	for _, s := range c.Nodes {
		c.WaitSynced(s, n, 60*time.Second)
	}
	return c
}

// Status returns node s's wsrep status value name ("" when it does not
// answer).
func (c *Cluster) Status(s *Server, name string) string {
	db := s.open("")
	defer db.Close()
	var k, v string
	if err := db.QueryRow("SHOW STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		return ""
	}
	return v
}

// WaitSynced waits until node s is Synced in a cluster of size nodes.
func (c *Cluster) WaitSynced(s *Server, size int, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		state, got := c.Status(s, "wsrep_local_state_comment"), c.Status(s, "wsrep_cluster_size")
		if state == "Synced" && got == fmt.Sprint(size) {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("mysqltest: Galera node on port %d: %q in a cluster of %q, not Synced in one of %d within %s\n%s",
				s.port, state, got, size, timeout, s.proc.LogTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DB returns a pool on node s's database idsql_test.
func (c *Cluster) DB(s *Server) *sql.DB { return s.open(serverDB) }
