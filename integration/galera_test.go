package integration

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/go-sql-driver/mysql"
	"github.com/rs/zerolog"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/mysqltest"
)

// TestGaleraCluster runs idsql on a three-node MariaDB Galera cluster.
// A Galera cluster can lose one of two concurrent updates of a row made on
// different nodes (its certification does not catch every one), so a
// process that claims worker IDs or allocates segment ranges on a Galera
// node without holder.one_writer_node is refused, having written nothing.
// With it, six processes, two on each node, insert their rows on their
// node while their worker leases (worker table, kind mysql) and segment
// ranges (idsql_alloc) go through one switch (KeysOptions.DB), a proxy
// that sends every connection to node 1, the writer node. Node 1 is killed
// (SIGKILL), the switch moves to node 2 at once, as a proxy with one
// writer node does, and node 1 rejoins. It asserts that no two processes
// held a worker ID at once, that no key was acknowledged twice, that every
// acknowledged row is in the cluster, that the fault happened (the cluster
// shrank to two, then grew back), that the processes on nodes 2 and 3
// issued again once the cluster had evicted node 1, pausing no longer than
// that, and that those on node 1 issued after it rejoined.
func TestGaleraCluster(t *testing.T) {
	cluster := mysqltest.StartGalera(t, 3)
	n1 := cluster.DB(cluster.Nodes[0])
	defer n1.Close()
	ctx := context.Background()
	for _, q := range []string{"CREATE TABLE orders (id BIGINT PRIMARY KEY, src VARCHAR(20), n INT)", "CREATE TABLE users (id BIGINT PRIMARY KEY, src VARCHAR(20), n INT)"} {
		if _, err := n1.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	cfgFor := func(instance string, oneWriter bool) *keyset.Config {
		cfg, err := keyset.Parse("galera.yaml", []byte(fmt.Sprintf("namespace: galera\n"+
			"holder: {kind: mysql, mode: sticky, instance: %s, accept_lazy_commits: true, one_writer_node: %v}\n"+
			"tables:\n  orders: {strategy: snowflake}\n  users: {strategy: segment, step: 5}\n", instance, oneWriter)), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	if err := idsql.Migrate(ctx, n1, cfgFor("admin", false)); err != nil {
		t.Fatal(err)
	}
	// Database-side defaults take node-local locks: refused on a cluster.
	err := idsql.MigrateWith(ctx, n1, cfgFor("admin", false), idsql.MigrateOptions{DBDefaults: true})
	if !errors.Is(err, idsql.ErrNoDBDefault) || !strings.Contains(err.Error(), "a Galera cluster (wsrep_on = ON)") {
		t.Errorf("database defaults on a Galera node: %v; want ErrNoDBDefault naming the cluster", err)
	}

	// Without one_writer_node, a claim and an allocation on a node are
	// refused, naming the setting, and write no row.
	lone, err := idsql.Open("mysql", cluster.Nodes[1].DSN(), cfgFor("lone", false), idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for table, sentinel := range map[string]error{"orders": registry.ErrMultiWriter, "users": segment.ErrMultiWriter} {
		_, err := lone.ExecContext(ctx, "INSERT INTO "+table+" (src, n) VALUES ('lone', 0)")
		if !errors.Is(err, sentinel) || !strings.Contains(err.Error(), "one_writer_node") || !strings.Contains(err.Error(), "Galera") {
			t.Errorf("insert into %s on a Galera node without one_writer_node: %v; want %v naming the cluster and one_writer_node", table, err, sentinel)
		}
	}
	lone.Close()
	for _, q := range []string{"SELECT COUNT(*) FROM orders", "SELECT COUNT(*) FROM users", "SELECT COUNT(*) FROM idsql_workers", "SELECT COUNT(*) FROM idsql_alloc_log"} {
		var n int
		if err := n1.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatal(err)
		} else if n != 0 {
			t.Errorf("%s after the refused inserts: %d; want 0", q, n)
		}
	}

	// The switch: every process's leases and ranges go to the writer node.
	addrOf := func(s *mysqltest.Server) string {
		c, err := mysql.ParseDSN(s.DSN())
		if err != nil {
			t.Fatal(err)
		}
		return c.Addr
	}
	toxi := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	writerSwitch := toxiproxy.NewProxy(toxi, "galera-writer", "127.0.0.1:0", addrOf(cluster.Nodes[0]))
	if err := writerSwitch.Start(); err != nil {
		t.Fatal(err)
	}
	defer writerSwitch.Stop()
	c, err := mysql.ParseDSN(cluster.Nodes[0].DSN())
	if err != nil {
		t.Fatal(err)
	}
	c.Addr = writerSwitch.Listen
	c.Timeout = time.Second // not a tolerance: the dial timeout, so a connection to the killed node fails at once and the writer tries again; no check reads it
	switchDSN := c.FormatDSN()

	type writer struct {
		name string
		node int // where its rows go; its leases and ranges go through the switch
		mu   sync.Mutex
		keys map[string][]int64
		acks []time.Time
		errs []string
	}
	stop := make(chan struct{})
	stopWriters := sync.OnceFunc(func() { close(stop) })
	defer stopWriters() // also when the test stops early
	var wg sync.WaitGroup
	var writers []*writer
	for i := range 6 {
		w := &writer{name: fmt.Sprintf("w%d", i), node: i % 3, keys: map[string][]int64{}}
		writers = append(writers, w)
		records, err := sql.Open("mysql", switchDSN)
		if err != nil {
			t.Fatal(err)
		}
		defer records.Close()
		c, err := mysql.ParseDSN(cluster.Nodes[w.node].DSN())
		if err != nil {
			t.Fatal(err)
		}
		c.Timeout = time.Second // not a tolerance: the dial timeout, so a connection to the killed node fails at once and the writer tries again; no check reads it
		db, err := idsql.Open("mysql", c.FormatDSN(), cfgFor(w.name, true), idsql.Options{KeysOptions: keyset.KeysOptions{DB: records}})
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				table := []string{"orders", "users"}[n%2]
				cctx, cancel := context.WithTimeout(ctx, 5*time.Second) // not a tolerance: a statement's deadline, so a writer whose node died tries again; no check reads it
				res, err := db.ExecContext(cctx, "INSERT INTO "+table+" (src, n) VALUES (?, ?)", w.name, n)
				cancel()
				w.mu.Lock()
				if err != nil {
					if msg := err.Error(); len(w.errs) == 0 || !strings.HasSuffix(w.errs[len(w.errs)-1], msg) {
						w.errs = append(w.errs, time.Now().Format("15:04:05.000 ")+msg)
					}
					w.mu.Unlock()
					time.Sleep(50 * time.Millisecond)
					continue
				}
				id, _ := res.LastInsertId()
				w.keys[table] = append(w.keys[table], id)
				w.acks = append(w.acks, time.Now())
				w.mu.Unlock()
			}
		}()
	}
	time.Sleep(time.Second)
	killed := time.Now()
	cluster.Nodes[0].Crash()
	// The switch moves to node 2 at once; its commits wait until the
	// cluster has evicted node 1.
	if err := writerSwitch.Update(&toxiproxy.Proxy{Listen: writerSwitch.Listen, Upstream: addrOf(cluster.Nodes[1]), Enabled: true}); err != nil {
		t.Fatal(err)
	}
	shrunk := ""
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if shrunk = cluster.Status(cluster.Nodes[1], "wsrep_cluster_size"); shrunk == "2" {
			break
		}
	}
	if shrunk != "2" {
		t.Fatalf("the cluster's size %q 30 s after node 1 was killed; want 2", shrunk)
	}
	evicted := time.Now()
	cluster.Nodes[0].Start()
	cluster.WaitSynced(cluster.Nodes[0], 3, 60*time.Second)
	rejoined := time.Now()
	time.Sleep(time.Second)
	stopWriters()
	wg.Wait()
	t.Logf("node 1 killed at %s, the cluster down to 2 %s later, node 1 synced again %s after the kill",
		killed.Format("15:04:05.000"), evicted.Sub(killed).Round(time.Millisecond), rejoined.Sub(killed).Round(time.Millisecond))

	// Causal reads (wsrep_sync_wait on every connection): node 2 waits
	// until it has applied every write set committed before the query.
	c, err = mysql.ParseDSN(cluster.Nodes[1].DSN())
	if err != nil {
		t.Fatal(err)
	}
	c.Params = map[string]string{"wsrep_sync_wait": "1"}
	causal, err := sql.Open("mysql", c.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer causal.Close()
	for _, table := range []string{"orders", "users"} {
		acked := map[string][]int64{}
		for _, w := range writers {
			acked[w.name] = w.keys[table]
		}
		checkAcked(t, table, acked, storedKeys(t, causal, table), "in the cluster")
	}
	var overlaps []string
	rows, err := causal.QueryContext(ctx, `SELECT a.worker_id, a.instance, b.instance FROM idsql_workers a JOIN idsql_workers b
ON a.namespace = b.namespace AND a.worker_id = b.worker_id AND a.lease_id < b.lease_id
AND a.started < COALESCE(b.released, b.expires, NOW(6)) AND b.started < COALESCE(a.released, a.expires, NOW(6))`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var worker int64
		var a, b string
		rows.Scan(&worker, &a, &b)
		overlaps = append(overlaps, fmt.Sprintf("worker %d: %s and %s", worker, a, b))
	}
	rows.Close()
	if len(overlaps) > 0 {
		t.Errorf("leases held at once: %s", strings.Join(overlaps, "; "))
	}
	// The worker table as the cluster holds it, for a failed run: which
	// identity held which worker ID when. (Deferred: it runs before
	// causal closes, once every check below has run.)
	defer func() {
		if !t.Failed() {
			return
		}
		rows, err := causal.QueryContext(ctx, `SELECT lease_id, worker_id, table_name, instance, started, COALESCE(released, expires), holder_kind
FROM idsql_workers ORDER BY worker_id, lease_id`)
		if err != nil {
			t.Logf("idsql_workers: %v", err)
			return
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var lease, worker int64
			var table, instance, started, ended, kind sql.NullString
			if err := rows.Scan(&lease, &worker, &table, &instance, &started, &ended, &kind); err != nil {
				t.Logf("idsql_workers: %v", err)
				return
			}
			fmt.Fprintf(&b, "\n  lease %d worker %d %s@%s %s..%s (%s)", lease, worker, table.String, instance.String, started.String, ended.String, kind.String)
		}
		t.Logf("idsql_workers:%s", b.String())
	}()
	for _, w := range writers {
		from := killed
		if w.node == 0 {
			from = rejoined
		}
		after := 0
		for _, a := range w.acks {
			if !a.Before(from) {
				after++
			}
		}
		var longest time.Duration
		for i := 1; i < len(w.acks); i++ {
			if w.acks[i].After(killed) {
				longest = max(longest, w.acks[i].Sub(w.acks[i-1]))
			}
		}
		t.Logf("%s on node %d: %d orders, %d users acknowledged, %d after %s; longest pause from the kill %s; errors:\n%s", w.name, w.node+1,
			len(w.keys["orders"]), len(w.keys["users"]), after, from.Format("15:04:05.000"), longest, strings.Join(w.errs, "\n"))
		if after == 0 {
			t.Errorf("%s on node %d acknowledged nothing after %s", w.name, w.node+1, from.Format("15:04:05.000"))
		}
		// A surviving node's process waits while the cluster suspects the
		// killed node (commits need every member's certification) and no
		// longer: not for the rejoin, its state transfer included.
		if evict := evicted.Sub(killed); w.node != 0 && longest > evict+failoverResume {
			t.Errorf("%s on node %d paused %s after the kill, more than the %s until the cluster evicted node 1 and %s",
				w.name, w.node+1, longest.Round(time.Millisecond), evict.Round(time.Millisecond), failoverResume)
		}
	}
}
