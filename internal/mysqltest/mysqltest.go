package mysqltest

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

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/internal/pgtest"
)

// EnvDSN names the variable holding the server's DSN.
const EnvDSN = "IDSQL_TEST_MYSQL_DSN"

// BaseDSN returns the server's DSN, or stops the test when there is none.
func BaseDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv(EnvDSN)
	if dsn == "" {
		pgtest.Unavailable(t, "MySQL ("+EnvDSN+" unset)")
	}
	return dsn
}

var dbSeq atomic.Int64

// Database creates an empty database for this test, drops it when the test
// ends, and returns a DSN whose connections use it.
func Database(t testing.TB) string {
	t.Helper()
	base := BaseDSN(t)
	cfg := config(t, base)
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		t.Fatalf("mysqltest: %s: %v", EnvDSN, err)
	}
	admin := sql.OpenDB(conn)
	t.Cleanup(func() { admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := admin.PingContext(ctx); err != nil {
		// The address only: the DSN holds a password.
		pgtest.Unavailable(t, fmt.Sprintf("MySQL at %s (%v)", cfg.Addr, err))
	}
	name := fmt.Sprintf("t_%s_%d_%d", sanitize(t.Name()), os.Getpid(), dbSeq.Add(1))
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatalf("mysqltest: create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			t.Logf("mysqltest: drop database %s: %v", name, err)
		}
	})
	cfg = config(t, base)
	cfg.DBName = name
	return cfg.FormatDSN()
}

// Open returns a connection pool on a fresh database (see Database) and its
// DSN.
func Open(t testing.TB) (*sql.DB, string) {
	t.Helper()
	dsn := Database(t)
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatalf("mysqltest: open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db, dsn
}

// config parses dsn and turns on parseTime unless dsn sets it either way.
func config(t testing.TB, dsn string) *mysql.Config {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("mysqltest: %s: %v", EnvDSN, err)
	}
	if !hasParam(dsn, "parseTime") {
		cfg.ParseTime = true
	}
	return cfg
}

// hasParam reports whether the DSN's parameters (after the '?' that follows
// the database name) name key.
func hasParam(dsn, key string) bool {
	rest := dsn[strings.LastIndexByte(dsn, '/')+1:]
	_, params, ok := strings.Cut(rest, "?")
	if !ok {
		return false
	}
	q, _ := url.ParseQuery(params) // what parses, even if some does not
	return q.Has(key)
}

// sanitize keeps a database-name-safe, short form of a test name: MySQL
// names have at most 64 characters, and a pid and a counter follow.
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(name) {
		if b.Len() == 30 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}
