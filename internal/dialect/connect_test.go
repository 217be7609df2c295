package dialect_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

// TestDriverDSN: MySQL and MariaDB URLs become go-sql-driver's form, with
// the default port when none is given and the parameters kept; a URL
// without a host is refused; other DSNs pass as they are.
func TestDriverDSN(t *testing.T) {
	for _, c := range []struct {
		d       dialect.Dialect
		in, out string
	}{
		{dialect.MySQL, "mysql://app:s%40cret@db.local/shop?parseTime=true", "app:s@cret@tcp(db.local:3306)/shop?parseTime=true"},
		{dialect.MySQL, "mariadb://root@127.0.0.1:3307/x", "root@tcp(127.0.0.1:3307)/x"},
		{dialect.MySQL, "MySQL://h:1/", "tcp(h:1)/"},
		{dialect.MySQL, "app:pw@tcp(h:3306)/shop", "app:pw@tcp(h:3306)/shop"},
		{dialect.PostgreSQL, "postgres://u@h/db", "postgres://u@h/db"},
		{dialect.SQLite, "file:x.db", "file:x.db"},
	} {
		if got, err := c.d.DriverDSN(c.in); err != nil || got != c.out {
			t.Errorf("%s: DriverDSN(%q) = %q, %v; want %q", c.d, c.in, got, err, c.out)
		}
	}
	if _, err := dialect.MySQL.DriverDSN("mysql:///shop"); err == nil || !strings.Contains(err.Error(), "no host") {
		t.Errorf("a URL without a host: %v; want a refusal saying so", err)
	}
}

// TestConnectError: a connection failure says it was one, and where; the
// drivers' words for a server without TLS get the fix.
func TestConnectError(t *testing.T) {
	cause := errors.New("pq: SSL is not enabled on the server")
	err := dialect.PostgreSQL.ConnectError(cause, "")
	if !errors.Is(err, cause) || !strings.HasPrefix(err.Error(), "connect to the PostgreSQL database: pq: SSL is not enabled on the server; ") ||
		!strings.Contains(err.Error(), "sslmode=disable") {
		t.Errorf("PostgreSQL without TLS: %v", err)
	}
	err = dialect.MySQL.ConnectError(errors.New("TLS requested but server does not support TLS"), "app@tcp(h:3306)/x")
	if !strings.HasPrefix(err.Error(), "connect to app@tcp(h:3306)/x: ") || !strings.Contains(err.Error(), "drop tls=") {
		t.Errorf("MySQL without TLS: %v", err)
	}
	if err := dialect.PostgreSQL.ConnectError(errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), ""); err.Error() !=
		"connect to the PostgreSQL database: dial tcp 127.0.0.1:1: connect: connection refused" {
		t.Errorf("a refused connection: %v; want no hint", err)
	}
	if err := dialect.Unknown.ConnectError(errors.New("x"), ""); err.Error() != "connect to the database: x" {
		t.Errorf("Unknown: %v", err)
	}
}
