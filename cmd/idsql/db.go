package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql" // the "mysql" driver
	_ "github.com/lib/pq"            // the "postgres" driver
	_ "modernc.org/sqlite"           // the "sqlite" driver

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
	"github.com/idsql/idsql/internal/dialect"
)

const dsnHelp = "database: postgres://... (or any lib/pq DSN), mysql://user:pass@host:port/db or user:pass@tcp(host:port)/db (MySQL, MariaDB), or sqlite:PATH for idsql's own SQLite file (the segment store); default $IDSQL_DSN"

// database is an opened --dsn: the pool and idsql's stores on it.
type database struct {
	db      *sql.DB
	dialect dialect.Dialect
	dsn     string // the driver's DSN (go-sql-driver's form for MySQL)
	path    string // the SQLite file
	stores  idsql.Stores
}

// sqlitePath returns the file of an sqlite: DSN.
func sqlitePath(dsn string) (string, bool) {
	for _, p := range []string{"sqlite://", "sqlite:", "sqlite3:"} {
		if strings.HasPrefix(dsn, p) {
			return dsn[len(p):], true
		}
	}
	return "", false
}

// The MySQL DSN parameters that are idsql's own, not the driver's: each
// accepts a risk the worker table and the segment store refuse by default
// (holder.accept_lazy_commits and holder.one_writer_node of a config).
const (
	// lazyParam accepts a server without durable commits
	// (innodb_flush_log_at_trx_commit other than 1, or sync_binlog other
	// than 1 with the binary log on).
	lazyParam = "accept_lazy_commits"
	// oneWriterParam says every process writes to a Galera cluster
	// through one node at a time.
	oneWriterParam = "one_writer_node"
)

// driverDSNs are how the CLI hands a --dsn to the drivers it links, by
// driver name (dialect.DriverName of the DSN's dialect, see
// dialect.ForDSN): each turns the DSN into the driver's own form and
// returns the risks its idsql parameters accepted and the DSN to show in
// messages (the password hidden). A driver without an entry takes the
// DSN as it is (lib/pq reads URLs and key=value alike).
var driverDSNs = map[string]func(dsn string) (out string, accepted keyset.HolderConfig, shown string, err error){
	"mysql": func(dsn string) (string, keyset.HolderConfig, string, error) {
		out, accepted, err := mysqlDSN(dsn)
		return out, accepted, redactMySQL(out), err
	},
}

// mysqlDSN turns a MySQL DSN of either form into go-sql-driver's, with
// times scanned as time.Time (parseTime) unless the DSN says otherwise. It
// also returns the risks that idsql's own parameters (lazyParam,
// oneWriterParam) accepted, which it removes: the driver would send them
// to the server as variables.
func mysqlDSN(dsn string) (string, keyset.HolderConfig, error) {
	var accepted keyset.HolderConfig
	dsn, err := dialect.MySQL.DriverDSN(dsn)
	if err != nil {
		return "", accepted, err
	}
	if i := strings.LastIndexByte(dsn, '?'); i >= 0 && strings.LastIndexByte(dsn, '/') < i {
		q, err := url.ParseQuery(dsn[i+1:])
		if err != nil {
			return "", accepted, fmt.Errorf("mysql DSN parameters: %w", err)
		}
		removed := false
		for name, to := range map[string]*bool{lazyParam: &accepted.AcceptLazyCommits, oneWriterParam: &accepted.OneWriterNode} {
			v := q.Get(name)
			if v == "" {
				continue
			}
			if *to, err = strconv.ParseBool(v); err != nil {
				return "", accepted, fmt.Errorf("mysql DSN: %s=%q is not true or false", name, v)
			}
			q.Del(name)
			removed = true
		}
		if removed {
			dsn = dsn[:i]
			if len(q) > 0 {
				dsn += "?" + q.Encode()
			}
		}
	}
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", accepted, fmt.Errorf("mysql DSN: %w", err)
	}
	if !strings.Contains(dsn, "parseTime=") {
		c.ParseTime = true
	}
	return c.FormatDSN(), accepted, nil
}

// openDatabase opens dsn (or $IDSQL_DSN) and checks that it answers.
func openDatabase(ctx context.Context, dsn string) (*database, error) {
	if dsn == "" {
		dsn = os.Getenv("IDSQL_DSN")
	}
	if dsn == "" {
		return nil, usagef("--dsn is required (or set IDSQL_DSN)")
	}
	if path, ok := sqlitePath(dsn); ok {
		store, err := sqlitestore.Open(ctx, path)
		if err != nil {
			return nil, err
		}
		return &database{db: store.DB(), dialect: dialect.ForDSN(dsn), dsn: sqlitestore.DSN(path), path: path, stores: idsql.Stores{Segments: store}}, nil
	}
	dd := dialect.ForDSN(dsn)
	shown, accepted := redact(dsn), keyset.HolderConfig{}
	if toDriver, ok := driverDSNs[dd.DriverName()]; ok {
		var err error
		if dsn, accepted, shown, err = toDriver(dsn); err != nil {
			return nil, usagef("--dsn: %v", err)
		}
	}
	db, err := sql.Open(dd.DriverName(), dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, dd.ConnectError(err, shown)
	}
	stores, err := idsql.StoresFor(db, accepted)
	if err != nil {
		db.Close()
		return nil, err
	}
	return &database{db: db, dialect: dd, dsn: dsn, stores: stores}, nil
}

// redactMySQL hides the password of a go-sql-driver DSN.
func redactMySQL(dsn string) string {
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "(a MySQL DSN)"
	}
	if c.Passwd != "" {
		c.Passwd = "xxxxx"
	}
	return c.FormatDSN()
}

// redact hides a password in a URL DSN.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// loadConfig reads --config (or ./idsql.yaml when it exists and required).
func loadConfig(path string, required bool) (*keyset.Config, error) {
	if path == "" {
		if _, err := os.Stat("idsql.yaml"); err == nil {
			path = "idsql.yaml"
		} else if required {
			return nil, usagef("--config is required (no idsql.yaml in the current directory)")
		} else {
			return nil, nil
		}
	}
	return keyset.Load(path)
}

// keysOptions are the KeysOptions for cfg on d: the database, the worker
// registry when d is PostgreSQL, and the segment store.
func (d *database) keysOptions() keyset.KeysOptions {
	ko := keyset.KeysOptions{DB: d.db}
	if d.stores.Workers != nil {
		ko.Registry = d.stores.Workers
	}
	if d.stores.Segments != nil {
		ko.SegmentStore = d.stores.Segments
	}
	return ko
}

// registry returns the worker registry (PostgreSQL, MySQL), or nil on
// SQLite.
func (d *database) registry() *registry.Registry { return d.stores.Workers }

// segmentStore returns the segment store.
func (d *database) segmentStore() *segment.SQLStore { return d.stores.Segments }
