package dialect_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/lib/pq"

	"github.com/idsql/idsql/internal/dialect"
)

func TestRebind(t *testing.T) {
	const q = "UPDATE t SET a = ? WHERE b = ? AND c = ?"
	for _, c := range []struct {
		d    dialect.Dialect
		want string
	}{
		{dialect.PostgreSQL, "UPDATE t SET a = $1 WHERE b = $2 AND c = $3"},
		{dialect.MySQL, q},
		{dialect.SQLite, q},
	} {
		if got := c.d.Rebind(q); got != c.want {
			t.Errorf("%s: Rebind = %q, want %q", c.d, got, c.want)
		}
	}
}

// tellingDriver wraps a driver and tells its dialect, as idsql's wrapped
// driver does.
type tellingDriver struct {
	driver.Driver
	d dialect.Dialect
}

func (t tellingDriver) Dialect() dialect.Dialect { return t.d }

type driverConnector struct{ drv driver.Driver }

func (c driverConnector) Connect(context.Context) (driver.Conn, error) {
	return nil, errors.New("not a database")
}
func (c driverConnector) Driver() driver.Driver { return c.drv }

// Of finds the dialect of a raw *sql.DB and of one whose driver wraps
// another and tells its dialect; another wrapper is an error naming it.
func TestOf(t *testing.T) {
	for _, c := range []struct {
		drv  driver.Driver
		want dialect.Dialect
	}{
		{&pq.Driver{}, dialect.PostgreSQL},
		{tellingDriver{&pq.Driver{}, dialect.MySQL}, dialect.MySQL}, // the wrapper's word counts
		{otherDriver{&pq.Driver{}}, dialect.Unknown},
	} {
		db := sql.OpenDB(driverConnector{c.drv})
		got, err := dialect.Of(db)
		db.Close()
		switch {
		case c.want == dialect.Unknown && (!errors.Is(err, dialect.ErrUnknownDriver) || !strings.Contains(err.Error(), "otherDriver")):
			t.Errorf("Of(%T) = %v, %v; want ErrUnknownDriver naming the driver", c.drv, got, err)
		case c.want != dialect.Unknown && (err != nil || got != c.want):
			t.Errorf("Of(%T) = %v, %v; want %v", c.drv, got, err, c.want)
		}
	}
	if _, err := dialect.Of(nil); err == nil {
		t.Error("Of(nil): no error")
	}
}

// The durability statement, the advisory lock and the clock run on the
// real servers; LazyCommits agrees with the MySQL server's settings.
func TestDurabilityPostgreSQL(t *testing.T) {
	s := openPostgres(t)
	ctx := context.Background()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, s.d.DurableCommit()); err != nil {
		t.Fatalf("DurableCommit %q: %v", s.d.DurableCommit(), err)
	}
	var sync string
	if err := tx.QueryRowContext(ctx, "SHOW synchronous_commit").Scan(&sync); err != nil || sync != "on" {
		t.Errorf("after DurableCommit: synchronous_commit = %q, %v; want on", sync, err)
	}
	if _, err := tx.ExecContext(ctx, "SET LOCAL synchronous_commit = off"); err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRowContext(ctx, "SELECT "+s.d.DurableCommitExpr()+", current_setting('synchronous_commit')").Scan(new(string), &sync); err != nil || sync != "on" {
		t.Errorf("after DurableCommitExpr: synchronous_commit = %q, %v; want on", sync, err)
	}
	if _, err := tx.ExecContext(ctx, s.d.XactLock("hashtext("+s.d.Placeholder(1)+")"), "k"); err != nil {
		t.Errorf("XactLock: %v", err)
	}
	var locks int
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()").Scan(&locks); err != nil || locks != 1 {
		t.Errorf("advisory locks held after XactLock: %d, %v; want 1", locks, err)
	}
	var now bool
	if err := tx.QueryRowContext(ctx, "SELECT "+s.d.Clock()+" >= now()").Scan(&now); err != nil || !now {
		t.Errorf("Clock %s: %v, %v", s.d.Clock(), now, err)
	}
	if lazy, err := s.d.LazyCommits(ctx, tx); lazy != nil || err != nil {
		t.Errorf("LazyCommits on PostgreSQL = %v, %v; want none", lazy, err)
	}
}

func TestDurabilityMySQL(t *testing.T) {
	s := openMySQL(t)
	ctx := context.Background()
	if s.d.DurableCommit() != "" || s.d.DurableCommitExpr() != "" || s.d.XactLock("1") != "" {
		t.Errorf("MySQL has a durable commit statement %q or a transaction lock %q", s.d.DurableCommit(), s.d.XactLock("1"))
	}
	var flush, logBin, syncBinlog int64
	if err := s.db.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).
		Scan(&flush, &logBin, &syncBinlog); err != nil {
		t.Fatal(err)
	}
	lazy, err := s.d.LazyCommits(ctx, s.db)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(lazy, "; ")
	if got, want := strings.Contains(text, "innodb_flush_log_at_trx_commit"), flush != 1 && flush != 3; got != want {
		t.Errorf("flush %d: LazyCommits = %q", flush, text)
	}
	if got, want := strings.Contains(text, "sync_binlog"), logBin != 0 && syncBinlog != 1; got != want {
		t.Errorf("log_bin %d, sync_binlog %d: LazyCommits = %q", logBin, syncBinlog, text)
	}
	var ok bool
	if err := s.db.QueryRowContext(ctx, "SELECT "+s.d.Clock()+" >= UTC_TIMESTAMP(6) - INTERVAL 1 SECOND").Scan(&ok); err != nil || !ok {
		t.Errorf("Clock %s: %v, %v", s.d.Clock(), ok, err)
	}
}

// QuoteTable and QuoteIdent quote configured names and refuse malformed
// ones.
func TestQuoteTable(t *testing.T) {
	for _, c := range []struct {
		d          dialect.Dialect
		name, want string // want "" means refused
	}{
		{dialect.PostgreSQL, "leafdb.leaf_alloc", `"leafdb"."leaf_alloc"`},
		{dialect.MySQL, "leafdb.leaf_alloc", "`leafdb`.`leaf_alloc`"},
		{dialect.MySQL, `"Mixed Case"`, "`Mixed Case`"},
		{dialect.PostgreSQL, "a`b", "\"a`b\""},
		{dialect.MySQL, "a`b", "`a``b`"},
		{dialect.PostgreSQL, "a.b.c", ""},
		{dialect.PostgreSQL, "a..b", ""},
		{dialect.PostgreSQL, "", ""},
		{dialect.SQLite, "a\x00b", ""},
	} {
		got, err := c.d.QuoteTable(c.name)
		if c.want == "" && err == nil || c.want != "" && (err != nil || got != c.want) {
			t.Errorf("%s: QuoteTable(%q) = %s, %v; want %q", c.d, c.name, got, err, c.want)
		}
	}
	if _, err := dialect.MySQL.QuoteIdent(""); err == nil {
		t.Error("QuoteIdent accepted an empty name")
	}
}
