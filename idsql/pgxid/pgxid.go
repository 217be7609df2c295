package pgxid

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/dialect"
)

// What the package implements. DB and Tx are Queriers, so sqlc's pgx/v5
// DBTX (Exec, Query, QueryRow, and SendBatch and CopyFrom when the queries
// use them) takes either; Tx is a pgx.Tx.
var (
	_ Querier = (*pgxpool.Pool)(nil)
	_ Querier = (*pgx.Conn)(nil)
	_ Querier = pgx.Tx(nil)

	_ Querier = (*DB)(nil)
	_ Querier = (*Tx)(nil)
	_ pgx.Tx  = (*Tx)(nil)

	_ pgx.QueryRewriter = (*filling)(nil)
	_ pgx.BatchResults  = (*batchResults)(nil)
)

// Querier is what *pgxpool.Pool, *pgx.Conn and pgx.Tx have in common, and
// what New wraps.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
	Begin(ctx context.Context) (pgx.Tx, error)
}

// Options tune a DB. The zero value means the defaults.
type Options struct {
	// Keys issues the keys. Nil means keys built from the Config with
	// KeysOptions; DB.Close releases them.
	Keys *keyset.Keys
	// KeysOptions are used when Keys is nil. A nil DB means a database/sql
	// pool (pgx's stdlib driver) opened on the wrapped connection's
	// configuration; a nil Registry the worker table (idsql_workers) and a
	// nil SegmentStore the segment tables (idsql_alloc, idsql_alloc_log) in
	// that database, where idsql.Migrate creates them.
	KeysOptions keyset.KeysOptions
	// CacheSize bounds the rewrite plan cache; 0 means the default.
	CacheSize int
	// ObserveKeys, when set, is called after the keys of every statement
	// filled were drawn, as idsql.Options.ObserveKeys is.
	ObserveKeys func(ctx context.Context, table string, keys int, took time.Duration)
}

// shared is what a DB and every Tx begun from it have in common: the
// statement engine, whose pgx adapter this package is, and its keys.
type shared struct {
	eng  *engine.Engine
	keys *keyset.Keys
}

// session runs statements on one Querier, filling keys.
type session struct {
	q   Querier
	s   *shared
	cat *engine.Catalog // q's catalog, made once: Plan takes it at every call
	// conn is the one connection q runs on (a *pgx.Conn, or a Tx's), nil
	// for a pool; named holds the INSERTs prepared on it in filled form.
	conn  *pgx.Conn
	named *namedPlans
}

// DB fills keys for a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx. It is safe
// for concurrent use when what it wraps is (a pool is; a connection and a
// transaction are not).
type DB struct {
	session
	ownKeys   bool
	keysDB    *sql.DB // the pool behind owned keys
	closeOnce sync.Once
	closeErr  error
}

// Tx is a transaction whose statements get keys, as DB's do. It is a
// pgx.Tx. Conn returns the underlying *pgx.Conn, which does not fill keys.
type Tx struct {
	session
	tx pgx.Tx
}

// New wraps q (a *pgxpool.Pool, a *pgx.Conn or a pgx.Tx) so that INSERTs
// into the tables of cfg get their keys. Without Options.Keys it builds the
// keys (see Options.KeysOptions); Close releases them. Closing the DB does
// not close q.
func New(q Querier, cfg *keyset.Config, opts Options) (*DB, error) {
	switch q.(type) {
	case nil:
		return nil, errors.New("pgxid: New: the querier is nil")
	case *DB, *Tx:
		return nil, fmt.Errorf("pgxid: New: %T already fills keys; wrap the pool, connection or transaction inside it", q)
	}
	if cfg == nil {
		return nil, errors.New("pgxid: New: config is nil")
	}
	if cfg.Dialect != "" {
		if d, err := dialect.ByName(cfg.Dialect); err != nil || !d.SpeaksPgWire() {
			return nil, fmt.Errorf("pgxid: New: the configuration says dialect: %s, and pgx speaks PostgreSQL: remove the setting or set it to postgres", cfg.Dialect)
		}
	}
	db := &DB{session: session{q: q, s: &shared{keys: opts.Keys}}}
	switch c := q.(type) {
	case *pgx.Conn:
		db.conn, db.named = c, new(namedPlans)
	case pgx.Tx:
		db.conn, db.named = c.Conn(), new(namedPlans)
	}
	if opts.Keys == nil {
		ko := opts.KeysOptions
		if ko.DB == nil {
			cc, err := connConfig(q)
			if err != nil {
				return nil, err
			}
			db.keysDB = stdlib.OpenDB(*cc)
			ko.DB = db.keysDB
		}
		var err error
		if db.s.keys, err = keyset.NewKeysOn(cfg, ko, ko.DB, dialect.PostgreSQL); err != nil {
			if db.keysDB != nil {
				db.keysDB.Close()
			}
			return nil, err
		}
		db.ownKeys = true
	}
	uuids, err := cfg.UUIDTables()
	if err == nil {
		db.s.eng, err = engine.New(engine.Config{Dialect: dialect.PostgreSQL, Tables: engine.Tables(cfg.TableNames(), cfg.Tables),
			Keys: db.s.keys, UUIDs: uuids, ShardOf: keyset.ShardOf, CacheSize: opts.CacheSize, Prefix: "pgxid", Observe: opts.ObserveKeys})
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("pgxid: %w", err)
	}
	db.cat = db.s.eng.Catalog(reader{q})
	return db, nil
}

// connConfig returns the configuration of the connections q runs on.
func connConfig(q Querier) (*pgx.ConnConfig, error) {
	switch c := q.(type) {
	case *pgxpool.Pool:
		return c.Config().ConnConfig, nil
	case *pgx.Conn:
		return c.Config(), nil
	case pgx.Tx:
		return c.Conn().Config(), nil
	}
	return nil, fmt.Errorf("pgxid: New: cannot tell the connection settings of a %T to build keys on: pass Options.Keys or Options.KeysOptions.DB", q)
}

// Keys returns the key set, for code that needs a key before inserting.
func (db *DB) Keys() *keyset.Keys { return db.s.keys }

// Close releases the worker leases of keys New made and closes their
// database/sql pool. It does not close the wrapped pool or connection.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		var errs []error
		if db.ownKeys {
			errs = append(errs, db.s.keys.Close())
		}
		if db.keysDB != nil {
			errs = append(errs, db.keysDB.Close())
		}
		db.closeErr = errors.Join(errs...)
	})
	return db.closeErr
}

// Begin begins a transaction (a savepoint when the DB wraps a pgx.Tx)
// whose statements get keys.
func (db *DB) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := db.q.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return db.wrapTx(tx), nil
}

// BeginTx begins a transaction with options, on a pool or a connection.
func (db *DB) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	b, ok := db.q.(interface {
		BeginTx(context.Context, pgx.TxOptions) (pgx.Tx, error)
	})
	if !ok {
		return nil, fmt.Errorf("pgxid: BeginTx: a %T has no transaction options (use Begin)", db.q)
	}
	tx, err := b.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return db.wrapTx(tx), nil
}

// WrapTx returns tx, begun without the DB (pgx.BeginFunc on the pool, a
// batch's transaction), as a Tx that fills keys with the DB's keys.
func (db *DB) WrapTx(tx pgx.Tx) *Tx {
	if t, ok := tx.(*Tx); ok {
		return t
	}
	return db.wrapTx(tx)
}

// wrapTx wraps a transaction of this session.
func (s *session) wrapTx(tx pgx.Tx) *Tx {
	t := &Tx{session: session{q: tx, s: s.s, cat: s.s.eng.Catalog(reader{tx}), conn: tx.Conn(), named: s.named}, tx: tx}
	if t.conn != s.conn || t.named == nil {
		t.named = new(namedPlans)
	}
	return t
}

// Prepare prepares a statement on the wrapped connection or transaction
// (a pool has no single connection to prepare on). An INSERT that gets
// keys is prepared in its filled form, and executing it by name fills
// fresh keys each time.
func (db *DB) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return db.prepare(ctx, name, sql)
}

// Begin begins a pseudo nested transaction (a savepoint) that fills keys.
func (t *Tx) Begin(ctx context.Context) (pgx.Tx, error) {
	tx, err := t.tx.Begin(ctx)
	if err != nil {
		return nil, err
	}
	return t.wrapTx(tx), nil
}

// Commit commits the transaction (releases the savepoint).
func (t *Tx) Commit(ctx context.Context) error { return t.tx.Commit(ctx) }

// Rollback rolls the transaction back (to the savepoint).
func (t *Tx) Rollback(ctx context.Context) error { return t.tx.Rollback(ctx) }

// LargeObjects returns the transaction's large objects.
func (t *Tx) LargeObjects() pgx.LargeObjects { return t.tx.LargeObjects() }

// Conn returns the connection the transaction runs on. It does not fill
// keys.
func (t *Tx) Conn() *pgx.Conn { return t.tx.Conn() }

// Prepare prepares a statement in the transaction's connection; see
// DB.Prepare.
func (t *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return t.prepare(ctx, name, sql)
}

// Exec runs sql, filling keys (see the package documentation).
func (s *session) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if i := rewriterAt(args); i >= 0 {
		return s.q.Exec(ctx, sql, s.withFilling(args, i)...)
	}
	var st engine.Statement[[]any]
	ran, err := engine.Run(ctx, s.s.eng, execDoor{pgxArgs{s}}, s.statement(&st, sql, args))
	return ran.Result, err
}

// Query runs sql, filling keys (INSERT ... RETURNING).
func (s *session) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if i := rewriterAt(args); i >= 0 {
		return s.q.Query(ctx, sql, s.withFilling(args, i)...)
	}
	var st engine.Statement[[]any]
	ran, err := engine.Run(ctx, s.s.eng, queryDoor{pgxArgs{s}}, s.statement(&st, sql, args))
	if err != nil && ran.Result == nil {
		return errRows{err}, err // refused before it was sent
	}
	return ran.Result, err
}

// QueryRow runs sql, filling keys (INSERT ... RETURNING).
func (s *session) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if i := rewriterAt(args); i >= 0 {
		return s.q.QueryRow(ctx, sql, s.withFilling(args, i)...)
	}
	var st engine.Statement[[]any]
	ran, err := engine.Run(ctx, s.s.eng, rowDoor{pgxArgs{s}}, s.statement(&st, sql, args))
	if err != nil {
		return errRow{err}
	}
	return ran.Result
}

// statement is sql with args as the engine runs it on the session: a
// statement prepared on its connection by name is sent by that name.
func (s *session) statement(st *engine.Statement[[]any], sql string, args []any) *engine.Statement[[]any] {
	st.Query, st.Args, st.Catalog = sql, args, s.cat
	if st.Stmt = s.named.lookup(sql); st.Stmt != nil {
		st.Send = sql
	}
	return st
}

// pgxArgs is how pgx's arguments look to the engine: pgx's leading option
// arguments (QueryExecMode, ...), which pass as they are, then the
// statement's own.
type pgxArgs struct{ *session }

func (pgxArgs) Named(_ *rewrite.Plan, args []any) ([]driver.NamedValue, error) {
	return engine.Named(nil, ownArgs(args)), nil
}

func (pgxArgs) Filled(args []any, f *engine.Filled) []any { return filledArgs(args, f) }

// execDoor, queryDoor and rowDoor are a session as the engine's door of
// its Execs, Querys and QueryRows; each sends on the session's Querier.
type (
	execDoor  struct{ pgxArgs }
	queryDoor struct{ pgxArgs }
	rowDoor   struct{ pgxArgs }
)

func (d execDoor) Send(ctx context.Context, _ *engine.Stmt, sql string, args []any) (pgconn.CommandTag, error) {
	return d.q.Exec(ctx, sql, args...)
}

// Send queries; errors the rows meet later are mapped as Engine.Sent maps
// those of the call.
func (d queryDoor) Send(ctx context.Context, _ *engine.Stmt, sql string, args []any) (pgx.Rows, error) {
	rows, err := d.q.Query(ctx, sql, args...)
	if err != nil {
		return rows, err
	}
	return sentRows{rows, d.s.eng}, nil
}

// Send queries for one row, whose error is mapped as Engine.Sent maps
// those of a call.
func (d rowDoor) Send(ctx context.Context, _ *engine.Stmt, sql string, args []any) (pgx.Row, error) {
	return sentRow{d.q.QueryRow(ctx, sql, args...), d.s.eng}, nil
}

// plan returns the statement sql runs, and the text to send for it (a
// statement prepared by name is sent by its name); nil when sql passes
// unchanged.
func (s *session) plan(ctx context.Context, sql string) (*engine.Stmt, string, error) {
	if st := s.named.lookup(sql); st != nil {
		return st, sql, nil
	}
	st, err := s.s.eng.Plan(ctx, s.s.eng.Default(), s.cat, sql)
	if err != nil || st == nil {
		return nil, sql, err
	}
	return st, st.Plan.Query, nil
}

// rewriterAt returns the index of a pgx.QueryRewriter among the leading
// option arguments pgx reads (QueryExecMode, QueryResultFormats,
// QueryResultFormatsByOID), or -1.
func rewriterAt(args []any) int {
	for i, a := range args {
		switch a.(type) {
		case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
		case pgx.QueryRewriter:
			return i
		default:
			return -1
		}
	}
	return -1
}

// ownArgs returns args without pgx's leading option arguments
// (QueryExecMode, QueryResultFormats, QueryResultFormatsByOID): the
// statement's own, $1 first.
func ownArgs(args []any) []any {
	for i, a := range args {
		switch a.(type) {
		case pgx.QueryExecMode, pgx.QueryResultFormats, pgx.QueryResultFormatsByOID:
		default:
			return args[i:]
		}
	}
	return nil
}

// withFilling returns a copy of args whose rewriter at i fills keys after
// it has rewritten the statement.
func (s *session) withFilling(args []any, i int) []any {
	out := make([]any, len(args))
	copy(out, args)
	out[i] = &filling{s: s, user: args[i].(pgx.QueryRewriter)}
	return out
}

// filling is the caller's pgx.QueryRewriter (pgx.NamedArgs, say) followed
// by the key filling. pgx calls it with the connection that runs the
// statement, so the catalog is read there, in its transaction.
type filling struct {
	s    *session
	user pgx.QueryRewriter
}

// RewriteQuery implements pgx.QueryRewriter.
func (f *filling) RewriteQuery(ctx context.Context, conn *pgx.Conn, sql string, args []any) (string, []any, error) {
	sql, args, err := f.user.RewriteQuery(ctx, conn, sql, args)
	if err != nil {
		return "", nil, err
	}
	s := &engine.Statement[[]any]{Query: sql, Args: args, Catalog: f.s.s.eng.Catalog(reader{conn})}
	if st := f.s.named.lookup(sql); st != nil && conn == f.s.conn {
		s.Stmt, s.Send = st, sql
	}
	ran, err := engine.Run(ctx, f.s.s.eng, rewriteDoor{pgxArgs{f.s}}, s)
	switch {
	case ran.Stmt == nil || s.Send != "":
		// sql itself: a statement that passes unchanged, or one prepared
		// under that name
	default:
		sql = ran.Stmt.Plan.Query
	}
	return sql, ran.Result, err
}

// rewriteDoor is a session as the engine's door of a statement that pgx
// sends itself once a query rewriter (filling) has returned it: its Send
// sends nothing and hands back the arguments to send.
type rewriteDoor struct{ pgxArgs }

func (rewriteDoor) Send(_ context.Context, _ *engine.Stmt, _ string, args []any) ([]any, error) {
	return args, nil
}

// filledArgs returns pgx's leading option arguments of args (see fill),
// then the arguments of f, an execution filled with the rest of args.
func filledArgs(args []any, f *engine.Filled) []any {
	lead := len(args) - len(ownArgs(args))
	out := make([]any, lead, lead+len(f.Args))
	copy(out, args[:lead])
	for _, a := range f.Args {
		out = append(out, a.Value)
	}
	return out
}

// namedPlans are the filled INSERTs prepared on one connection, by
// statement name.
type namedPlans struct {
	n     atomic.Int32 // len(plans): lookups cost one load while there are none
	mu    sync.Mutex
	plans map[string]*engine.Stmt
}

// lookup returns the plan prepared as name, or nil.
func (n *namedPlans) lookup(name string) *engine.Stmt {
	if n == nil || n.n.Load() == 0 {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.plans[name]
}

// set records (or, with a nil plan, forgets) the plan prepared as name.
func (n *namedPlans) set(name string, st *engine.Stmt) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if st == nil {
		delete(n.plans, name)
	} else {
		if n.plans == nil {
			n.plans = make(map[string]*engine.Stmt)
		}
		n.plans[name] = st
	}
	n.n.Store(int32(len(n.plans)))
}

// prepare prepares sql as name on the session's one connection.
func (s *session) prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	pr, ok := s.q.(interface {
		Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error)
	})
	if !ok || s.named == nil {
		return nil, fmt.Errorf("pgxid: Prepare %q: a %T has no single connection to prepare on: prepare in a transaction or on a *pgx.Conn", name, s.q)
	}
	st, err := s.s.eng.Plan(ctx, s.s.eng.Default(), s.cat, sql)
	if err != nil {
		return nil, err
	}
	if st == nil {
		sd, err := pr.Prepare(ctx, name, sql)
		if err == nil && name != "" {
			s.named.set(name, nil)
		}
		return sd, err
	}
	sd, err := pr.Prepare(ctx, name, st.Plan.Query)
	if err == nil && name != "" {
		s.named.set(name, st)
	}
	return sd, err
}
