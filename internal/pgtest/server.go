package pgtest

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/testproc"
	"github.com/idsql/idsql/internal/tlstest"
)

// EnvBin names the variable holding the directory of initdb and postgres.
const EnvBin = "IDSQL_TEST_PG_BIN"

// startTimeout bounds how long Start waits for the server to accept
// connections (crash recovery after a kill included).
const startTimeout = 60 * time.Second

// Server is a throw-away PostgreSQL owned by one test, for tests that stop
// and restart the database mid-run. Its data survives Stop and Start (same
// port, same DSN); everything is removed when the test ends. Call Stop and
// Start from the test's goroutine: they end the test on failure.
//
// Run as root, the server runs as the postgres user (PostgreSQL refuses to
// run as root), like `runuser -u postgres` in scripts/servers.
type Server struct {
	t    testing.TB
	bin  string
	dir  string // holds data/ and log
	port int
	cred *syscall.Credential // nil unless we are root
	proc *testproc.Proc
	tls  *tlstest.Files // set by StartTLSServer: only TLS with a client certificate gets in
}

// StartServer initializes and starts a PostgreSQL server of its own for this
// test on a free loopback port (trust authentication, fsync off), and stops
// it and removes its files when the test ends. It needs the server binaries
// in IDSQL_TEST_PG_BIN; without them the test skips, or fails under CI.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, nil)
}

// StartTLSServer is StartServer for a server that takes only TLS
// connections authenticated by a client certificate of files' authority
// (pg_hba: hostssl ... cert; anything else rejected), its own certificate
// being files' server certificate. DSN then asks for verify-full with
// files' client certificate of postgres.
func StartTLSServer(t testing.TB, files *tlstest.Files) *Server {
	t.Helper()
	return startServer(t, files)
}

func startServer(t testing.TB, files *tlstest.Files) *Server {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		Unavailable(t, "a directory of PostgreSQL server binaries ("+EnvBin+" unset)")
	}
	for _, tool := range []string{"initdb", "postgres"} {
		if _, err := os.Stat(filepath.Join(bin, tool)); err != nil {
			Unavailable(t, "a directory of PostgreSQL server binaries ("+err.Error()+")")
		}
	}
	s := &Server{t: t, bin: bin, port: testproc.FreePorts(t, 1)[0], tls: files}
	var err error
	if os.Geteuid() == 0 {
		s.cred, err = postgresUser()
		if err != nil {
			t.Fatalf("pgtest: running as root, the server must run as the postgres user: %v", err)
		}
	}
	s.dir = testproc.ServerDir(t, "idsql-pgtest-")
	s.proc = testproc.New("PostgreSQL", s.dir)
	s.initdb()
	t.Cleanup(s.Stop)
	s.Start()
	return s
}

// DSN returns the URL-form DSN of the server's postgres database: without
// TLS, or for a StartTLSServer, with verify-full and the client
// certificate of postgres.
func (s *Server) DSN() string {
	if s.tls != nil {
		return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=verify-full&sslrootcert=%s&sslcert=%s&sslkey=%s",
			s.port, url.QueryEscape(s.tls.CA), url.QueryEscape(s.tls.ClientCert), url.QueryEscape(s.tls.ClientKey))
	}
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

// Start starts the server (again) and waits until it accepts connections.
// Starting a running server does nothing.
func (s *Server) Start() {
	s.t.Helper()
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", filepath.Join(s.dir, "data"))
	cmd.Dir = s.dir
	open := func() (*sql.DB, error) { return sql.Open("postgres", s.DSN()) }
	if err := s.proc.StartDB(cmd, s.cred, open, startTimeout); err != nil {
		s.t.Fatalf("pgtest: PostgreSQL on port %d: %v", s.port, err)
	}
}

// Stop shuts the server down (fast shutdown: open sessions are ended,
// SIGKILL after 30s) and waits until it has exited. Stopping a stopped
// server does nothing.
func (s *Server) Stop() {
	s.proc.Stop(syscall.SIGINT, 30*time.Second)
}

// Crash shuts the server down as a crash would (immediate shutdown,
// SIGQUIT: no checkpoint, sessions dropped) and waits until it has exited;
// the next Start recovers from the WAL.
func (s *Server) Crash() {
	s.proc.Stop(syscall.SIGQUIT, 30*time.Second)
}

func (s *Server) initdb() {
	s.t.Helper()
	data := filepath.Join(s.dir, "data")
	if s.cred != nil {
		if err := os.Chown(s.dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			s.t.Fatalf("pgtest: %v", err)
		}
	}
	cmd := exec.Command(filepath.Join(s.bin, "initdb"),
		"-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("pgtest: initdb: %v\n%s", err, out)
	}
	conf := fmt.Sprintf(`
# written by pgtest.StartServer: a throw-away test server
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = ''
max_connections = 100
shared_buffers = 32MB
fsync = off
synchronous_commit = off
full_page_writes = off
`, s.port)
	if s.tls != nil {
		for name, from := range map[string]string{"server.pem": s.tls.ServerCert, "server.key": s.tls.ServerKey, "ca.pem": s.tls.CA} {
			s.copyToData(from, name)
		}
		conf += "ssl = on\nssl_cert_file = 'server.pem'\nssl_key_file = 'server.key'\nssl_ca_file = 'ca.pem'\n"
		s.writeData("pg_hba.conf", "# written by pgtest.StartTLSServer\nhostssl all all 127.0.0.1/32 cert\nhost all all 127.0.0.1/32 reject\n", false)
	}
	s.writeData("postgresql.conf", conf, true)
}

// writeData writes (or appends to) a file of the data directory, owned by
// the server's user.
func (s *Server) writeData(name, text string, appendTo bool) {
	s.t.Helper()
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if appendTo {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	path := filepath.Join(s.dir, "data", name)
	f, err := os.OpenFile(path, flags, 0o600)
	if err == nil {
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil && s.cred != nil {
		err = os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
	}
	if err != nil {
		s.t.Fatalf("pgtest: %s: %v", name, err)
	}
}

// copyToData copies file from into the data directory as name.
func (s *Server) copyToData(from, name string) {
	s.t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
	s.writeData(name, string(b), false)
}

// postgresUser returns the credential of the postgres system user.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// StartStandby copies s with pg_basebackup and starts the copy as a
// streaming standby of s on a port of its own, stopped and removed when
// the test ends. With sync, s waits for the standby's flush before it
// acknowledges a commit (synchronous_standby_names names it, and s's
// synchronous_commit is on for every transaction, not only idsql's); s
// must be running.
func (s *Server) StartStandby(sync bool) *Server {
	s.t.Helper()
	r := &Server{t: s.t, bin: s.bin, cred: s.cred, port: testproc.FreePorts(s.t, 1)[0]}
	r.dir = testproc.ServerDir(s.t, "idsql-pgtest-standby-")
	r.proc = testproc.New("PostgreSQL standby", r.dir)
	if r.cred != nil {
		if err := os.Chown(r.dir, int(r.cred.Uid), int(r.cred.Gid)); err != nil {
			s.t.Fatalf("pgtest: %v", err)
		}
	}
	data := filepath.Join(r.dir, "data")
	cmd := exec.Command(filepath.Join(s.bin, "pg_basebackup"), "-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(s.port),
		"-U", "postgres", "-X", "stream", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	cmd.Dir = r.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("pgtest: pg_basebackup: %v\n%s", err, out)
	}
	conf := fmt.Sprintf("\n# written by pgtest.StartStandby\nport = %d\nhot_standby = on\n", r.port)
	auto := fmt.Sprintf("primary_conninfo = 'host=127.0.0.1 port=%d user=postgres application_name=standby'\n", s.port)
	for name, text := range map[string]string{"postgresql.conf": conf, "postgresql.auto.conf": auto, "standby.signal": ""} {
		f, err := os.OpenFile(filepath.Join(data, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err == nil {
			_, err = f.WriteString(text)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil && r.cred != nil {
			err = os.Chown(filepath.Join(data, name), int(r.cred.Uid), int(r.cred.Gid))
		}
		if err != nil {
			s.t.Fatalf("pgtest: standby %s: %v", name, err)
		}
	}
	s.t.Cleanup(r.Stop)
	r.Start()
	if sync {
		// After the copy, so that the standby, once promoted, does not
		// wait for a standby of its own, as a failover tool would see to.
		s.exec("ALTER SYSTEM SET synchronous_standby_names = 'standby'", "ALTER SYSTEM SET synchronous_commit = 'on'", "SELECT pg_reload_conf()")
	}
	return r
}

// Promote promotes a standby to a primary and waits until it takes
// writes (pg_promote, up to a minute).
func (s *Server) Promote() {
	s.t.Helper()
	s.exec("SELECT pg_promote(true, 60)")
}

// exec runs statements on the server's postgres database as postgres.
func (s *Server) exec(stmts ...string) {
	s.t.Helper()
	db, err := sql.Open("postgres", s.DSN())
	if err != nil {
		s.t.Fatalf("pgtest: %v", err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			s.t.Fatalf("pgtest: %s: %v", q, err)
		}
	}
}
