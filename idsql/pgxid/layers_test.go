package pgxid

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoWrapper checks that a program on pgx links neither the
// database/sql wrapper (package idsql) nor sqlx: pgxid builds on keyset
// and the engine only.
func TestLinksNoWrapper(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/idsql/idsql/idsql/pgxid").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list -deps named %d packages:\n%s", len(deps), out)
	}
	for _, d := range deps {
		if d == "github.com/idsql/idsql/idsql" || strings.HasPrefix(d, "github.com/jmoiron/sqlx") {
			t.Errorf("idsql/pgxid depends on %s", d)
		}
	}
}
