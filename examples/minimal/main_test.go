package main

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/pgtest"
)

func TestRun(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	var out bytes.Buffer
	if err := run(context.Background(), dsn, &out); err != nil {
		t.Fatal(err)
	}
	id, err := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	if err != nil {
		t.Fatalf("printed %q: %v", out.String(), err)
	}
	var n int
	if err := raw.QueryRow("SELECT count(*) FROM orders WHERE id = $1", id).Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows with id %d: %d, %v; want 1", id, n, err)
	}
}

// The minimal program links none of the optional kinds' dependencies.
func TestLinksNoOptionalKind(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps listed %d packages: %q", len(deps), out)
	}
	for _, p := range deps {
		for _, banned := range []string{"github.com/go-zookeeper/zk", "github.com/redis/go-redis", "github.com/go-sql-driver/mysql"} {
			if p == banned || strings.HasPrefix(p, banned+"/") {
				t.Errorf("the minimal program links %s", p)
			}
		}
	}
}
