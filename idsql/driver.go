package idsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/dialect"
)

// What the wrapper implements. Optional interfaces are forwarded to the
// inner driver when it has them; where it does not, the wrapper answers as
// database/sql would without them (driver.ErrSkip, or the neutral answer).
var (
	_ driver.Connector = (*Connector)(nil)
	_ io.Closer        = (*Connector)(nil)

	_ driver.Driver        = (*wrappedDriver)(nil)
	_ driver.DriverContext = (*wrappedDriver)(nil)
	_ dialect.Teller       = (*wrappedDriver)(nil)

	_ driver.Conn               = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.Pinger             = (*conn)(nil)
	_ driver.SessionResetter    = (*conn)(nil)
	_ driver.Validator          = (*conn)(nil)
	_ driver.NamedValueChecker  = checkingConn{}

	_ driver.Stmt              = (*fillStmt)(nil)
	_ driver.StmtExecContext   = (*fillStmt)(nil)
	_ driver.StmtQueryContext  = (*fillStmt)(nil)
	_ driver.NamedValueChecker = (*fillStmt)(nil)

	_ driver.Result = (*result)(nil)
	_ driver.Result = (*countResult)(nil)
)

// Options tune a wrapped driver. The zero value means the defaults.
type Options struct {
	// DriverName is the inner driver's registered name ("postgres", "mysql",
	// "sqlite", ...); NewDB gives it to sqlx. When it names a dialect or a
	// driver idsql knows (postgres, pgx, mysql, sqlite, sqlite3) it also
	// sets the SQL dialect; otherwise the dialect comes from the inner
	// driver's type (lib/pq, pgx's stdlib, go-sql-driver/mysql,
	// modernc.org/sqlite, mattn/go-sqlite3). Config.Dialect overrides both.
	// A driver of none of these kinds needs Config.Dialect.
	DriverName string
	// Keys issues the keys. Nil means keys built from the Config with
	// KeysOptions, on a database/sql pool of the inner connector (so
	// segment allocations commit on their own, whatever the caller's
	// transaction does).
	Keys *Keys
	// KeysOptions are used when Keys is nil. On PostgreSQL and MySQL a nil
	// Registry means the worker table (idsql_workers), and a nil
	// SegmentStore the segment tables (idsql_alloc, idsql_alloc_log), in
	// the inner connector's database, where Migrate creates them. On SQLite
	// segment tables need KeysOptions.SegmentStore (sqlitestore.Open) on
	// a file of its own, not the application's (ErrSharedSQLiteFile).
	KeysOptions KeysOptions
	// CacheSize bounds the rewrite plan cache; 0 means the default.
	CacheSize int
	// FoundRows says that the inner MySQL connector asks the server for
	// found rows (go-sql-driver/mysql's ClientFoundRows, clientFoundRows=true
	// in a DSN): an upsert then counts a row it left unchanged as 1, like
	// one it inserted, so its generated key is not known to be written
	// (LastInsertId answers the server's value, NamedExec writes nothing
	// back). A connector opened from a DSN (Open, Register) reads the
	// setting from the DSN; one built in code (mysql.NewConnector) must say
	// it here: idsql cannot ask the server which flags the client sent.
	FoundRows bool
	// ObserveKeys, when set, is called after the keys of every statement
	// the wrapper filled were drawn, with the table, how many keys, and
	// how long drawing them took: the wait inside idsql (a worker lease,
	// a segment refill, the clock), not the statement's own round trip.
	// It runs on the statement's goroutine, with its context, and must
	// return quickly: export it as a metric (a histogram of key waits).
	ObserveKeys func(ctx context.Context, table string, keys int, took time.Duration)
}

// Connector wraps an inner driver.Connector: every connection it opens
// fills the key column of INSERTs into configured tables. Use it with
// sql.OpenDB, or through Open for the sqlx-level DB. Closing the sql.DB
// closes the Connector, which releases worker leases.
//
// On MySQL and MariaDB each connection reads its session's sql_mode when it
// opens, and again after a statement that sets it (SET [SESSION] sql_mode
// = ...), so that NO_BACKSLASH_ESCAPES and ANSI_QUOTES reach the rewriter:
// statements are read as that server reads them, whatever the server's,
// the DSN's or the session's setting. (A sql_mode changed by other means,
// a stored procedure say, is not seen.)
type Connector struct {
	inner   driver.Connector
	driver  *wrappedDriver
	dialect dialect.Dialect
	// autoIncID is dialect.AutoIncrementID(), read once.
	autoIncID bool
	// eng decides every filled statement's keys (the statement engine);
	// the connector and its connections are its database/sql adapter.
	eng *engine.Engine
	// named is the rewriter of the sql_mode the connection opened last
	// read: NamedExec plans with it before database/sql picks a
	// connection.
	named atomic.Pointer[rewrite.Rewriter]
	// namedN counts the NamedExecs in flight, so a statement looks in its
	// context for one only while there is one.
	namedN  atomic.Int64
	keys    *Keys
	ownKeys bool
	keysDB  *sql.DB // the unwrapped pool behind owned keys
	// sqliteChecked is set once a connection showed that the segment
	// store is not in the application's SQLite file (checkSQLiteStore).
	sqliteChecked atomic.Bool
	name          string // the driver name sqlx gets
	closeMu       sync.Once
	closeErr      error
}

// NewConnector wraps inner for cfg. The SQL dialect is chosen here, once
// (see Options.DriverName).
func NewConnector(inner driver.Connector, cfg *Config, opts Options) (*Connector, error) {
	return newConnector(inner, cfg, opts, "")
}

// newConnector is NewConnector for a connector opened from dsn ("" when
// there is none to read).
func newConnector(inner driver.Connector, cfg *Config, opts Options, dsn string) (*Connector, error) {
	if inner == nil {
		return nil, errors.New("idsql: NewConnector: inner connector is nil")
	}
	if cfg == nil {
		return nil, errors.New("idsql: NewConnector: config is nil")
	}
	d, err := chooseDialect(cfg, opts.DriverName, inner.Driver())
	if err != nil {
		return nil, err
	}
	c := &Connector{inner: inner, keys: opts.Keys, dialect: d, autoIncID: d.AutoIncrementID(), name: sqlxName(opts.DriverName, d)}
	if len(cfg.Tables) == 0 {
		log := opts.KeysOptions.Logger
		if log == nil {
			log = slog.Default()
		}
		log.Info("idsql: no tables configured: every statement passes unchanged", "namespace", cfg.Namespace, "dialect", d.String())
	}
	c.driver = &wrappedDriver{inner: inner.Driver(), cfg: cfg, opts: opts}
	if c.keys == nil {
		ko := opts.KeysOptions
		if ko.DB == nil {
			c.keysDB = sql.OpenDB(innerOnly{inner})
			ko.DB = c.keysDB
		}
		if c.keys, err = keyset.NewKeysOn(cfg, ko, ko.DB, d); err != nil {
			if c.keysDB != nil {
				c.keysDB.Close()
			}
			return nil, err
		}
		c.ownKeys = true
	}
	uuids, err := cfg.UUIDTables()
	if err == nil {
		c.eng, err = engine.New(engine.Config{Dialect: d, Tables: engine.Tables(cfg.TableNames(), cfg.Tables), Keys: c.keys, UUIDs: uuids,
			ShardOf: ShardOf, CacheSize: opts.CacheSize, Prefix: "idsql", Observe: opts.ObserveKeys, CountsUpdates: d.CountsUpdates(opts.FoundRows || d.FoundRowsDSN(dsn))})
	}
	if err != nil {
		c.closeOwned()
		return nil, fmt.Errorf("idsql: %w", err)
	}
	c.named.Store(c.eng.Default())
	return c, nil
}

// namedRewriter is the rewriter of the sql_mode the last connection
// opened with: the one NamedExec plans with before database/sql picks a
// connection. (A pool whose connections run different sql_modes may see
// NamedExec leave some keys to the driver, which then generates them.)
func (c *Connector) namedRewriter() *rewrite.Rewriter { return c.named.Load() }

// innerOnly hides the Connector's optional interfaces so the pool that
// allocates keys does not close the inner connector it shares.
type innerOnly struct{ c driver.Connector }

func (i innerOnly) Connect(ctx context.Context) (driver.Conn, error) { return i.c.Connect(ctx) }
func (i innerOnly) Driver() driver.Driver                            { return i.c.Driver() }

// Keys returns the connector's key set, for code that needs a key before
// inserting.
func (c *Connector) Keys() *Keys { return c.keys }

// Connect implements driver.Connector.
func (c *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	ic, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("idsql: %w", c.dialect.ConnectError(err, ""))
	}
	cn := &conn{inner: ic, c: c, rw: c.eng.Default()}
	cn.cat = c.eng.Catalog(cn)
	cn.execer, _ = ic.(driver.ExecerContext)
	cn.queryer, _ = ic.(driver.QueryerContext)
	cn.checker, _ = ic.(driver.NamedValueChecker)
	cn.validator, _ = ic.(driver.Validator)
	cn.resetter, _ = ic.(driver.SessionResetter)
	if c.dialect.SessionMode() {
		if err := cn.readSQLMode(ctx); err != nil {
			ic.Close()
			return nil, err
		}
	}
	if err := c.checkSQLiteStore(ctx, cn); err != nil {
		ic.Close()
		return nil, err
	}
	if cn.checker != nil {
		return checkingConn{cn}, nil
	}
	return cn, nil
}

// readSQLMode reads the session's sql_mode and takes the rewriter that
// reads statements as it says.
func (c *conn) readSQLMode(ctx context.Context) error {
	mode, err := c.queryString(ctx, dialect.SQLModeQuery)
	if err != nil {
		return fmt.Errorf("idsql: read the session's sql_mode: %w", err)
	}
	m := dialect.ParseSQLMode(mode)
	rw, err := c.c.eng.Rewriter(m)
	if err != nil {
		return fmt.Errorf("idsql: %w", err)
	}
	c.rw = rw
	c.c.named.Store(rw)
	return nil
}

// Driver implements driver.Connector.
func (c *Connector) Driver() driver.Driver { return c.driver }

// Close releases the worker leases of keys the connector made and closes
// the inner connector when it is an io.Closer.
func (c *Connector) Close() error {
	c.closeMu.Do(func() {
		errs := []error{c.closeOwned()}
		if cl, ok := c.inner.(io.Closer); ok {
			errs = append(errs, cl.Close())
		}
		c.closeErr = errors.Join(errs...)
	})
	return c.closeErr
}

// closeOwned releases the keys the connector made and their pool.
func (c *Connector) closeOwned() error {
	var errs []error
	if c.ownKeys {
		errs = append(errs, c.keys.Close())
	}
	if c.keysDB != nil {
		errs = append(errs, c.keysDB.Close())
	}
	return errors.Join(errs...)
}

// wrappedDriver is the driver.Driver of a Connector, and what Register
// registers.
type wrappedDriver struct {
	inner driver.Driver
	cfg   *Config
	opts  Options
}

// Open implements driver.Driver; database/sql uses OpenConnector instead.
func (d *wrappedDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return c.Connect(context.Background())
}

// OpenConnector implements driver.DriverContext.
func (d *wrappedDriver) OpenConnector(dsn string) (driver.Connector, error) {
	if dd, err := chooseDialect(d.cfg, d.opts.DriverName, d.inner); err == nil {
		if dsn, err = dd.DriverDSN(dsn); err != nil {
			return nil, err
		}
	}
	var inner driver.Connector
	if dc, ok := d.inner.(driver.DriverContext); ok {
		var err error
		if inner, err = dc.OpenConnector(dsn); err != nil {
			return nil, err
		}
	} else {
		inner = dsnConnector{dsn: dsn, d: d.inner}
	}
	return newConnector(inner, d.cfg, d.opts, dsn)
}

// Dialect tells dialect.Of, and so Migrate, Lookup and the worker
// registry given the wrapped *sql.DB, the dialect of the database behind
// it. NewConnector has chosen it already, so it cannot fail here.
func (d *wrappedDriver) Dialect() dialect.Dialect {
	dd, _ := chooseDialect(d.cfg, d.opts.DriverName, d.inner)
	return dd
}

// dsnConnector is database/sql's fallback connector for drivers without
// DriverContext.
type dsnConnector struct {
	dsn string
	d   driver.Driver
}

func (t dsnConnector) Connect(context.Context) (driver.Conn, error) { return t.d.Open(t.dsn) }
func (t dsnConnector) Driver() driver.Driver                        { return t.d }

// Register registers a database/sql driver called name that wraps the
// registered driver innerName with cfg. Each sql.Open of it gets its own
// keys; share one Keys through opts.Keys to serve several pools. A name
// that is already registered is an error (database/sql would panic).
func Register(name, innerName string, cfg *Config, opts Options) (err error) {
	inner, err := lookupDriver(innerName)
	if err != nil {
		return err
	}
	if opts.DriverName == "" {
		opts.DriverName = innerName
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("idsql: register %q: %v", name, r)
		}
	}()
	sql.Register(name, &wrappedDriver{inner: inner, cfg: cfg, opts: opts})
	return nil
}

// lookupDriver finds a registered driver by name.
func lookupDriver(name string) (driver.Driver, error) {
	db, err := sql.Open(name, "")
	if err != nil {
		return nil, fmt.Errorf("idsql: driver %q is not registered (import it first): %w", name, err)
	}
	defer db.Close()
	return db.Driver(), nil
}

// conn is one wrapped connection.
type conn struct {
	inner driver.Conn
	// The inner connection as the optional interfaces that database/sql
	// and the statement path ask for at every statement, asserted once
	// (nil where it lacks one).
	execer    driver.ExecerContext
	queryer   driver.QueryerContext
	checker   driver.NamedValueChecker
	validator driver.Validator
	resetter  driver.SessionResetter
	c         *Connector
	rw        *rewrite.Rewriter // reads statements as the session's sql_mode says (MySQL)
	cat       *engine.Catalog   // the catalog read over this connection
	// broken is set when an INSERT may have reached the server and the
	// connection then failed: the pool must drop the connection, and the
	// caller must not have the statement retried.
	broken bool
	// skip holds filled statements the inner driver refused to run with
	// arguments (driver.ErrSkip: go-sql-driver/mysql without
	// interpolateParams); they are prepared, executed and closed.
	skip map[*rewrite.Plan]struct{}
	// buf is reused by filled executions (Exec, not Query: rows may
	// outlive the call), which hand it to the inner driver only for the
	// duration of the call.
	buf engine.Buffers
	// results and counts are where the results of filled Execs are
	// taken from (see result).
	results slots[result]
	counts  slots[countResult]
	// last is the engine's statement last planned on rw, so a connection
	// that runs one INSERT over and over skips the plan cache.
	last struct {
		query string
		rw    *rewrite.Rewriter
		st    *engine.Stmt
	}
}

// maxSkip bounds conn.skip; past it the set starts again.
const maxSkip = 256

// InnerConn returns the inner driver's connection from the value that
// sql.Conn.Raw passes to its function, or the value itself when it is not a
// wrapped connection.
func InnerConn(driverConn any) any {
	switch c := driverConn.(type) {
	case *conn:
		return c.inner
	case checkingConn:
		return c.inner
	}
	return driverConn
}

func (c *conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *conn) Close() error { return c.inner.Close() }

func (c *conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// BeginTx forwards to the inner ConnBeginTx, or to Begin for default
// options.
func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.inner.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	if opts.Isolation != driver.IsolationLevel(sql.LevelDefault) || opts.ReadOnly {
		return nil, errors.New("idsql: the inner driver does not support isolation levels or read-only transactions")
	}
	return c.inner.Begin() //nolint:staticcheck // the inner driver has nothing newer
}

// statement is query with args as the engine runs it over this
// connection: its last statement when query is the one it ran last, the
// plan NamedExec made for it (nm), or a plan to make. With reuse, the
// connection's buffers hold the filled arguments until the next
// statement (an Exec's: a Query's rows may outlive the call).
func (c *conn) statement(s *engine.Statement[[]driver.NamedValue], query string, args []driver.NamedValue, nm *namedExec, reuse bool) *engine.Statement[[]driver.NamedValue] {
	s.Query, s.Args, s.Rewriter, s.Catalog = query, args, c.rw, c.cat
	switch l := &c.last; {
	case l.st != nil && l.rw == c.rw && l.query == query:
		s.Stmt = l.st
	case nm != nil && nm.plan != nil && nm.rw == c.rw && nm.query == query:
		s.Plan = nm.plan
	}
	if nm != nil {
		s.Named = &nm.rows
	}
	if reuse {
		s.Buffers = &c.buf
	}
	return s
}

// ran keeps st, the statement the engine ran for query, as the
// connection's last one when the engine caches it, so a connection that
// runs one INSERT over and over skips the plan cache.
func (c *conn) ran(query string, st *engine.Stmt) {
	if st != nil && st.Cached() && c.last.st != st {
		c.last.query, c.last.rw, c.last.st = query, c.rw, st
	}
}

// connArgs is how database/sql's arguments to a connection look to the
// engine. Where the inner driver checks the arguments itself (a
// driver.NamedValueChecker) they may be of any type, a query rewriter
// among them (rewriterArg); otherwise database/sql has converted them to
// driver values and there is nothing to find.
type connArgs struct{ *conn }

func (a connArgs) Named(p *rewrite.Plan, args []driver.NamedValue) ([]driver.NamedValue, error) {
	return checkedArgs(p, args, a.checker != nil)
}

func (connArgs) Filled(_ []driver.NamedValue, f *engine.Filled) []driver.NamedValue { return f.Args }

// checkedArgs returns args, refusing a query rewriter among them when
// checked (see connArgs).
func checkedArgs(p *rewrite.Plan, args []driver.NamedValue, checked bool) ([]driver.NamedValue, error) {
	if checked {
		if err := rewriterArg(p, args); err != nil {
			return nil, err
		}
	}
	return args, nil
}

// filled tells NamedExec, once a filled statement has succeeded with res,
// which keys its rows were given (none when they are not known to be
// written).
func (c *conn) filled(nm *namedExec, p *rewrite.Plan, f *engine.Filled, res driver.Result) {
	if nm == nil || !nm.rows.Describes(p) {
		return
	}
	n, err := res.RowsAffected()
	if err != nil {
		n = -1
	}
	nm.got = c.c.eng.Written(p, f, nm.rows.Keys, n)
}

// lost maps the error of a filled statement that may have reached the
// server when it shows the connection failed: the pool must drop the
// connection, and database/sql must not retry the statement.
func (c *conn) lost(p *rewrite.Plan, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, driver.ErrBadConn):
		c.broken = true
		// Not wrapped with %w: database/sql would retry the INSERT on another
		// connection, and it may have been written already.
		return fmt.Errorf("idsql: insert into %s: the connection failed after the statement was sent; the row may or may not have been written: %v",
			p.Table, err)
	case c.c.dialect.ConnectionLost(err):
		c.broken = true
		return fmt.Errorf("idsql: insert into %s: the connection was lost after the statement was sent; the row may or may not have been written: %w",
			p.Table, err)
	}
	return err
}

// skipped remembers that the inner driver refused p with arguments
// (nothing was sent): later executions prepare at once.
func (c *conn) skipped(p *rewrite.Plan) {
	if c.skip == nil || len(c.skip) >= maxSkip {
		c.skip = make(map[*rewrite.Plan]struct{})
	}
	c.skip[p] = struct{}{}
}

// prepare prepares query on the inner connection.
func (c *conn) prepare(ctx context.Context, query string) (driver.Stmt, error) {
	if pc, ok := c.inner.(driver.ConnPrepareContext); ok {
		return pc.PrepareContext(ctx, query)
	}
	return c.inner.Prepare(query)
}

// ExecContext fills INSERTs into configured tables and forwards the rest.
// A filled statement the inner driver will not run with arguments is
// prepared, executed and closed here, as database/sql would do it, with
// the arguments it has converted already.
func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	nm := c.c.namedIn(ctx)
	var s engine.Statement[[]driver.NamedValue]
	ran, err := engine.Run(ctx, c.c.eng, execDoor{connArgs{c}}, c.statement(&s, query, args, nm, true))
	c.ran(query, ran.Stmt)
	if err != nil || ran.Stmt == nil {
		return ran.Result, err
	}
	p := ran.Stmt.Plan
	c.filled(nm, p, ran.Filled, ran.Result)
	return c.result(ran.Result, p, ran.Filled.IDs), nil
}

// execDoor and queryDoor are a connection as the engine's door of its
// Execs and of its Queries.
// Each is one pointer, so making one costs no allocation.
type (
	execDoor  struct{ connArgs }
	queryDoor struct{ connArgs }
)

// Send runs an Exec: one that passes unchanged on the inner connection
// (database/sql prepares it when the inner driver has no ExecerContext),
// a filled one with run.
func (d execDoor) Send(ctx context.Context, st *engine.Stmt, query string, args []driver.NamedValue) (driver.Result, error) {
	c := d.conn
	if st != nil {
		res, _, err := c.run(ctx, st.Plan, args, false)
		return res, err
	}
	if c.execer == nil {
		return nil, driver.ErrSkip
	}
	res, err := c.execer.ExecContext(ctx, query, args)
	if err == nil && c.c.dialect.SetsSQLMode(query) {
		if err := c.readSQLMode(ctx); err != nil {
			c.broken = true // statements can no longer be read as the server reads them
			return nil, err
		}
	}
	return res, err
}

// Send runs a Query; see execDoor.Send.
func (d queryDoor) Send(ctx context.Context, st *engine.Stmt, query string, args []driver.NamedValue) (driver.Rows, error) {
	c := d.conn
	if st != nil {
		_, rows, err := c.run(ctx, st.Plan, args, true)
		return rows, err
	}
	if c.queryer == nil {
		return nil, driver.ErrSkip
	}
	return c.queryer.QueryContext(ctx, query, args)
}

// run runs the filled statement of p with the arguments full: an Exec, or
// with query a Query. Where the inner driver refuses to run it with
// arguments (driver.ErrSkip: nothing was sent), or has no ExecerContext
// or QueryerContext, it runs on an inner statement prepared for it, as
// database/sql would, which is closed after an Exec and with the rows of
// a Query. Errors of a statement that may have been sent go through lost.
func (c *conn) run(ctx context.Context, p *rewrite.Plan, full []driver.NamedValue, query bool) (res driver.Result, rows driver.Rows, err error) {
	skip := false
	if c.skip != nil { // a lookup in a nil map still hashes the key
		_, skip = c.skip[p]
	}
	if !skip && (query && c.queryer != nil || !query && c.execer != nil) {
		if query {
			rows, err = c.queryer.QueryContext(ctx, p.Query, full)
		} else {
			res, err = c.execer.ExecContext(ctx, p.Query, full)
		}
		switch {
		case err == nil:
			return res, rows, nil
		case !errors.Is(err, driver.ErrSkip):
			return nil, nil, c.lost(p, err)
		}
		c.skipped(p)
	}
	st, err := c.prepare(ctx, p.Query)
	if err != nil {
		return nil, nil, err // nothing was executed
	}
	if query {
		if rows, err = stmtQuery(ctx, st, full); err != nil {
			st.Close()
			return nil, nil, c.lost(p, err)
		}
		return nil, stmtRows{rows, st}, nil
	}
	defer st.Close()
	if res, err = stmtExec(ctx, st, full); err != nil {
		return nil, nil, c.lost(p, err)
	}
	return res, nil, nil
}

// Exec is the old driver.Execer. database/sql calls ExecContext, but code
// that reaches the connection through sql.Conn.Raw may assert Execer, as
// go-sql-driver/mysql's recipe for one result per statement of a
// multi-statement Exec does: it runs as ExecContext, and a statement that
// passes unchanged answers the inner driver's own result.
func (c *conn) Exec(query string, args []driver.Value) (driver.Result, error) {
	return c.ExecContext(context.Background(), query, named(args))
}

// Query is the old driver.Queryer, for code that reaches the connection
// through sql.Conn.Raw: it runs as QueryContext.
func (c *conn) Query(query string, args []driver.Value) (driver.Rows, error) {
	return c.QueryContext(context.Background(), query, named(args))
}

// QueryContext fills INSERT ... RETURNING into configured tables and
// forwards the rest; see ExecContext.
func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	var s engine.Statement[[]driver.NamedValue]
	ran, err := engine.Run(ctx, c.c.eng, queryDoor{connArgs{c}}, c.statement(&s, query, args, nil, false))
	c.ran(query, ran.Stmt)
	return ran.Result, err
}

// stmtExec executes an inner statement.
func stmtExec(ctx context.Context, st driver.Stmt, args []driver.NamedValue) (driver.Result, error) {
	if ex, ok := st.(driver.StmtExecContext); ok {
		return ex.ExecContext(ctx, args)
	}
	return st.Exec(values(args)) //nolint:staticcheck // fallback for old drivers
}

// stmtQuery queries an inner statement.
func stmtQuery(ctx context.Context, st driver.Stmt, args []driver.NamedValue) (driver.Rows, error) {
	if q, ok := st.(driver.StmtQueryContext); ok {
		return q.QueryContext(ctx, args)
	}
	return st.Query(values(args)) //nolint:staticcheck // fallback for old drivers
}

// PrepareContext returns the inner statement itself for statements that
// pass through, and a filling statement for INSERTs into configured tables.
func (c *conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := c.c.eng.Plan(ctx, c.rw, c.cat, query)
	if err != nil {
		return nil, err
	}
	if st != nil {
		query = st.Plan.Query
	}
	inner, err := c.prepare(ctx, query)
	if err != nil || st == nil {
		return inner, err
	}
	return &fillStmt{inner: inner, conn: c, plan: st.Plan, st: st}, nil
}

func (c *conn) Ping(ctx context.Context) error {
	if p, ok := c.inner.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

func (c *conn) ResetSession(ctx context.Context) error {
	if c.broken {
		return driver.ErrBadConn
	}
	if c.resetter != nil {
		return c.resetter.ResetSession(ctx)
	}
	return nil
}

func (c *conn) IsValid() bool {
	if c.broken {
		return false
	}
	if c.validator != nil {
		return c.validator.IsValid()
	}
	return true
}

// checkingConn is the connection of an inner driver that checks its own
// arguments (driver.NamedValueChecker): only such a connection is one, so
// database/sql converts the arguments of the others itself, as it does
// without idsql, at no cost of a call per argument.
type checkingConn struct{ *conn }

func (c checkingConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.checker.CheckNamedValue(nv)
}

// fillStmt is a prepared INSERT into a configured table: every execution
// gets fresh IDs.
type fillStmt struct {
	inner driver.Stmt
	conn  *conn
	plan  *rewrite.Plan
	st    *engine.Stmt
}

func (s *fillStmt) Close() error { return s.inner.Close() }

// NumInput is the number of arguments the caller passes.
func (s *fillStmt) NumInput() int { return s.plan.Params }

func (s *fillStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *fillStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *fillStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	c := s.conn
	nm := c.c.namedIn(ctx)
	var st engine.Statement[[]driver.NamedValue]
	ran, err := engine.Run(ctx, c.c.eng, stmtExecDoor{stmtArgs{s}}, s.statement(&st, args, nm, true))
	if err != nil {
		return nil, err
	}
	c.filled(nm, s.plan, ran.Filled, ran.Result)
	return c.result(ran.Result, s.plan, ran.Filled.IDs), nil
}

func (s *fillStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	var st engine.Statement[[]driver.NamedValue]
	ran, err := engine.Run(ctx, s.conn.c.eng, stmtQueryDoor{stmtArgs{s}}, s.statement(&st, args, nil, false))
	return ran.Result, err
}

// statement is an execution of s with args as the engine runs it; see
// conn.statement. database/sql hands a prepared statement's arguments to
// its CheckNamedValue, so they may be of any type (stmtArgs).
func (s *fillStmt) statement(st *engine.Statement[[]driver.NamedValue], args []driver.NamedValue, nm *namedExec, reuse bool) *engine.Statement[[]driver.NamedValue] {
	st.Stmt, st.Args, st.Catalog = s.st, args, s.conn.cat
	if nm != nil {
		st.Named = &nm.rows
	}
	if reuse {
		st.Buffers = &s.conn.buf
	}
	return st
}

// stmtArgs is how database/sql's arguments to a prepared INSERT look to
// the engine: they passed its CheckNamedValue, so they may be of any type
// (see connArgs).
type stmtArgs struct{ *fillStmt }

func (a stmtArgs) Named(p *rewrite.Plan, args []driver.NamedValue) ([]driver.NamedValue, error) {
	return checkedArgs(p, args, true)
}

func (stmtArgs) Filled(_ []driver.NamedValue, f *engine.Filled) []driver.NamedValue { return f.Args }

// stmtExecDoor and stmtQueryDoor are a prepared INSERT as the engine's
// door of its Execs and of its Queries: they run on the inner statement.
type (
	stmtExecDoor  struct{ stmtArgs }
	stmtQueryDoor struct{ stmtArgs }
)

// Send executes the inner statement.
func (d stmtExecDoor) Send(ctx context.Context, _ *engine.Stmt, _ string, args []driver.NamedValue) (driver.Result, error) {
	res, err := stmtExec(ctx, d.inner, args)
	return res, d.conn.lost(d.plan, err)
}

// Send queries the inner statement.
func (d stmtQueryDoor) Send(ctx context.Context, _ *engine.Stmt, _ string, args []driver.NamedValue) (driver.Rows, error) {
	rows, err := stmtQuery(ctx, d.inner, args)
	return rows, d.conn.lost(d.plan, err)
}

func (s *fillStmt) CheckNamedValue(nv *driver.NamedValue) error {
	if ch, ok := s.inner.(driver.NamedValueChecker); ok {
		return ch.CheckNamedValue(nv)
	}
	if s.conn.checker != nil {
		return s.conn.checker.CheckNamedValue(nv)
	}
	return driver.ErrSkip
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}

func values(args []driver.NamedValue) []driver.Value {
	v := make([]driver.Value, len(args))
	for i, a := range args {
		v[i] = a.Value
	}
	return v
}

// result is the result of a filled INSERT.
type result struct {
	inner driver.Result
	plan  *rewrite.Plan
	eng   *engine.Engine // decides what LastInsertId answers
	id    int64          // the first key idsql generated, when generated
	gen   bool           // a key was generated
}

// resultBlock is how many results a connection allocates at once.
const resultBlock = 64

// slots hands out values of T from arrays of resultBlock, one allocation
// per array. Each slot is handed out once and never again (the count only
// grows until a new array replaces the full one), so a value the caller
// keeps is not touched by later statements. A kept value keeps its array
// alive, at most resultBlock-1 other values with it.
type slots[T any] struct {
	a *[resultBlock]T
	n int // slots of a handed out
}

// next returns an unused slot.
func (s *slots[T]) next() *T {
	if s.a == nil || s.n == resultBlock {
		s.a, s.n = new([resultBlock]T), 0
	}
	p := &s.a[s.n]
	s.n++
	return p
}

// result wraps the inner result of a filled INSERT of plan p whose rows
// took keys. The results of a connection come from its slots, not one
// allocation per statement. An inner result that is a plain row count
// (lib/pq's and pgx's stdlib's driver.RowsAffected) is not kept: the count
// is, in a result without pointers.
func (c *conn) result(res driver.Result, p *rewrite.Plan, keys []int64) driver.Result {
	eng := c.c.eng
	if n, ok := res.(driver.RowsAffected); ok && len(keys) > 0 && !c.c.autoIncID {
		r := c.counts.next()
		r.id, _ = eng.InsertID(p, keys[0], true, int64(n))
		r.n = int64(n)
		return r
	}
	r := c.results.next()
	r.inner, r.plan, r.eng = res, p, eng
	if len(keys) > 0 {
		r.id, r.gen = keys[0], true
	}
	return r
}

// countResult is a result whose inner result was driver.RowsAffected and
// whose rows took keys (not on a database whose LastInsertId is its own
// AUTO_INCREMENT value): it answers as a result over that
// inner result would.
type countResult struct {
	id int64 // the first key idsql generated; 0 when it is not known to be written
	n  int64 // the inner result's row count
}

// LastInsertId answers as result.LastInsertId: the first key idsql
// generated, or 0 when it is not known to be written.
func (r *countResult) LastInsertId() (int64, error) { return r.id, nil }

func (r *countResult) RowsAffected() (int64, error) { return r.n, nil }

// LastInsertId answers the first key idsql generated for the statement, as
// MySQL answers the first AUTO_INCREMENT value of a multi-row INSERT. It
// never names a key that is not known to be written (engine.Known): a
// statement that inserted no row (ON CONFLICT DO NOTHING, INSERT IGNORE or
// INSERT OR IGNORE of a duplicate), and an upsert (ON CONFLICT ... DO
// UPDATE, ON DUPLICATE KEY UPDATE) that may have updated a row which keeps
// its own key, answer 0 (MySQL: the server's value, as without idsql: 0,
// or the AUTO_INCREMENT key of the row an upsert updated). On MySQL and
// MariaDB a one-row upsert that inserted answers its key; on PostgreSQL
// and SQLite an upsert always answers 0: use RETURNING. One whose rows
// all kept the caller's keys answers what the inner driver answers. A
// multi-row statement that skipped some of its rows (INSERT IGNORE, ON
// CONFLICT DO NOTHING) answers 0, as it cannot tell which were written:
// use RETURNING.
func (r *result) LastInsertId() (int64, error) {
	n, err := r.inner.RowsAffected()
	if err != nil {
		n = -1
	}
	id, server := r.eng.InsertID(r.plan, r.id, r.gen, n)
	if server {
		return r.inner.LastInsertId()
	}
	return id, nil
}

func (r *result) RowsAffected() (int64, error) { return r.inner.RowsAffected() }
