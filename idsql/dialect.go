package idsql

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/jmoiron/sqlx"

	"github.com/idsql/idsql/idsql/keyset"
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
			return dialect.Unknown, &keyset.FieldError{Field: "dialect", Err: err}
		}
		return d, nil
	}
	if driverName != "" {
		if d, err := dialect.ByName(driverName); err == nil {
			return d, nil
		}
	}
	if d := dialect.ForDriver(drv); d.Known() {
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
