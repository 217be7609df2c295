package mysqltest

import (
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/testproc"
	"github.com/idsql/idsql/internal/tlstest"
)

// EnvBin names the variable holding the path of the MariaDB server
// executable (mariadbd); mariadb-install-db is looked for beside it, then
// in PATH.
const EnvBin = "IDSQL_TEST_MYSQL_BIN"

// serverDB is the database that Server.DSN names.
const serverDB = "idsql_test"

// startTimeout bounds how long Start waits for the server to accept
// connections (InnoDB's crash recovery after Crash included).
const startTimeout = 60 * time.Second

// Server is a throw-away MariaDB owned by one test, for tests that crash
// and restart the database mid-run. Its data survives Crash and Start (same
// port, same DSN); everything is removed when the test ends. Call Stop,
// Crash and Start from the test's goroutine: they end the test on failure.
//
// Run as root, the server runs as the mysql user (mariadbd --user=mysql),
// as in scripts/servers.
type Server struct {
	t    testing.TB
	bin  string
	dir  string // holds my.cnf, data/ and log
	port int
	user []string // --user=mysql when we are root
	proc *testproc.Proc
	tls  string // the go-sql-driver TLS configuration's name, set by StartTLSServer
	uid  int    // the mysql user's, when we are root (-1 otherwise)
	gid  int
	args []string // more arguments of Start (a Galera node's --wsrep-new-cluster)
}

// StartServer initializes and starts a MariaDB server of this test's own on
// a free loopback port (root without a password, the database idsql_test),
// and stops it and removes its files when the test ends. It needs mariadbd
// in IDSQL_TEST_MYSQL_BIN and mariadb-install-db; without them the test
// skips, or fails under CI.
func StartServer(t testing.TB) *Server {
	t.Helper()
	return startServer(t, nil)
}

// StartTLSServer is StartServer for a server that takes only TLS
// connections (require_secure_transport), its certificate being files'
// server certificate; DSN connects over TLS verifying it against files'
// authority and presenting files' client certificate (a go-sql-driver TLS
// configuration registered under a name of the test's own).
func StartTLSServer(t testing.TB, files *tlstest.Files) *Server {
	t.Helper()
	return startServer(t, files)
}

// StartTLSUser starts a server as StartTLSServer does, with a user of the
// test database (all privileges on it) who must show the client
// certificate of files, made for that user (tlstest.New's user), and give
// password. It returns the server and root's pool over TLS, which is
// closed when the test ends.
func StartTLSUser(t testing.TB, files *tlstest.Files, user, password string) (*Server, *sql.DB) {
	t.Helper()
	s := startServer(t, files)
	root := s.open(serverDB)
	t.Cleanup(func() { root.Close() })
	for _, q := range []string{
		fmt.Sprintf("CREATE USER '%s'@'%%' IDENTIFIED BY '%s' REQUIRE SUBJECT '/CN=%s'", user, password, user),
		fmt.Sprintf("GRANT ALL ON %s.* TO '%s'@'%%'", serverDB, user),
	} {
		if _, err := root.Exec(q); err != nil {
			t.Fatalf("mysqltest: %s: %v", q, err)
		}
	}
	return s, root
}

func startServer(t testing.TB, files *tlstest.Files) *Server {
	t.Helper()
	s := newServer(t, files, "")
	s.Start()
	db := s.open("")
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE " + serverDB); err != nil {
		t.Fatalf("mysqltest: create database %s: %v", serverDB, err)
	}
	return s
}

// newServer installs a server (its my.cnf with extra lines, and its
// data directory) without starting it, and stops it when the test ends.
func newServer(t testing.TB, files *tlstest.Files, extra string) *Server {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		pgtest.Unavailable(t, "a MariaDB server executable ("+EnvBin+" unset)")
	}
	if _, err := os.Stat(bin); err != nil {
		pgtest.Unavailable(t, "a MariaDB server executable ("+err.Error()+")")
	}
	installDB := filepath.Join(filepath.Dir(bin), "mariadb-install-db")
	if _, err := os.Stat(installDB); err != nil {
		if installDB, err = exec.LookPath("mariadb-install-db"); err != nil {
			pgtest.Unavailable(t, "mariadb-install-db, beside "+bin+" or in PATH")
		}
	}
	s := &Server{t: t, bin: bin, port: testproc.FreePorts(t, 1)[0], uid: -1, gid: -1}
	s.dir = testproc.ServerDir(t, "idsql-mysqltest-")
	if os.Geteuid() == 0 {
		var err error
		if s.uid, s.gid, err = mysqlUser(); err == nil {
			err = os.Chown(s.dir, s.uid, s.gid)
		}
		if err != nil {
			t.Fatalf("mysqltest: running as root, the server must run as the mysql user: %v", err)
		}
		s.user = []string{"--user=mysql"}
	}
	s.proc = testproc.New("MariaDB", s.dir)
	tlsConf := ""
	if files != nil {
		tlsConf = s.useTLS(files)
	}
	s.install(installDB, tlsConf+extra)
	t.Cleanup(s.Stop)
	return s
}

// DSN returns the go-sql-driver DSN of the server's idsql_test database,
// as root, with parseTime on.
func (s *Server) DSN() string { return s.config(serverDB).FormatDSN() }

func (s *Server) config(dbName string) *mysql.Config {
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = fmt.Sprintf("127.0.0.1:%d", s.port)
	cfg.DBName = dbName
	cfg.ParseTime = true
	cfg.Timeout = 2 * time.Second
	cfg.TLSConfig = s.tls
	return cfg
}

// tlsSeq names each TLS server's client configuration.
var tlsSeq atomic.Int64

// useTLS copies files' server certificate, key and authority into the
// server's directory, registers the client's TLS configuration, and
// returns the my.cnf lines that turn TLS on and require it.
func (s *Server) useTLS(files *tlstest.Files) string {
	s.t.Helper()
	for name, from := range map[string]string{"server.pem": files.ServerCert, "server.key": files.ServerKey, "ca.pem": files.CA} {
		b, err := os.ReadFile(from)
		if err == nil {
			err = os.WriteFile(filepath.Join(s.dir, name), b, 0o600)
		}
		if err == nil && s.uid >= 0 {
			err = os.Chown(filepath.Join(s.dir, name), s.uid, s.gid)
		}
		if err != nil {
			s.t.Fatalf("mysqltest: %v", err)
		}
	}
	ca, err := os.ReadFile(files.CA)
	if err != nil {
		s.t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(files.ClientCert, files.ClientKey)
	if err != nil {
		s.t.Fatal(err)
	}
	s.tls = fmt.Sprintf("idsql-mysqltest-%d", tlsSeq.Add(1))
	if err := mysql.RegisterTLSConfig(s.tls, &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, ServerName: "127.0.0.1"}); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { mysql.DeregisterTLSConfig(s.tls) })
	return fmt.Sprintf("ssl_cert = %[1]s/server.pem\nssl_key = %[1]s/server.key\nssl_ca = %[1]s/ca.pem\nrequire_secure_transport = ON\n", s.dir)
}

// open returns a pool on the database dbName ("" for none).
func (s *Server) open(dbName string) *sql.DB {
	s.t.Helper()
	conn, err := mysql.NewConnector(s.config(dbName))
	if err != nil {
		s.t.Fatalf("mysqltest: %v", err)
	}
	return sql.OpenDB(conn)
}

// Start starts the server (again) and waits until it accepts connections.
// Starting a running server does nothing.
func (s *Server) Start() {
	s.t.Helper()
	args := append([]string{"--defaults-file=" + filepath.Join(s.dir, "my.cnf")}, s.user...)
	cmd := exec.Command(s.bin, append(args, s.args...)...)
	cmd.Dir = s.dir
	open := func() (*sql.DB, error) { return s.open(""), nil }
	if err := s.proc.StartDB(cmd, nil, open, startTimeout); err != nil {
		s.t.Fatalf("mysqltest: MariaDB on port %d: %v", s.port, err)
	}
}

// Stop shuts the server down (SIGTERM: a clean shutdown, SIGKILL after 60s)
// and waits until it has exited. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.proc.Stop(syscall.SIGTERM, 60*time.Second)
}

// Crash kills the server with SIGKILL, as a crash would (no shutdown,
// sessions dropped), and waits until it has exited; the next Start
// recovers from InnoDB's redo log.
func (s *Server) Crash() {
	s.proc.Stop(syscall.SIGKILL, 10*time.Second)
}

// install writes the server's my.cnf (nothing from /etc/mysql leaks in)
// and initializes its data directory.
func (s *Server) install(installDB, extra string) {
	s.t.Helper()
	// Commits are flushed to the redo log file (not synced): a crash of
	// the server loses none, a crash of the machine would.
	cnf := fmt.Sprintf(`# written by mysqltest.StartServer: a throw-away test server
[mysqld]
datadir = %[1]s/data
bind-address = 127.0.0.1
port = %[2]d
socket = %[1]s/sock
pid-file = %[1]s/mariadbd.pid
skip-name-resolve
character-set-server = utf8mb4
collation-server = utf8mb4_unicode_ci
performance_schema = OFF
innodb_buffer_pool_size = 16M
innodb_log_file_size = 8M
innodb_flush_log_at_trx_commit = 2
innodb_doublewrite = OFF
innodb_use_native_aio = OFF
`, s.dir, s.port) + extra
	if err := os.WriteFile(filepath.Join(s.dir, "my.cnf"), []byte(cnf), 0o644); err != nil {
		s.t.Fatalf("mysqltest: %v", err)
	}
	args := append([]string{"--defaults-file=" + filepath.Join(s.dir, "my.cnf")}, s.user...)
	args = append(args, "--auth-root-authentication-method=normal", "--skip-test-db")
	cmd := exec.Command(installDB, args...)
	cmd.Dir = s.dir
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("mysqltest: mariadb-install-db: %v\n%s", err, out)
	}
}

// mysqlUser returns the mysql system user's IDs.
func mysqlUser() (uid, gid int, err error) {
	u, err := user.Lookup("mysql")
	if err != nil {
		return -1, -1, err
	}
	if _, err := fmt.Sscan(u.Uid+" "+u.Gid, &uid, &gid); err != nil {
		return -1, -1, fmt.Errorf("mysql user %s:%s: %w", u.Uid, u.Gid, err)
	}
	return uid, gid, nil
}

// execLookPath is exec.LookPath, also in /usr/sbin (not always in PATH).
func execLookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", err
	}
	return p, nil
}
