package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"

	_ "github.com/lib/pq"  // the "postgres" driver
	_ "modernc.org/sqlite" // the "sqlite" driver

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
)

const dsnHelp = "database: postgres://... (or any lib/pq DSN), or sqlite:PATH for an SQLite file; default $IDSQL_DSN"

// database is an opened --dsn: the pool and idsql's stores on it.
type database struct {
	db     *sql.DB
	driver string // "postgres" or "sqlite"
	path   string // the SQLite file
	stores idsql.Stores
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

// sqliteDSN is the modernc.org/sqlite DSN of a file, with the pragmas
// concurrent writers need (the same as sqlitestore.Open's).
func sqliteDSN(path string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode()
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
		return &database{db: store.DB(), driver: "sqlite", path: path, stores: idsql.Stores{Segments: store}}, nil
	}
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", redact(dsn), err)
	}
	return &database{db: db, driver: "postgres", stores: idsql.PostgresStores(db)}, nil
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
func loadConfig(path string, required bool) (*idsql.Config, error) {
	if path == "" {
		if _, err := os.Stat("idsql.yaml"); err == nil {
			path = "idsql.yaml"
		} else if required {
			return nil, usagef("--config is required (no idsql.yaml in the current directory)")
		} else {
			return nil, nil
		}
	}
	return idsql.Load(path)
}

// keysOptions are the KeysOptions for cfg on d: the database, the worker
// registry when d is PostgreSQL, and the segment store.
func (d *database) keysOptions() idsql.KeysOptions {
	ko := idsql.KeysOptions{DB: d.db}
	if d.stores.Workers != nil {
		ko.Registry = d.stores.Workers
	}
	if d.stores.Segments != nil {
		ko.SegmentStore = d.stores.Segments
	}
	return ko
}

// registry returns the worker registry, or nil on SQLite.
func (d *database) registry() *registry.Registry { return d.stores.Workers }

// segmentStore returns the segment store.
func (d *database) segmentStore() *segment.SQLStore { return d.stores.Segments }
