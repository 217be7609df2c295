package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"
)

// EnvBouncer names the variable holding the address (host:port) of the
// PgBouncer that scripts/servers runs in transaction mode before the
// server of EnvDSN.
const EnvBouncer = "IDSQL_TEST_PGBOUNCER"

// Bouncer creates a database of its own for this test on the server of
// EnvDSN, dropped when the test ends, and returns a pool connected to it
// directly and the DSN that reaches it through PgBouncer in transaction
// mode. It is a database, not a schema as Open gives: PgBouncer does not
// pass a DSN's search_path on, and maps every database name (*) to the
// server's database of that name.
func Bouncer(t testing.TB) (direct *sql.DB, bouncerDSN string) {
	t.Helper()
	base := BaseDSN(t)
	addr := os.Getenv(EnvBouncer)
	if addr == "" {
		Unavailable(t, "PgBouncer ("+EnvBouncer+" unset)")
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		Unavailable(t, fmt.Sprintf("PostgreSQL at %s (%v)", base, err))
	}
	name := fmt.Sprintf("b_%s_%d_%d", sanitize(t.Name()), os.Getpid(), schemaSeq.Add(1))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database %s: %v", name, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL DSN: %v", EnvDSN, err)
	}
	u.Path = "/" + name
	direct, err = sql.Open("postgres", u.String())
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() {
		direct.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// FORCE ends PgBouncer's server connections to it too.
		if _, err := admin.ExecContext(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	u.Host = addr
	return direct, u.String()
}
