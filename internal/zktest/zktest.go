package zktest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idsql/idsql/internal/pgtest"
)

// Environment variables read by this package; scripts/test sets them.
const (
	// EnvServers holds the shared server list, "host:port[,host:port...]".
	EnvServers = "IDSQL_TEST_ZK"
	// EnvClasspath holds the java classpath that runs a ZooKeeper server.
	EnvClasspath = "IDSQL_TEST_ZK_CLASSPATH"
)

// ChrootBase is the node under which Chroot creates per-test trees.
const ChrootBase = "/idsql-test"

// Servers returns the shared ZooKeeper servers from IDSQL_TEST_ZK, after
// checking that at least one accepts connections. Without them the test
// skips, or fails when CI is set.
func Servers(t testing.TB) []string {
	t.Helper()
	raw := os.Getenv(EnvServers)
	var servers []string
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		pgtest.Unavailable(t, "ZooKeeper ("+EnvServers+" unset)")
	}
	var errs []string
	for _, s := range servers {
		c, err := net.DialTimeout("tcp", s, 5*time.Second)
		if err == nil {
			c.Close()
			return servers
		}
		errs = append(errs, err.Error())
	}
	pgtest.Unavailable(t, fmt.Sprintf("ZooKeeper at %s (%s)", raw, strings.Join(errs, "; ")))
	return nil
}

var chrootSeq atomic.Int64

// Chroot returns the shared servers and a fresh, empty node path for this
// test (created, and deleted with everything under it when the test ends).
// Use it as the chroot or path prefix of whatever the test connects.
func Chroot(t testing.TB) (servers []string, chroot string) {
	t.Helper()
	servers = Servers(t)
	chroot = fmt.Sprintf("%s/%s-%d-%d", ChrootBase, sanitize(t.Name()), os.Getpid(), chrootSeq.Add(1))
	conn := connect(t, servers)
	defer conn.Close()
	for _, p := range []string{ChrootBase, chroot} {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("zktest: create %s: %v", p, err)
		}
	}
	t.Cleanup(func() {
		conn := connect(t, servers)
		defer conn.Close()
		if err := deleteTree(conn, chroot); err != nil {
			t.Logf("zktest: delete %s: %v", chroot, err)
		}
	})
	return servers, chroot
}

// connect opens a session and waits until it is established.
func connect(t testing.TB, servers []string) *zk.Conn {
	t.Helper()
	conn, events, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("zktest: connect %v: %v", servers, err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				return conn
			}
		case <-deadline:
			conn.Close()
			pgtest.Unavailable(t, fmt.Sprintf("ZooKeeper at %v (no session within 30s)", servers))
			return nil
		}
	}
}

// deleteTree deletes p and everything under it; a missing node is fine.
func deleteTree(conn *zk.Conn, p string) error {
	children, _, err := conn.Children(p)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range children {
		if err := deleteTree(conn, path.Join(p, c)); err != nil {
			return err
		}
	}
	if err := conn.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	return nil
}

// quiet drops the client's log lines, which would otherwise go to stderr
// (or to t.Logf after the test has ended, which panics).
type quiet struct{}

func (quiet) Printf(string, ...any) {}

// sanitize keeps a node-name-safe, short form of a test name.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		if b.Len() >= 40 {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
