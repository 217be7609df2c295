package dialect_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"
	"modernc.org/sqlite"

	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

func TestByName(t *testing.T) {
	for _, c := range []struct {
		name string
		want dialect.Dialect
	}{
		{"postgres", dialect.PostgreSQL}, {"PostgreSQL", dialect.PostgreSQL}, {"pgx", dialect.PostgreSQL},
		{"mysql", dialect.MySQL}, {"MariaDB", dialect.MySQL},
		{"sqlite", dialect.SQLite}, {"sqlite3", dialect.SQLite},
	} {
		got, err := dialect.ByName(c.name)
		if err != nil || got != c.want {
			t.Errorf("ByName(%q) = %v, %v; want %v", c.name, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "oracle", "unknown", "postgres "} {
		if d, err := dialect.ByName(bad); err == nil || !strings.Contains(err.Error(), "postgres, mysql, sqlite") {
			t.Errorf("ByName(%q) = %v, %v; want an error listing the names", bad, d, err)
		}
	}
}

// otherDriver stands for a driver ForDriver does not know, such as a
// tracing wrapper around a known one.
type otherDriver struct{ driver.Driver }

func TestForDriver(t *testing.T) {
	for _, c := range []struct {
		drv  driver.Driver
		want dialect.Dialect
	}{
		{&pq.Driver{}, dialect.PostgreSQL},
		{&mysql.MySQLDriver{}, dialect.MySQL},
		{&sqlite.Driver{}, dialect.SQLite},
		{otherDriver{&pq.Driver{}}, dialect.Unknown},
		{nil, dialect.Unknown},
	} {
		if got := dialect.ForDriver(c.drv); got != c.want {
			t.Errorf("ForDriver(%T) = %v, want %v", c.drv, got, c.want)
		}
	}
	// The connectors' drivers, as NewConnector sees them.
	pc, _ := pq.NewConnector("")
	mc, _ := mysql.NewConnector(mysql.NewConfig())
	if dialect.ForDriver(pc.Driver()) != dialect.PostgreSQL || dialect.ForDriver(mc.Driver()) != dialect.MySQL {
		t.Errorf("connector drivers %T, %T not recognised", pc.Driver(), mc.Driver())
	}
}

func TestDescriptions(t *testing.T) {
	for _, c := range []struct {
		d                  dialect.Dialect
		ph, quoted, qual   string
		bind               dialect.Bind
		back               dialect.KeyBack
		int32Type, bigType string
	}{
		{dialect.PostgreSQL, "$3", `"a""b"`, `"shop"."orders"`, dialect.Dollar, dialect.Returning, "integer", "bigint"},
		{dialect.MySQL, "?", "`a\"b`", "`shop`.`orders`", dialect.Question, dialect.LastInsertID, "int(11)", "bigint(20) unsigned"},
		{dialect.SQLite, "?", `"a""b"`, `"shop"."orders"`, dialect.Question, dialect.LastInsertID, "", "INTEGER"},
	} {
		quote := `a"b`
		if c.d == dialect.MySQL {
			quote = "a\"b"
		}
		if got := c.d.Placeholder(3); got != c.ph {
			t.Errorf("%s: Placeholder(3) = %q", c.d, got)
		}
		if got := c.d.Quote(quote); got != c.quoted {
			t.Errorf("%s: Quote = %s, want %s", c.d, got, c.quoted)
		}
		if got := c.d.QuoteQualified("shop.orders"); got != c.qual {
			t.Errorf("%s: QuoteQualified = %s", c.d, got)
		}
		if c.d.Bind() != c.bind || c.d.KeyBack() != c.back {
			t.Errorf("%s: bind %v, key back %v", c.d, c.d.Bind(), c.d.KeyBack())
		}
		if b, integer := c.d.KeyBits(c.int32Type); c.int32Type != "" && (b != 32 || !integer) {
			t.Errorf("%s: KeyBits(%q) = %d, %v; want 32, true", c.d, c.int32Type, b, integer)
		}
		if b, integer := c.d.KeyBits(c.bigType); b != 64 || !integer {
			t.Errorf("%s: KeyBits(%q) = %d, %v; want 64, true", c.d, c.bigType, b, integer)
		}
		for _, typ := range []string{"text", "varchar(20)", "real", "double precision"} {
			if err := c.d.KeyColumn("t", "id", typ); !errors.Is(err, dialect.ErrKeyType) || !strings.Contains(err.Error(), "key column id is "+typ+", not an integer type") {
				t.Errorf("%s: KeyColumn of a %s column: %v; want ErrKeyType naming the type", c.d, typ, err)
			}
		}
		if c.d != dialect.SQLite { // SQLite keeps integers as integers in NUMERIC and untyped columns
			for _, typ := range []string{"numeric(5,0)", "uuid", "decimal(20,0)"} {
				if err := c.d.KeyColumn("t", "id", typ); !errors.Is(err, dialect.ErrKeyType) {
					t.Errorf("%s: KeyColumn of a %s column: %v; want ErrKeyType", c.d, typ, err)
				}
			}
		}
		if err := c.d.KeyColumn("t", "id", c.bigType); err != nil {
			t.Errorf("%s: KeyColumn of a %s column: %v", c.d, c.bigType, err)
		}
	}
	if got := dialect.MySQL.Quote("a`b"); got != "`a``b`" {
		t.Errorf("MySQL Quote(a`b) = %s", got)
	}
	if _, _, err := dialect.SQLite.Columns("other", "t"); err == nil {
		t.Error("SQLite catalog accepted schema other")
	}
}

func TestParseSQLMode(t *testing.T) {
	for _, c := range []struct {
		mode string
		want dialect.SQLMode
	}{
		{"", dialect.SQLMode{}},
		{"STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION", dialect.SQLMode{}},
		{"NO_BACKSLASH_ESCAPES", dialect.SQLMode{NoBackslashEscapes: true}},
		{"ansi_quotes,no_backslash_escapes", dialect.SQLMode{NoBackslashEscapes: true, ANSIQuotes: true}},
		{"REAL_AS_FLOAT,PIPES_AS_CONCAT,ANSI_QUOTES,IGNORE_SPACE,ANSI", dialect.SQLMode{ANSIQuotes: true}},
		{"ORACLE", dialect.SQLMode{ANSIQuotes: true}},
	} {
		if got := dialect.ParseSQLMode(c.mode); got != c.want {
			t.Errorf("ParseSQLMode(%q) = %+v, want %+v", c.mode, got, c.want)
		}
	}
}

// server is one real database for the error classification tests.
type server struct {
	d       dialect.Dialect
	db      *sql.DB
	connID  string // query returning the session's id
	killFmt string // statement killing session %s
	liveFmt string // query counting the live sessions with id %s
}

func (s server) q(query string) string { return s.d.Rebind(query) }

func openPostgres(t *testing.T) server {
	db, _ := pgtest.Open(t)
	return server{d: dialect.PostgreSQL, db: db, connID: "SELECT pg_backend_pid()", killFmt: "SELECT pg_terminate_backend(%s)",
		liveFmt: "SELECT count(*) FROM pg_stat_activity WHERE pid = %s"}
}

func openMySQL(t *testing.T) server {
	db, _ := mysqltest.Open(t)
	return server{d: dialect.MySQL, db: db, connID: "SELECT CONNECTION_ID()", killFmt: "KILL CONNECTION %s",
		liveFmt: "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s"}
}

func openSQLite(t *testing.T) server {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "t.db")+"?_pragma=busy_timeout(0)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return server{d: dialect.SQLite, db: db}
}

func TestErrorsPostgreSQL(t *testing.T) { testErrors(t, openPostgres(t)) }
func TestErrorsMySQL(t *testing.T)      { testErrors(t, openMySQL(t)) }
func TestErrorsSQLite(t *testing.T)     { testErrors(t, openSQLite(t)) }

// testErrors provokes each class of error on a real server and checks
// that the dialect, and only it, classifies it.
func testErrors(t *testing.T, s server) {
	ctx := context.Background()
	if got := dialect.ForDriver(s.db.Driver()); got != s.d {
		t.Fatalf("ForDriver(%T) = %v, want %v", s.db.Driver(), got, s.d)
	}
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE t (id BIGINT PRIMARY KEY, v INT)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "INSERT INTO t (id, v) VALUES (1, 0), (2, 0)"); err != nil {
		t.Fatal(err)
	}
	all := []dialect.Dialect{dialect.PostgreSQL, dialect.MySQL, dialect.SQLite}
	only := func(what string, err error, f func(dialect.Dialect, error) bool) {
		t.Helper()
		if err == nil {
			t.Errorf("%s: no error", what)
			return
		}
		for _, d := range all {
			if got, want := f(d, err), d == s.d; got != want {
				t.Errorf("%s: %s says %v for %T %v", what, d, got, err, err)
			}
		}
		wrapped := fmt.Errorf("outer: %w", err)
		if !f(s.d, wrapped) {
			t.Errorf("%s: not recognised when wrapped", what)
		}
	}

	_, err := s.db.ExecContext(ctx, s.q("INSERT INTO t (id, v) VALUES (?, ?)"), 1, 1)
	only("unique violation", err, dialect.Dialect.UniqueViolation)
	if s.d.SerializationFailure(err) || s.d.ConnectionLost(err) {
		t.Errorf("unique violation %v classified as another class too", err)
	}

	only("serialization failure", conflict(t, s), dialect.Dialect.SerializationFailure)

	if s.d == dialect.SQLite {
		return // an embedded database has no connection to lose
	}
	c, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var id string
	if err := c.QueryRowContext(ctx, s.connID).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf(s.killFmt, id)); err != nil {
		t.Fatal(err)
	}
	// Wait until the server has closed the session.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var live int
		if err := s.db.QueryRowContext(ctx, fmt.Sprintf(s.liveFmt, id)).Scan(&live); err != nil {
			t.Fatal(err)
		}
		if live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still live 10 s after it was killed", id)
		}
	}
	_, err = c.ExecContext(ctx, s.q("UPDATE t SET v = ? WHERE id = 1"), 5)
	if err == nil || !s.d.ConnectionLost(err) {
		t.Errorf("after the session was killed: %T %v, not a lost connection", err, err)
	}
	if s.d.UniqueViolation(err) || s.d.SerializationFailure(err) {
		t.Errorf("lost connection %v classified as another class too", err)
	}
}

// conflict returns the error of a transaction that lost a conflict: a
// deadlock between two transactions (PostgreSQL, MySQL), or a write
// refused while another connection holds SQLite's write lock.
func conflict(t *testing.T, s server) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if s.d == dialect.SQLite {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.ExecContext(ctx, "UPDATE t SET v = 1 WHERE id = 1"); err != nil {
			t.Fatal(err)
		}
		_, err = s.db.ExecContext(ctx, "UPDATE t SET v = 2 WHERE id = 2")
		return err
	}
	tx1, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx1.Rollback()
	tx2, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx2.Rollback()
	upd := s.q("UPDATE t SET v = v + 1 WHERE id = ?")
	if _, err := tx1.ExecContext(ctx, upd, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := tx2.ExecContext(ctx, upd, 2); err != nil {
		t.Fatal(err)
	}
	// Each now asks for the other's row: whichever statement comes second
	// closes the cycle, and the server fails one of the two (the victim
	// it picks), so no order between them is needed.
	errs := make(chan error, 1)
	go func() {
		_, err := tx1.ExecContext(ctx, upd, 2)
		errs <- err
	}()
	_, err2 := tx2.ExecContext(ctx, upd, 1)
	if err2 != nil {
		tx2.Rollback()
	}
	err1 := <-errs
	if errors.Is(err1, context.DeadlineExceeded) || errors.Is(err2, context.DeadlineExceeded) {
		t.Fatal("no deadlock detected within 30 s")
	}
	if err2 != nil {
		return err2
	}
	return err1
}
