package dialect_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

func TestUndefinedPostgreSQL(t *testing.T) { testUndefined(t, openPostgres(t)) }
func TestUndefinedMySQL(t *testing.T)      { testUndefined(t, openMySQL(t)) }
func TestUndefinedSQLite(t *testing.T)     { testUndefined(t, openSQLite(t)) }

// testUndefined provokes a missing table and a missing column on a real
// server and checks that the dialect, and only it, classifies each (and
// not as the other).
func testUndefined(t *testing.T, s server) {
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE u (id BIGINT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	all := []dialect.Dialect{dialect.PostgreSQL, dialect.MySQL, dialect.SQLite}
	_, noTable := s.db.ExecContext(ctx, "SELECT * FROM idsql_alloc_nope")
	_, noColumn := s.db.ExecContext(ctx, "SELECT nope FROM u")
	for _, c := range []struct {
		what  string
		err   error
		f     func(dialect.Dialect, error) bool
		other func(dialect.Dialect, error) bool
	}{
		{"no such table", noTable, dialect.Dialect.UndefinedTable, dialect.Dialect.UndefinedColumn},
		{"no such column", noColumn, dialect.Dialect.UndefinedColumn, dialect.Dialect.UndefinedTable},
	} {
		if c.err == nil {
			t.Fatalf("%s: no error", c.what)
		}
		for _, d := range all {
			if got, want := c.f(d, c.err), d == s.d; got != want {
				t.Errorf("%s: %s says %v for %T %v", c.what, d, got, c.err, c.err)
			}
			if c.other(d, c.err) {
				t.Errorf("%s: %s classifies %v as the other class", c.what, d, c.err)
			}
		}
		if !c.f(s.d, fmt.Errorf("outer: %w", c.err)) {
			t.Errorf("%s: not recognised when wrapped", c.what)
		}
	}
	if !dialect.AnyUndefinedTable(fmt.Errorf("x: %w", noTable)) || dialect.AnyUndefinedTable(noColumn) {
		t.Errorf("AnyUndefinedTable: %v, %v", noTable, noColumn)
	}
	if !dialect.AnyUndefinedColumn(noColumn) || dialect.AnyUndefinedColumn(noTable) {
		t.Errorf("AnyUndefinedColumn: %v, %v", noColumn, noTable)
	}
}
