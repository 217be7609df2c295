package integration

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/go-zookeeper/zk"

	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
	"github.com/idsql/idsql/internal/redistest"
	"github.com/idsql/idsql/internal/zktest"
)

// These smoke tests prove the test servers are there and usable. When one
// fails, every other server-backed test would fail too: fix the servers
// (scripts/servers) first.

func TestSmokePostgres(t *testing.T) {
	t.Parallel()
	db, _ := pgtest.Open(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE smoke (id bigint PRIMARY KEY, note text NOT NULL)`); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO smoke (id, note) VALUES ($1, $2), ($3, $4)`, 1, "one", 2, "two"); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var n int
	var notes string
	if err := db.QueryRowContext(ctx, `SELECT count(*), string_agg(note, ',' ORDER BY id) FROM smoke`).Scan(&n, &notes); err != nil {
		t.Fatalf("select: %v", err)
	}
	if n != 2 || notes != "one,two" {
		t.Fatalf("read back %d rows %q, want 2 rows \"one,two\"", n, notes)
	}
	// The table lives in the test's own schema, not in public.
	var schema string
	if err := db.QueryRowContext(ctx, `SELECT table_schema FROM information_schema.tables WHERE table_name = 'smoke'`).Scan(&schema); err != nil {
		t.Fatalf("find table: %v", err)
	}
	if schema == "public" {
		t.Fatalf("table created in public, want the test's schema")
	}
}

func TestSmokeZooKeeper(t *testing.T) {
	t.Parallel()
	servers, chroot := zktest.Chroot(t)
	conn := connect(t, servers)
	p := path.Join(chroot, "smoke")
	if _, err := conn.Create(p, []byte("hello"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	got, _, err := conn.Get(p)
	if err != nil {
		t.Fatalf("get %s: %v", p, err)
	}
	if string(got) != "hello" {
		t.Fatalf("get %s = %q, want \"hello\"", p, got)
	}
	children, _, err := conn.Children(chroot)
	if err != nil || len(children) != 1 || children[0] != "smoke" {
		t.Fatalf("children of %s = %v, %v; want [smoke]", chroot, children, err)
	}
}

func TestSmokeMySQL(t *testing.T) {
	t.Parallel()
	db, dsn := mysqltest.Open(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE smoke (id BIGINT PRIMARY KEY, note VARCHAR(16) NOT NULL)`); err != nil {
		t.Fatalf("create table: %v", err)
	}
	if _, err := db.ExecContext(ctx, `INSERT INTO smoke (id, note) VALUES (?, ?), (?, ?)`, 1, "one", 2, "two"); err != nil {
		t.Fatalf("insert: %v", err)
	}
	var n int
	var notes string
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*), GROUP_CONCAT(note ORDER BY id) FROM smoke`).Scan(&n, &notes); err != nil {
		t.Fatalf("select: %v", err)
	}
	if n != 2 || notes != "one,two" {
		t.Fatalf("read back %d rows %q, want 2 rows \"one,two\"", n, notes)
	}
	// The table lives in the test's own database, not in the shared one.
	own, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatalf("parse the test's DSN: %v", err)
	}
	shared, err := mysql.ParseDSN(mysqltest.BaseDSN(t))
	if err != nil {
		t.Fatalf("parse %s: %v", mysqltest.EnvDSN, err)
	}
	var current string
	if err := db.QueryRowContext(ctx, `SELECT DATABASE()`).Scan(&current); err != nil {
		t.Fatalf("select database(): %v", err)
	}
	if current != own.DBName || current == shared.DBName {
		t.Fatalf("connected to database %q, want the test's own %q (not the shared %q)", current, own.DBName, shared.DBName)
	}
	var inShared int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = ? AND table_name = 'smoke'`, shared.DBName).Scan(&inShared); err != nil {
		t.Fatalf("look for the table in %s: %v", shared.DBName, err)
	}
	if inShared != 0 {
		t.Fatalf("table smoke created in the shared database %s", shared.DBName)
	}
	// The DSN has parseTime on: DATETIME values scan into time.Time.
	var now time.Time
	if err := db.QueryRowContext(ctx, `SELECT NOW()`).Scan(&now); err != nil {
		t.Fatalf("select now(): %v", err)
	}
	if now.IsZero() {
		t.Fatal("NOW() scanned as the zero time")
	}
}

func TestSmokeRedis(t *testing.T) {
	t.Parallel()
	addr := redistest.Addr(t)
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	r := bufio.NewReader(conn)
	// The server is shared: a key of this test and process, which expires
	// by itself should the test die before DEL.
	key := fmt.Sprintf("idsql-test:%s:%d", t.Name(), os.Getpid())
	value := "hello\r\nworld" // CR LF inside: bulk strings are length-framed
	for _, step := range []struct {
		args []string
		want string
	}{
		{[]string{"PING"}, "+PONG"},
		{[]string{"SET", key, value, "PX", "60000"}, "+OK"},
		{[]string{"GET", key}, value},
		{[]string{"DEL", key}, ":1"},
		{[]string{"GET", key}, "(nil)"},
	} {
		if got := redisDo(t, conn, r, step.args...); got != step.want {
			t.Fatalf("%s = %q, want %q", step.args[0], got, step.want)
		}
	}
}

// redisDo sends one command as a RESP array of bulk strings and returns the
// reply: a simple string or integer as its line ("+OK", ":1"), a bulk
// string as its contents, a null bulk string as "(nil)". An error reply or
// a reply not answered within 5s fails the test.
func redisDo(t *testing.T, conn net.Conn, r *bufio.Reader, args ...string) string {
	t.Helper()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatalf("redis %s: write: %v", args[0], err)
	}
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("redis %s: read: %v", args[0], err)
	}
	line = strings.TrimSuffix(line, "\r\n")
	switch {
	case strings.HasPrefix(line, "+"), strings.HasPrefix(line, ":"):
		return line
	case strings.HasPrefix(line, "-"):
		t.Fatalf("redis %s: %s", args[0], line[1:])
	case strings.HasPrefix(line, "$"):
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			t.Fatalf("redis %s: bad bulk length in %q", args[0], line)
		}
		if n < 0 {
			return "(nil)"
		}
		buf := make([]byte, n+2) // the contents and their CR LF
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatalf("redis %s: read: %v", args[0], err)
		}
		return string(buf[:n])
	}
	t.Fatalf("redis %s: unexpected reply %q", args[0], line)
	return ""
}

func TestSmokePostgresRestart(t *testing.T) {
	t.Parallel()
	srv := pgtest.StartServer(t)
	db, err := sql.Open("postgres", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`); err != nil {
		t.Fatalf("create: %v", err)
	}
	srv.Stop()
	if err := db.PingContext(ctx); err == nil {
		t.Fatal("ping succeeded with the server stopped")
	}
	srv.Start()
	// database/sql drops the dead connections and dials again.
	var v int
	if err := queryRetry(ctx, db, `SELECT v FROM kept`, &v); err != nil {
		t.Fatalf("select after restart: %v", err)
	}
	if v != 42 {
		t.Fatalf("read %d after restart, want 42", v)
	}
}

func TestSmokeZooKeeperRestart(t *testing.T) {
	t.Parallel()
	srv := zktest.StartServer(t)
	conn := connect(t, []string{srv.Addr()})
	if _, err := conn.Create("/kept", []byte("v"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create: %v", err)
	}
	srv.Stop()
	for conn.State() == zk.StateHasSession {
		time.Sleep(20 * time.Millisecond)
	}
	srv.Start()
	waitState(t, conn, zk.StateHasSession)
	got, _, err := conn.Get("/kept")
	if err != nil || string(got) != "v" {
		t.Fatalf("get /kept after restart = %q, %v; want \"v\"", got, err)
	}
}

func TestSmokeZooKeeperEnsemble(t *testing.T) {
	t.Parallel()
	ens := zktest.StartEnsemble(t, 3)
	if n := len(ens.Addrs()); n != 3 {
		t.Fatalf("%d addresses, want 3", n)
	}
	conn := connect(t, ens.Addrs())
	if _, err := conn.Create("/before", []byte("1"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("create /before: %v", err)
	}
	// Two of three keep a quorum: writes go on while a member is down.
	ens.Member(0).Stop()
	if _, err := createRetry(conn, "/during"); err != nil {
		t.Fatalf("create /during with member 0 stopped: %v", err)
	}
	// The stopped member comes back and catches up.
	ens.Member(0).Start()
	solo := connect(t, []string{ens.Member(0).Addr()})
	if _, err := solo.Sync("/"); err != nil {
		t.Fatalf("sync on member 0: %v", err)
	}
	for _, p := range []string{"/before", "/during"} {
		if ok, _, err := solo.Exists(p); err != nil || !ok {
			t.Fatalf("member 0 after restart: exists %s = %v, %v; want true", p, ok, err)
		}
	}
}

// connect opens a ZooKeeper session and waits until it is established.
func connect(t *testing.T, servers []string) *zk.Conn {
	t.Helper()
	conn, _, err := zk.Connect(servers, 10*time.Second, zk.WithLogger(quiet{}))
	if err != nil {
		t.Fatalf("connect %v: %v", servers, err)
	}
	t.Cleanup(conn.Close)
	waitState(t, conn, zk.StateHasSession)
	return conn
}

// waitState polls until conn reaches state. There is no time limit here:
// the test binary's -timeout ends a test that hangs.
func waitState(t *testing.T, conn *zk.Conn, state zk.State) {
	t.Helper()
	for conn.State() != state {
		time.Sleep(20 * time.Millisecond)
	}
}

// createRetry creates p, retrying while the client fails over to a live
// member (the session survives; a retried create may find its own node).
func createRetry(conn *zk.Conn, p string) (string, error) {
	for {
		got, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll))
		switch {
		case err == nil:
			return got, nil
		case errors.Is(err, zk.ErrNodeExists):
			return p, nil
		case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer), errors.Is(err, zk.ErrSessionMoved):
			time.Sleep(50 * time.Millisecond)
		default:
			return "", err
		}
	}
}

// queryRetry scans one row, retrying while the pool still hands out
// connections from before a restart.
func queryRetry(ctx context.Context, db *sql.DB, q string, dest any) error {
	var err error
	for range 5 {
		if err = db.QueryRowContext(ctx, q).Scan(dest); err == nil {
			return nil
		}
	}
	return err
}

type quiet struct{}

func (quiet) Printf(string, ...any) {}
