// Package pgtest gives tests a real PostgreSQL server: the one scripts/test
// starts (or docker compose), found through IDSQL_TEST_PG_DSN. Each test gets
// a schema of its own, so tests run in parallel without seeing each other's
// tables.
//
// Without the variable a test skips with a message saying how to run it;
// with CI set, a missing or unreachable server fails the test instead.
package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/lib/pq" // the driver the tests talk through
)

// EnvDSN names the variable holding the server's DSN.
const EnvDSN = "IDSQL_TEST_PG_DSN"

// Unavailable fails the test under CI and skips it otherwise, explaining how
// to provide the missing server.
func Unavailable(t testing.TB, what string) {
	t.Helper()
	msg := what + " is not available; run the tests through scripts/test, which starts PostgreSQL, PgBouncer, MariaDB, ZooKeeper, Redis and etcd"
	if os.Getenv("CI") != "" {
		t.Fatal(msg + " (CI is set, so this is a failure)")
	}
	t.Skip(msg)
}

// BaseDSN returns the server's DSN, or stops the test when there is none.
func BaseDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		Unavailable(t, "PostgreSQL ("+EnvDSN+" unset)")
	}
	return dsn
}

var schemaSeq atomic.Int64

// WithSearchPath returns dsn (URL form) with search_path set to schema.
func WithSearchPath(t testing.TB, dsn, schema string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatalf("pgtest: %s is not a URL DSN: %v", EnvDSN, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// Schema creates an empty schema for this test, drops it when the test
// ends, and returns a DSN whose connections use it as their search_path.
func Schema(t testing.TB) string {
	t.Helper()
	base := BaseDSN(t)
	admin, err := sql.Open("postgres", base)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		Unavailable(t, fmt.Sprintf("PostgreSQL at %s (%v)", base, err))
	}
	name := fmt.Sprintf("t_%s_%d_%d", sanitize(t.Name()), os.Getpid(), schemaSeq.Add(1))
	if _, err := admin.ExecContext(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Logf("pgtest: drop schema %s: %v", name, err)
		}
	})
	return WithSearchPath(t, base, name)
}

// Open returns a connection pool on a fresh schema (see Schema) and its DSN.
func Open(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := Schema(t)
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatalf("pgtest: open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// sanitize keeps a schema-name-safe, short form of a test name.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
		if b.Len() >= 30 {
			break
		}
	}
	return b.String()
}
