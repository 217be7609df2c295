package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/testproc"
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

// EnvBouncerBin names the variable holding a pgbouncer executable to use
// instead of Debian's (scripts/servers reads it too).
const EnvBouncerBin = "IDSQL_TEST_PGBOUNCER_BIN"

// BouncerProc is a PgBouncer of one test's own in transaction mode before
// a Server of the test's, for tests that move it to another server as an
// operator's failover does (Repoint). It stops when the test ends.
type BouncerProc struct {
	t    testing.TB
	dir  string
	port int
	cred *syscall.Credential
	proc *testproc.Proc
}

// StartBouncer starts a PgBouncer in transaction mode (every database,
// trust authentication, as scripts/servers runs it) before s, and waits
// until a query through it reaches s. It tries a server it failed to
// reach again after 1 s (server_login_retry; PgBouncer's default of 15 s
// holds every client that long after a failover's Repoint).
func (s *Server) StartBouncer() *BouncerProc {
	s.t.Helper()
	bin := os.Getenv(EnvBouncerBin)
	if bin == "" {
		var err error
		if bin, err = exec.LookPath("pgbouncer"); err != nil {
			if bin, err = exec.LookPath("/usr/sbin/pgbouncer"); err != nil {
				Unavailable(s.t, "pgbouncer (Debian's package, or "+EnvBouncerBin+")")
			}
		}
	}
	b := &BouncerProc{t: s.t, dir: testproc.ServerDir(s.t, "idsql-pgbouncer-"), port: testproc.FreePorts(s.t, 1)[0], cred: s.cred}
	if err := os.WriteFile(filepath.Join(b.dir, "users"), []byte(`"postgres" ""`+"\n"), 0o644); err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
	b.configure(s)
	b.proc = testproc.New("PgBouncer", b.dir)
	s.t.Cleanup(func() { b.proc.Stop(syscall.SIGINT, 10*time.Second) })
	// PgBouncer refuses to run as root: as the server, it runs as postgres.
	if _, err := b.proc.Start(exec.Command(bin, filepath.Join(b.dir, "pgbouncer.ini")), b.cred); err != nil {
		s.t.Fatalf("pgtest: start pgbouncer: %v", err)
	}
	b.waitServing(s)
	return b
}

// configure writes the configuration that pools to s.
func (b *BouncerProc) configure(s *Server) {
	b.t.Helper()
	ini := fmt.Sprintf(`[databases]
* = host=127.0.0.1 port=%d
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = %d
unix_socket_dir =
auth_type = trust
auth_file = %s
pool_mode = transaction
max_client_conn = 500
default_pool_size = 20
ignore_startup_parameters = extra_float_digits
admin_users = postgres
server_login_retry = 1
`, s.port, b.port, filepath.Join(b.dir, "users"))
	if err := os.WriteFile(filepath.Join(b.dir, "pgbouncer.ini"), []byte(ini), 0o644); err != nil {
		b.t.Fatalf("pgtest: %v", err)
	}
}

// DSN returns the DSN of the postgres database through the pooler.
func (b *BouncerProc) DSN() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", b.port)
}

// Repoint moves the pooler to s, as an operator does after promoting a
// standby: it rewrites the configuration, has PgBouncer reload it
// (RELOAD on its admin console) and waits until a query through it
// reaches s.
func (b *BouncerProc) Repoint(s *Server) {
	b.t.Helper()
	b.configure(s)
	admin, err := sql.Open("postgres", fmt.Sprintf("postgres://postgres@127.0.0.1:%d/pgbouncer?sslmode=disable", b.port))
	if err != nil {
		b.t.Fatalf("pgtest: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("RELOAD"); err != nil { // the console speaks the simple protocol only: no arguments
		b.t.Fatalf("pgtest: PgBouncer RELOAD: %v", err)
	}
	b.waitServing(s)
}

// waitServing waits until a query through the pooler runs on s.
func (b *BouncerProc) waitServing(s *Server) {
	b.t.Helper()
	db, err := sql.Open("postgres", b.DSN())
	if err != nil {
		b.t.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	var port int
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = db.QueryRowContext(ctx, "SELECT inet_server_port()").Scan(&port)
		cancel()
		if err == nil && port == s.port {
			return
		}
		if exited, werr := b.proc.Exited(); exited {
			b.t.Fatalf("pgtest: PgBouncer exited (%v)\n%s", werr, b.proc.LogTail())
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("pgtest: PgBouncer on port %d did not reach PostgreSQL on port %d within %s: port %d, %v\n%s",
				b.port, s.port, startTimeout, port, err, b.proc.LogTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
