package dialect_test

import (
	"context"
	"database/sql"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

func TestForDSN(t *testing.T) {
	for _, c := range []struct {
		dsn  string
		want dialect.Dialect
	}{
		{"postgres://u:p@localhost:5432/shop?sslmode=disable", dialect.PostgreSQL},
		{"postgresql://localhost/shop", dialect.PostgreSQL},
		{"host=localhost dbname=shop", dialect.PostgreSQL},
		{"mysql://u:p@localhost:3306/shop", dialect.MySQL},
		{"MariaDB://u@localhost/shop", dialect.MySQL},
		{"u:p@tcp(127.0.0.1:3306)/shop?parseTime=true", dialect.MySQL},
		{"u@unix(/run/mysqld/mysqld.sock)/shop", dialect.MySQL},
		{"tcp(localhost:3306)/shop", dialect.MySQL},
		{"sqlite:/var/lib/idsql.db", dialect.SQLite},
		{"sqlite3:idsql.db", dialect.SQLite},
		{"sqlite:///tmp/x.db", dialect.SQLite},
	} {
		if got := dialect.ForDSN(c.dsn); got != c.want {
			t.Errorf("ForDSN(%q) = %s, want %s", c.dsn, got, c.want)
		}
	}
}

func TestFacts(t *testing.T) {
	for _, c := range []struct {
		d                    dialect.Dialect
		workerTable, apart   bool
		driverName, sqlxName string
	}{
		{dialect.PostgreSQL, true, false, "postgres", "postgres"},
		{dialect.MySQL, true, false, "mysql", "mysql"},
		{dialect.SQLite, false, true, "sqlite", "sqlite3"},
	} {
		if got := c.d.HasWorkerTable(); got != c.workerTable {
			t.Errorf("%s: HasWorkerTable = %v", c.d, got)
		}
		if got := c.d.SegmentStoreApart(); got != c.apart {
			t.Errorf("%s: SegmentStoreApart = %v", c.d, got)
		}
		if got := c.d.DriverName(); got != c.driverName {
			t.Errorf("%s: DriverName = %q, want %q", c.d, got, c.driverName)
		}
		if got := c.d.SQLXName(); got != c.sqlxName {
			t.Errorf("%s: SQLXName = %q, want %q", c.d, got, c.sqlxName)
		}
		// Each name is one ByName takes back to the dialect.
		for _, n := range []string{c.d.DriverName(), c.d.SQLXName()} {
			if got, err := dialect.ByName(n); err != nil || got != c.d {
				t.Errorf("%s: ByName(%q) = %s, %v", c.d, n, got, err)
			}
		}
	}
	if dialect.Unknown.HasWorkerTable() || dialect.Unknown.DriverName() != "" {
		t.Error("Unknown has facts")
	}
	styles := dialect.QuoteStyles()
	if len(styles) != 2 || styles[0].Quote("a") == styles[1].Quote("a") {
		t.Errorf("QuoteStyles = %v, want one dialect per quoting", styles)
	}
}

// TestSequenceless asks the real servers: MariaDB (the test server) and
// PostgreSQL have sequences, SQLite is left to DBDefault without a query.
func TestSequenceless(t *testing.T) {
	ctx := context.Background()
	my, _ := mysqltest.Open(t)
	pg, _ := pgtest.Open(t)
	lite, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	for _, c := range []struct {
		d  dialect.Dialect
		db *sql.DB
	}{{dialect.MySQL, my}, {dialect.PostgreSQL, pg}, {dialect.SQLite, lite}} {
		got, err := c.d.Sequenceless(ctx, c.db)
		if err != nil || got != "" {
			t.Errorf("%s: Sequenceless = %q, %v; want none", c.d, got, err)
		}
	}
	// On a MySQL server the answer names it; a closed pool is an error
	// naming the dialect rather than a guess.
	closed, _ := mysqltest.Open(t)
	closed.Close()
	if got, err := dialect.MySQL.Sequenceless(ctx, closed); err == nil {
		t.Errorf("Sequenceless on a closed pool = %q, want an error", got)
	}
}
