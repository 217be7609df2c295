package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/etcdtest"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestEtcdServe runs `idsql serve` with holder.kind etcd, the
// configuration the issue names, and takes snowflake IDs.
func TestEtcdServe(t *testing.T) {
	endpoints, ns := etcdtest.Namespace(t)
	_, dsn := pgtest.Open(t)
	cfgPath := writeConfig(t, fmt.Sprintf(`namespace: %s
holder: {kind: etcd, endpoints: [%s], mode: recycle}
tables:
  orders: {strategy: snowflake}
`, ns, strings.Join(endpoints, ", ")))
	serveAndGet(t, []string{"--config", cfgPath, "--dsn", dsn, "--migrate"},
		"/api/snowflake/get/orders", "/healthz")
}
