package dialect_test

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/internal/dialect"
)

// The package recognises go-sql-driver/mysql's errors without linking the
// driver: a program that imports it and no MySQL code carries none. It
// imports no package of this module either.
func TestNoMySQLDriverLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/idsql/idsql/internal/dialect").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "go-sql-driver/mysql") {
		t.Errorf("internal/dialect depends on go-sql-driver/mysql:\n%s", out)
	}
	// Nor any package of this module: the dialect sits below every layer
	// of idsql (a table's key shape comes in as a KeyShape of numbers).
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/idsql/idsql/") && pkg != "github.com/idsql/idsql/internal/dialect" {
			t.Errorf("internal/dialect imports %s, a package of this module", pkg)
		}
	}
}

// A real MariaDB error, and the driver's ErrInvalidConn, are recognised
// through every kind of wrapping errors.As looks through, and only by the
// MySQL dialect.
func TestMySQLErrorsByReflection(t *testing.T) {
	s := openMySQL(t)
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE u (id BIGINT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, "INSERT INTO u VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	_, dup := s.db.ExecContext(ctx, "INSERT INTO u VALUES (1)")
	var me *mysql.MySQLError
	if !errors.As(dup, &me) || me.Number != 1062 {
		t.Fatalf("duplicate INSERT: %T %v, want a *mysql.MySQLError 1062", dup, dup)
	}
	_, missing := s.db.ExecContext(ctx, "INSERT INTO no_such_table VALUES (1)")
	for _, c := range []struct {
		name         string
		err          error
		unique, lost bool
	}{
		{"duplicate", dup, true, false},
		{"duplicate wrapped", fmt.Errorf("outer: %w", dup), true, false},
		{"duplicate joined", errors.Join(errors.New("other"), fmt.Errorf("x: %w", dup)), true, false},
		{"missing table", missing, false, false},
		{"invalid connection", mysql.ErrInvalidConn, false, true},
		{"invalid connection wrapped", fmt.Errorf("exec: %w", mysql.ErrInvalidConn), false, true},
		{"server gone", &mysql.MySQLError{Number: 2006, Message: "MySQL server has gone away"}, false, true},
		{"plain error", errors.New("invalid connections"), false, false},
	} {
		if got := dialect.MySQL.UniqueViolation(c.err); got != c.unique {
			t.Errorf("%s: UniqueViolation = %v, want %v", c.name, got, c.unique)
		}
		if got := dialect.MySQL.ConnectionLost(c.err); got != c.lost {
			t.Errorf("%s: ConnectionLost = %v, want %v", c.name, got, c.lost)
		}
		if dialect.PostgreSQL.UniqueViolation(c.err) || dialect.SQLite.UniqueViolation(c.err) {
			t.Errorf("%s: another dialect calls it a unique violation", c.name)
		}
	}
}
