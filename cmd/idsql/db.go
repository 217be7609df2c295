package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"slices"
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
	// accepted: the risks the DSN's idsql parameters accepted (see
	// mysqlDSN).
	accepted keyset.HolderConfig
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

// The MySQL DSN parameters that are idsql's own, not the driver's: the
// first two accept a risk the worker table and the segment store refuse by
// default (holder.accept_lazy_commits and holder.one_writer_node of a
// config); the ssl- ones give the TLS files a private authority needs,
// named as the mariadb client names them (go-sql-driver takes them only
// as a tls.Config a program registers).
const (
	// lazyParam accepts a server without durable commits
	// (innodb_flush_log_at_trx_commit other than 1, or sync_binlog other
	// than 1 with the binary log on).
	lazyParam = "accept_lazy_commits"
	// oneWriterParam says every process writes to a Galera cluster
	// through one node at a time.
	oneWriterParam = "one_writer_node"
	// sslCAParam is the authority the server's certificate must chain to;
	// sslCertParam and sslKeyParam are a client certificate and its key.
	sslCAParam, sslCertParam, sslKeyParam = "ssl-ca", "ssl-cert", "ssl-key"
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
// removes idsql's own parameters, which the driver would send to the
// server as variables: it returns the risks lazyParam and oneWriterParam
// accepted, and registers the TLS configuration the ssl- parameters
// describe (verifying the server's name), which the DSN then names.
func mysqlDSN(dsn string) (string, keyset.HolderConfig, error) {
	var accepted keyset.HolderConfig
	dsn, err := dialect.MySQL.DriverDSN(dsn)
	if err != nil {
		return "", accepted, err
	}
	flags := map[string]*bool{lazyParam: &accepted.AcceptLazyCommits, oneWriterParam: &accepted.OneWriterNode}
	files := map[string]string{}
	if i := strings.LastIndexByte(dsn, '?'); i >= 0 && strings.LastIndexByte(dsn, '/') < i {
		q, err := url.ParseQuery(dsn[i+1:])
		if err != nil {
			return "", accepted, fmt.Errorf("mysql DSN parameters: %w", err)
		}
		removed := false
		for name := range q {
			v := q.Get(name)
			switch to, isFlag := flags[name]; {
			case isFlag:
				if *to, err = strconv.ParseBool(v); err != nil {
					return "", accepted, fmt.Errorf("mysql DSN: %s=%q is not true or false", name, v)
				}
			case name == sslCAParam || name == sslCertParam || name == sslKeyParam:
				if v == "" {
					return "", accepted, fmt.Errorf("mysql DSN: %s is empty; give a file", name)
				}
				files[name] = v
			default:
				continue
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
	if len(files) > 0 {
		if c.TLSConfig != "" {
			return "", accepted, fmt.Errorf("mysql DSN: tls=%s and %s: give one or the other", c.TLSConfig, strings.Join(slices.Sorted(maps.Keys(files)), ", "))
		}
		if c.TLSConfig, err = registerTLS(c.Addr, files); err != nil {
			return "", accepted, fmt.Errorf("mysql DSN: %w", err)
		}
	}
	return c.FormatDSN(), accepted, nil
}

// registerTLS registers, for go-sql-driver, the TLS configuration that
// the ssl- parameters in files describe for a server at addr, and returns
// its name.
func registerTLS(addr string, files map[string]string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	tc := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if ca := files[sslCAParam]; ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return "", fmt.Errorf("%s: %w", sslCAParam, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return "", fmt.Errorf("%s: no PEM certificate in %s", sslCAParam, ca)
		}
	}
	switch cert, key := files[sslCertParam], files[sslKeyParam]; {
	case cert != "" && key != "":
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return "", fmt.Errorf("%s and %s: %w", sslCertParam, sslKeyParam, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	case cert != "" || key != "":
		return "", fmt.Errorf("%s and %s go together: give both or neither", sslCertParam, sslKeyParam)
	}
	const name = "idsql-cli"
	if err := mysql.RegisterTLSConfig(name, tc); err != nil {
		return "", err
	}
	return name, nil
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
	return &database{db: db, dialect: dd, dsn: dsn, stores: stores, accepted: accepted}, nil
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
// registry when d keeps one, and the segment store, both taking the risks
// cfg's holder section accepts (accept_lazy_commits, one_writer_node) as
// well as those the DSN's parameters did, and the registry cfg's
// heartbeat.
func (d *database) keysOptions(cfg *keyset.Config) keyset.KeysOptions {
	h := d.accepted
	h.AcceptLazyCommits = h.AcceptLazyCommits || cfg.Holder.AcceptLazyCommits
	h.OneWriterNode = h.OneWriterNode || cfg.Holder.OneWriterNode
	h.Heartbeat = cfg.Holder.Heartbeat
	if d.stores.Segments != nil {
		h.ConfigureStore(d.stores.Segments)
	}
	if d.stores.Workers != nil {
		rs := h.RegistrySettings()
		rs.Dialect = d.dialect.String()
		d.stores.Workers = registry.New(d.db, rs)
	}
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
