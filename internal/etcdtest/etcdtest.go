package etcdtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/idsql/idsql/internal/pgtest"
)

// EnvAddr names the variable holding the shared server's client address.
const EnvAddr = "IDSQL_TEST_ETCD"

// checkTimeout bounds the health check and the clean-up.
const checkTimeout = 5 * time.Second

var seq atomic.Int64

// Endpoints returns the shared server's endpoints after checking that it
// reports itself healthy, or stops the test when there is none.
func Endpoints(t testing.TB) []string {
	t.Helper()
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		pgtest.Unavailable(t, "etcd ("+EnvAddr+" unset)")
	}
	if err := health(addr); err != nil {
		pgtest.Unavailable(t, fmt.Sprintf("etcd at %s (%v)", addr, err))
	}
	return []string{addr}
}

// Prefix returns the shared server's endpoints and a key prefix of this
// test's own, whose keys are deleted when the test ends.
func Prefix(t testing.TB) ([]string, string) {
	t.Helper()
	endpoints := Endpoints(t)
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	prefix := fmt.Sprintf("/idsql-test/%s-%d-%d", name, os.Getpid(), seq.Add(1))
	deleteAtEnd(t, endpoints, prefix)
	return endpoints, prefix
}

// Namespace returns the shared server's endpoints and an idsql namespace
// of this test's own, for holders under the default key prefix (/idsql),
// such as those idsql makes from a configuration; the namespace's keys
// are deleted when the test ends.
func Namespace(t testing.TB) ([]string, string) {
	t.Helper()
	endpoints := Endpoints(t)
	ns := fmt.Sprintf("test%d-%d", os.Getpid(), seq.Add(1))
	deleteAtEnd(t, endpoints, "/idsql/"+ns)
	return endpoints, ns
}

// deleteAtEnd deletes the keys under prefix/ when the test ends.
func deleteAtEnd(t testing.TB, endpoints []string, prefix string) {
	t.Cleanup(func() {
		cli := Client(t, endpoints)
		ctx, cancel := context.WithTimeout(context.Background(), checkTimeout)
		defer cancel()
		if _, err := cli.Delete(ctx, prefix+"/", clientv3.WithPrefix()); err != nil {
			t.Errorf("etcdtest: delete %s/: %v", prefix, err)
		}
	})
}

// Client returns a client of endpoints, closed when the test ends.
func Client(t testing.TB, endpoints []string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: checkTimeout, Logger: zap.NewNop()})
	if err != nil {
		t.Fatalf("etcdtest: client for %v: %v", endpoints, err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// health asks the member's /health endpoint, which says true once the
// cluster has a leader.
func health(addr string) error {
	c := http.Client{Timeout: checkTimeout}
	resp, err := c.Get("http://" + addr + "/health")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), `"health":"true"`) {
		return fmt.Errorf("/health answered %s %q", resp.Status, b)
	}
	return nil
}
