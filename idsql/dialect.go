package idsql

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/idsql/idsql/internal/dialect"
)

// chooseDialect picks the SQL dialect of the inner driver, once per
// Connector: the configuration's dialect setting, else Options.DriverName
// when it names a dialect or a driver idsql knows (postgres, pgx, mysql,
// sqlite, sqlite3), else the driver's type. Anything else is an error, not
// a guess: a wrong dialect would misread statements.
func chooseDialect(cfg *Config, driverName string, drv driver.Driver) (dialect.Dialect, error) {
	if cfg.Dialect != "" {
		d, err := dialect.ByName(cfg.Dialect)
		if err != nil {
			return dialect.Unknown, &FieldError{Field: "dialect", Err: err}
		}
		return d, nil
	}
	if driverName != "" {
		if d, err := dialect.ByName(driverName); err == nil {
			return d, nil
		}
	}
	if d := dialect.ForDriver(drv); d != dialect.Unknown {
		return d, nil
	}
	named := ""
	if driverName != "" {
		named = fmt.Sprintf(" (registered as %q)", driverName)
	}
	return dialect.Unknown, fmt.Errorf("idsql: cannot tell the SQL dialect of driver %s%s: set dialect: %s in the configuration (Config.Dialect)",
		dialect.DriverType(drv), named, strings.Join(dialect.Names(), ", "))
}

// sqlxName is the driver name NewDB gives sqlx, which derives its bind type
// from it: the caller's driver name when sqlx reads it as the dialect's
// placeholders, else a name sqlx knows for the dialect.
func sqlxName(driverName string, d dialect.Dialect) string {
	want, canonical := sqlx.DOLLAR, d.SQLXName()
	if d.Bind() == dialect.Question {
		want = sqlx.QUESTION
	}
	switch got := sqlx.BindType(driverName); {
	case driverName == "":
		return canonical
	case got == want, got == sqlx.UNKNOWN && want == sqlx.QUESTION: // sqlx writes ? for unknown names
		return driverName
	}
	return canonical
}

// setsSQLMode reports whether a MySQL statement may change the session's
// sql_mode (SET [SESSION] sql_mode = ..., SET @@sql_mode = ...), after
// which the connection reads it again. It costs a prefix check for every
// other statement.
func setsSQLMode(query string) bool {
	q := strings.TrimLeft(query, " \t\r\n")
	if len(q) < 4 || !strings.EqualFold(q[:3], "set") {
		return false
	}
	return strings.Contains(strings.ToLower(q), "sql_mode")
}

// modeIndex numbers the sql_mode flag combinations the rewriter
// distinguishes.
func modeIndex(m dialect.SQLMode) int {
	i := 0
	if m.NoBackslashEscapes {
		i |= 1
	}
	if m.ANSIQuotes {
		i |= 2
	}
	return i
}
