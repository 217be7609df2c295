package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/internal/dialect"
)

// StoreSQL is the SQL of an SQLStore on one database: its dialect, which
// decides everything that differs only by database (bind parameters,
// identifier quoting, the durable-commit statement, the migration lock,
// UPDATE ... RETURNING, duplicate keys), and the store's tables and
// statements as that database needs them written. PostgresSQL returns
// PostgreSQL's; packages sqlitestore and mysqlstore have SQLite's and
// MySQL/MariaDB's. The other queries are built by the store from
// standard SQL.
type StoreSQL struct {
	// Dialect is the database's dialect.
	Dialect dialect.Dialect

	// AllocSchema is the idempotent DDL creating idsql_alloc. Migrate runs
	// it only when the store allocates from idsql_alloc, not from a Leaf
	// table (StoreSettings.LeafTable).
	AllocSchema string

	// LogSchema is the idempotent DDL Migrate runs, in order, to create
	// idsql_alloc_log and its indexes.
	LogSchema []string

	// Allocate, when set, returns one statement that both advances the
	// key's row of t and logs the range, saving the round trips of a
	// transaction (PostgreSQL: a data-modifying WITH; MySQL: the CALL of a
	// stored procedure). Its bind parameters are, in order: step (0: the
	// stored step), now, key, MaxID, instance; it returns max_id and the
	// stored step, or no row when the key is missing or exhausted. The log
	// row holds the range as Table.Range computes it. When nil, Allocate
	// runs the UPDATE and the INSERT in a transaction.
	//
	// The statement runs in a transaction of its own and must make that
	// transaction's commit durable itself, as the dialect's DurableCommit
	// statement does for the two-statement form (PostgreSQL: its
	// DurableCommitExpr in the statement, which costs no round trip).
	Allocate func(t Table) string

	// AllocateSetup, when set with Allocate, returns more idempotent DDL
	// that the Allocate statement needs (MySQL: the stored procedure).
	// Migrate runs it last, in its transaction tx, after the tables exist;
	// it may read the catalog through tx.
	AllocateSetup func(ctx context.Context, tx *sql.Tx, t Table) ([]string, error)

	// PrepareAllocate prepares the Allocate statement once and reuses it
	// (database/sql prepares it again on each pooled connection it runs
	// on). go-sql-driver/mysql otherwise prepares, executes and closes a
	// statement at every call with arguments (two round trips instead of
	// one) unless the DSN sets interpolateParams.
	PrepareAllocate bool
}

// Table is the allocation table of a store, as a StoreSQL's statements
// need it.
type Table struct {
	Name   string // as configured: "idsql_alloc", "leaf_alloc", "leafdb.leaf_alloc"
	Quoted string // Name quoted for the dialect, ready to splice into SQL

	// Leaf says the table counts as Meituan Leaf does: max_id is the next
	// ID to hand out, and an allocation that moves it from m to m+n owns
	// [m, m+n-1]. In idsql_alloc max_id is the last ID handed out, and the
	// same allocation owns [m+1, m+n]. Leaf does not write update_time
	// either (its column updates itself), and neither does the store on a
	// Leaf table.
	Leaf bool
}

// Range returns the first and last ID of the range an allocation owns
// when it leaves max_id at maxID after advancing it by n.
func (t Table) Range(maxID, n int64) (first, last int64) {
	if t.Leaf {
		return maxID - n, maxID - 1
	}
	return maxID - n + 1, maxID
}

// LastOffset is what Table.Range subtracts from max_id to get the last ID
// of a range, for SQL that computes it: 0, or 1 on a Leaf table. The first
// ID is then max_id - n + 1 - LastOffset.
func (t Table) LastOffset() int {
	if t.Leaf {
		return 1
	}
	return 0
}

// PostgresSQL returns the StoreSQL for PostgreSQL.
func PostgresSQL() StoreSQL {
	return StoreSQL{
		Dialect: dialect.PostgreSQL,
		AllocSchema: `CREATE TABLE IF NOT EXISTS idsql_alloc (
	biz_tag     TEXT PRIMARY KEY,
	max_id      BIGINT NOT NULL DEFAULT 0 CHECK (max_id >= 0),
	step        BIGINT NOT NULL CHECK (step > 0),
	description TEXT NOT NULL DEFAULT '',
	update_time TIMESTAMPTZ NOT NULL DEFAULT now()
)`,
		LogSchema: []string{
			`CREATE TABLE IF NOT EXISTS idsql_alloc_log (
	id       BIGSERIAL PRIMARY KEY,
	biz_tag  TEXT NOT NULL,
	first_id BIGINT NOT NULL,
	last_id  BIGINT NOT NULL,
	instance TEXT NOT NULL,
	created  TIMESTAMPTZ NOT NULL,
	CHECK (first_id <= last_id)
)`,
			`CREATE INDEX IF NOT EXISTS idsql_alloc_log_first ON idsql_alloc_log (first_id)`,
			`CREATE INDEX IF NOT EXISTS idsql_alloc_log_key ON idsql_alloc_log (biz_tag, first_id)`,
		},
		Allocate: postgresAllocate,
	}
}

// postgresAllocate is PostgreSQL's one-statement allocation.
// set_config(..., true) lasts until the end of the statement's own
// (implicit) transaction, commit included, so the session keeps its
// setting (see dialect.DurableCommit). p is scanned by u, so it is evaluated before
// any row is changed. On a Leaf table update_time is left alone, as Leaf
// leaves it.
func postgresAllocate(t Table) string {
	touch := ", update_time = $2"
	if t.Leaf {
		touch = ""
	}
	return fmt.Sprintf(`WITH p AS (SELECT CAST($1 AS BIGINT) AS step, %[4]s AS sync),
u AS (
	UPDATE %[1]s a
	SET max_id = a.max_id + CASE WHEN p.step > 0 THEN p.step ELSE a.step END%[2]s
	FROM p
	WHERE a.biz_tag = $3 AND a.max_id <= CAST($4 AS BIGINT) - CASE WHEN p.step > 0 THEN p.step ELSE a.step END
	RETURNING a.max_id, a.step, CASE WHEN p.step > 0 THEN p.step ELSE a.step END AS used
),
l AS (
	INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created)
	SELECT $3, u.max_id - u.used + 1 - %[3]d, u.max_id - %[3]d, $5, CAST($2 AS TIMESTAMPTZ) FROM u
)
SELECT max_id, step FROM u`, t.Quoted, touch, t.LastOffset(), dialect.PostgreSQL.DurableCommitExpr())
}

// StoreSettings configures an SQLStore. The zero value means idsql's own
// tables, idsql_alloc and idsql_alloc_log.
type StoreSettings struct {
	// LeafTable, when set, names a Meituan Leaf allocation table to
	// allocate from instead of idsql_alloc: "leaf_alloc", or
	// "database.leaf_alloc" (schema-qualified on PostgreSQL). It must have
	// Leaf's columns biz_tag, max_id, step, description and update_time;
	// Migrate checks that it exists and never creates it.
	//
	// The store then counts as Leaf does (see Table.Leaf) and allocates
	// with the same atomic UPDATE ... SET max_id = max_id + step WHERE
	// biz_tag = ?, so Leaf servers may keep allocating from the same rows
	// while idsql does: the row lock orders both and their ranges never
	// overlap. idsql's own ranges are still logged in idsql_alloc_log
	// (Leaf's are not, so Lookup knows only idsql's).
	LeafTable string
}

// SQLStore is the Store on a database/sql database: PostgreSQL (through any
// driver, lib/pq in this project's tests) or, with packages mysqlstore and
// sqlitestore, MySQL/MariaDB and SQLite.
//
// One allocation is one transaction: the UPDATE of the key's row in
// idsql_alloc (or the Leaf table), which yields the new max_id, and the
// INSERT of the range into idsql_alloc_log. The row lock taken by the UPDATE orders concurrent
// allocators, so ranges of one key never overlap, whichever process asks.
//
// On PostgreSQL that transaction always commits with synchronous_commit =
// on, whatever the server or the connection says, so a range is on disk
// before it is handed out. (The commit flushes the WAL written before it, so
// the key's creation is durable by then too.)
type SQLStore struct {
	db    *sql.DB
	sql   StoreSQL
	table Table
	now   func() time.Time

	qAllocate, qAllocateRead, qAllocateSQL, qLog, qExists, qKeys, qList, qInsert, qDelete, qLookup, qRanges string

	prepMu   sync.Mutex
	prepared *sql.Stmt // the Allocate statement, with StoreSQL.PrepareAllocate

	acceptLazy atomic.Bool       // AcceptLazyCommits
	oneWriter  atomic.Bool       // OneWriterNode
	writers    dialect.OneWriter // the multi-writer check of allocations
}

// AcceptLazyCommits makes the store allocate on a PostgreSQL primary that
// streams to a standby a failover could promote without the primary's
// last commits (an asynchronous one, or one whose sync_state the role
// cannot read), taking the risk that a failover to it hands a range out
// again. By default such an allocation fails with ErrNotDurable, naming
// the standbys and synchronous_standby_names: its keys, handed to rows or
// to callers outside the database, could be handed out a second time.
// idsql sets it from holder.accept_lazy_commits.
func (s *SQLStore) AcceptLazyCommits(accept bool) { s.acceptLazy.Store(accept) }

// OneWriterNode says every process reaches a multi-writer cluster (a
// MariaDB Galera cluster) through one node at a time, so that allocations
// are that node's own transactions; each then first waits until the node
// has applied what the cluster committed before (a node that just took
// over from a failed one). Without it an allocation on a Galera node
// fails with ErrMultiWriter: the cluster can lose one of two concurrent
// updates of a key's row made on different nodes, and hand a range out
// twice. idsql sets it from holder.one_writer_node.
func (s *SQLStore) OneWriterNode(one bool) { s.oneWriter.Store(one) }

// durable refuses an allocation a failover could lose (see
// AcceptLazyCommits) or a multi-writer cluster could repeat (see
// OneWriterNode). It costs a query of the server's standbys on
// PostgreSQL, and on MySQL one query in the store's life (and a wait on a
// Galera node).
func (s *SQLStore) durable(ctx context.Context) error {
	if err := s.writers.Check(ctx, s.sql.Dialect, s.db, s.oneWriter.Load(), ErrMultiWriter, "an allocation of a segment range"); err != nil {
		return err
	}
	if s.acceptLazy.Load() {
		return nil
	}
	standbys, err := s.sql.Dialect.UnsafeStandbys(ctx, s.db)
	if err != nil || standbys == nil {
		return err
	}
	return fmt.Errorf("%w: the server streams to standbys that may lack its last commits: %s; a failover to one can lose this "+
		"allocation and hand its range out again. List the standbys a failover may promote in synchronous_standby_names "+
		"(allocations ask for synchronous_commit on), give the role pg_read_all_stats when it cannot read sync_state, "+
		"or set holder.accept_lazy_commits: true (SQLStore.AcceptLazyCommits) to take that risk",
		ErrNotDurable, strings.Join(standbys, ", "))
}

var _ Store = (*SQLStore)(nil)

// NewPostgresStore returns an SQLStore on a PostgreSQL database.
func NewPostgresStore(db *sql.DB) *SQLStore { return NewSQLStore(db, PostgresSQL()) }

// NewSQLStore returns an SQLStore speaking d on db, with idsql's own
// tables.
func NewSQLStore(db *sql.DB, d StoreSQL) *SQLStore {
	s, err := NewSQLStoreWith(db, d, StoreSettings{})
	if err != nil {
		panic(err) // the zero StoreSettings are valid
	}
	return s
}

// NewSQLStoreWith returns an SQLStore speaking d on db, configured by st.
// An invalid setting yields an error wrapping ErrInvalidSettings that names
// the field.
func NewSQLStoreWith(db *sql.DB, d StoreSQL, st StoreSettings) (*SQLStore, error) {
	t := Table{Name: "idsql_alloc"}
	if st.LeafTable != "" {
		t = Table{Name: st.LeafTable, Leaf: true}
	}
	quoted, err := d.Dialect.QuoteTable(t.Name)
	if err != nil {
		return nil, fmt.Errorf("segment: StoreSettings.LeafTable: %w: %w", ErrInvalidSettings, err)
	}
	t.Quoted = quoted
	s := &SQLStore{db: db, sql: d, table: t, now: time.Now}
	q := func(query string) string {
		return d.Dialect.Rebind(strings.ReplaceAll(query, "{table}", t.Quoted))
	}
	touch := ", update_time = ?"
	if t.Leaf {
		touch = ""
	}
	if !d.Dialect.UpdateReturning() {
		// The database binds int64 arguments as BIGINT: no casts needed.
		s.qAllocate = q(`UPDATE {table}
	SET max_id = max_id + CASE WHEN ? > 0 THEN ? ELSE step END` + touch + `
	WHERE biz_tag = ? AND max_id <= ? - CASE WHEN ? > 0 THEN ? ELSE step END`)
		s.qAllocateRead = q(`SELECT max_id, step FROM {table} WHERE biz_tag = ?`)
	} else {
		s.qAllocate = q(`UPDATE {table}
	SET max_id = max_id + CASE WHEN CAST(? AS BIGINT) > 0 THEN CAST(? AS BIGINT) ELSE step END` + touch + `
	WHERE biz_tag = ? AND max_id <= CAST(? AS BIGINT) - CASE WHEN CAST(? AS BIGINT) > 0 THEN CAST(? AS BIGINT) ELSE step END
	RETURNING max_id, step`)
	}
	if d.Allocate != nil {
		s.qAllocateSQL = d.Allocate(t)
	}
	s.qLog = q(`INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created) VALUES (?, ?, ?, ?, ?)`)
	s.qExists = q(`SELECT max_id, step FROM {table} WHERE biz_tag = ?`)
	s.qKeys = q(`SELECT biz_tag FROM {table} ORDER BY biz_tag`)
	s.qList = q(`SELECT biz_tag, max_id, step, description, update_time FROM {table} ORDER BY biz_tag`)
	cols, vals := `biz_tag, max_id, step, description, update_time`, `?, ?, ?, ?, ?`
	if t.Leaf {
		cols, vals = `biz_tag, max_id, step, description`, `?, ?, ?, ?`
	}
	s.qInsert = q(`INSERT INTO {table} (` + cols + `) VALUES (` + vals + `)` + d.Dialect.OnConflictDoNothing("biz_tag"))
	s.qDelete = q(`DELETE FROM {table} WHERE biz_tag = ?`)
	s.qLookup = q(`SELECT biz_tag, first_id, last_id, instance, created FROM idsql_alloc_log WHERE first_id <= ? AND last_id >= ? ORDER BY biz_tag, first_id`)
	s.qRanges = q(`SELECT biz_tag, first_id, last_id, instance, created FROM idsql_alloc_log WHERE biz_tag = ? ORDER BY first_id`)
	return s, nil
}

// Table returns the allocation table the store uses.
func (s *SQLStore) Table() Table { return s.table }

// DB returns the database the store uses.
func (s *SQLStore) DB() *sql.DB { return s.db }

// Migrate creates idsql_alloc and idsql_alloc_log if they do not exist,
// and whatever else the dialect's one-statement allocation needs (on MySQL
// a stored procedure). With StoreSettings.LeafTable it checks that the Leaf
// table exists with Leaf's columns instead of creating idsql_alloc. It is
// idempotent and safe to run from several processes at once.
func (s *SQLStore) Migrate(ctx context.Context) error {
	fail := func(err error) error { return fmt.Errorf("segment: migrate (%s): %w", s.sql.Dialect, err) }
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	var stmts []string
	// PostgreSQL's CREATE TABLE IF NOT EXISTS is not safe against a
	// concurrent twin: a transaction lock serializes migrations. MySQL's
	// metadata lock does, and SQLite has one writer.
	if lock := s.sql.Dialect.XactLock("8315429661"); lock != "" {
		stmts = append(stmts, lock)
	}
	if !s.table.Leaf {
		stmts = append(stmts, s.sql.AllocSchema)
	}
	stmts = append(stmts, s.sql.LogSchema...)
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fail(err)
		}
	}
	if s.table.Leaf {
		// Every column the store reads or writes, so that a wrong table
		// fails here rather than at the first allocation.
		rows, err := tx.QueryContext(ctx, `SELECT biz_tag, max_id, step, description, update_time FROM `+s.table.Quoted+` WHERE 1 = 0`)
		if err != nil {
			return fail(fmt.Errorf("Leaf table %s: %w", s.table.Name, err))
		}
		rows.Close()
	}
	if s.sql.Allocate != nil && s.sql.AllocateSetup != nil {
		setup, err := s.sql.AllocateSetup(ctx, tx, s.table)
		if err != nil {
			return fail(err)
		}
		for _, q := range setup {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return fail(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// allocateAttempts bounds how often Allocate runs an allocation that the
// database rolled back whole for a conflict.
const allocateAttempts = 5

// Allocate implements Store: one transaction advancing the key's max_id
// and logging the range. An allocation the database rolled back whole
// for a conflict (a deadlock) allocated nothing and runs again, up to
// allocateAttempts times.
func (s *SQLStore) Allocate(ctx context.Context, req Request) (Range, error) {
	for attempt := 1; ; attempt++ {
		r, err := s.allocate(ctx, req)
		if err == nil || attempt == allocateAttempts || !s.sql.Dialect.SerializationFailure(err) {
			return r, err
		}
		select {
		case <-time.After(time.Duration(attempt) * time.Millisecond):
		case <-ctx.Done():
			return Range{}, keyErr(req.Key, "allocate", ctx.Err())
		}
	}
}

// allocate is one attempt of Allocate.
func (s *SQLStore) allocate(ctx context.Context, req Request) (Range, error) {
	if req.Step < 0 {
		return Range{}, keyErr(req.Key, "allocate", fmt.Errorf("negative step %d", req.Step))
	}
	if err := s.durable(ctx); err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	now := s.now().UTC()
	if s.qAllocateSQL != "" {
		return s.allocateOne(ctx, req, now)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	defer tx.Rollback()
	if err := s.sql.Dialect.CommitDurably(ctx, tx); err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	args := []any{req.Step, req.Step}
	if !s.table.Leaf {
		args = append(args, now)
	}
	args = append(args, req.Key, int64(MaxID), req.Step, req.Step)
	var maxID, stored int64
	if !s.sql.Dialect.UpdateReturning() {
		err = s.updateThenRead(ctx, tx, req.Key, args, &maxID, &stored)
	} else {
		err = tx.QueryRowContext(ctx, s.qAllocate, args...).Scan(&maxID, &stored)
	}
	if errors.Is(err, sql.ErrNoRows) {
		err = s.whyNoRow(ctx, tx, req)
	}
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	r := s.rangeOf(req, maxID, stored, now)
	if _, err := tx.ExecContext(ctx, s.qLog, r.Key, r.First, r.Last, r.Instance, now); err != nil {
		return Range{}, keyErr(req.Key, "allocate: log range", err)
	}
	if err := tx.Commit(); err != nil {
		return Range{}, keyErr(req.Key, "allocate: commit", err)
	}
	return r, nil
}

// updateThenRead is the allocating UPDATE of a database without RETURNING:
// no row changed means sql.ErrNoRows; otherwise the row, still locked by
// tx, is read back.
func (s *SQLStore) updateThenRead(ctx context.Context, tx *sql.Tx, key string, args []any, maxID, stored *int64) error {
	res, err := tx.ExecContext(ctx, s.qAllocate, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return sql.ErrNoRows
	}
	return tx.QueryRowContext(ctx, s.qAllocateRead, key).Scan(maxID, stored)
}

// rangeOf is the range an allocation owns that left max_id at maxID.
func (s *SQLStore) rangeOf(req Request, maxID, stored int64, now time.Time) Range {
	first, last := s.table.Range(maxID, cmp(req.Step, stored))
	return Range{Key: req.Key, First: first, Last: last, StoredStep: stored, Instance: req.Instance, Time: now}
}

// allocateOne runs the dialect's single allocation statement (its own
// transaction).
func (s *SQLStore) allocateOne(ctx context.Context, req Request, now time.Time) (Range, error) {
	args := []any{req.Step, now, req.Key, int64(MaxID), req.Instance}
	var row *sql.Row
	if s.sql.PrepareAllocate {
		stmt, err := s.allocateStmt(ctx)
		if err != nil {
			return Range{}, keyErr(req.Key, "allocate", err)
		}
		row = stmt.QueryRowContext(ctx, args...)
	} else {
		row = s.db.QueryRowContext(ctx, s.qAllocateSQL, args...)
	}
	var maxID, stored int64
	err := row.Scan(&maxID, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.whyNoRow(ctx, s.db, req)
	}
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	return s.rangeOf(req, maxID, stored, now), nil
}

// allocateStmt returns the prepared Allocate statement, preparing it at
// the first call. A failed preparation is tried again at the next call.
func (s *SQLStore) allocateStmt(ctx context.Context) (*sql.Stmt, error) {
	s.prepMu.Lock()
	defer s.prepMu.Unlock()
	if s.prepared == nil {
		stmt, err := s.db.PrepareContext(ctx, s.qAllocateSQL)
		if err != nil {
			return nil, err
		}
		s.prepared = stmt
	}
	return s.prepared, nil
}

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// whyNoRow explains an allocation that matched no row: no such key, or no
// room left below MaxID.
func (s *SQLStore) whyNoRow(ctx context.Context, q queryRower, req Request) error {
	var m, st int64
	switch err := q.QueryRowContext(ctx, s.qExists, req.Key).Scan(&m, &st); {
	case errors.Is(err, sql.ErrNoRows):
		return ErrUnknownKey
	case err != nil:
		return err
	default:
		return fmt.Errorf("%w: max_id %d, step %d", ErrExhausted, m, cmp(req.Step, st))
	}
}

// cmp returns step if positive, else stored.
func cmp(step, stored int64) int64 {
	if step > 0 {
		return step
	}
	return stored
}

// Keys implements Store.
func (s *SQLStore) Keys(ctx context.Context) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.qKeys)
	if err != nil {
		return nil, fmt.Errorf("segment: list keys: %w", err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("segment: list keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment: list keys: %w", err)
	}
	return keys, nil
}

// KeyInfo is one row of idsql_alloc (or of the Leaf table).
type KeyInfo struct {
	Key         string
	MaxID       int64 // the last ID handed out to anyone (0: none yet); on a Leaf table, max_id - 1
	Step        int64
	Description string // "" for NULL (Leaf's column allows it)
	Updated     time.Time
}

// ListKeys returns every row of the allocation table, sorted by key.
func (s *SQLStore) ListKeys(ctx context.Context) ([]KeyInfo, error) {
	rows, err := s.db.QueryContext(ctx, s.qList)
	if err != nil {
		return nil, fmt.Errorf("segment: list keys: %w", err)
	}
	defer rows.Close()
	var out []KeyInfo
	for rows.Next() {
		var ki KeyInfo
		var desc sql.NullString
		var t timeValue
		if err := rows.Scan(&ki.Key, &ki.MaxID, &ki.Step, &desc, &t); err != nil {
			return nil, fmt.Errorf("segment: list keys: %w", err)
		}
		if s.table.Leaf {
			ki.MaxID = max(ki.MaxID-1, 0)
		}
		ki.Description = desc.String
		ki.Updated = t.Time
		out = append(out, ki)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment: list keys: %w", err)
	}
	return out, nil
}

// KeySpec describes a key to create.
type KeySpec struct {
	Key         string // the key (biz_tag); required
	Step        int64  // stored step, the size of the first range and the floor of the adaptive step; required, > 0
	Start       int64  // the first ID to hand out (default 1)
	Description string

	// AdoptTable, when set, names an existing table (optionally
	// schema-qualified, "shop.orders") whose keys were made by a sequence
	// (BIGSERIAL): the key then starts above MAX(AdoptColumn) of that table,
	// so the generator never hands out an ID the table already holds.
	// Writers that still use the sequence must stop first.
	AdoptTable  string
	AdoptColumn string // default "id"
	// AdoptShift is the number of low bits the adopted table's keys carry
	// below the numbers this key hands out (shard and application bits of
	// gene keys, key = n << AdoptShift | ...): the key then starts above
	// MAX(AdoptColumn) >> AdoptShift.
	AdoptShift int
}

// CreateKey inserts a row into the allocation table. The first range
// starts at spec.Start, or above the adopted table's current maximum when
// that is higher. Table and column names are quoted as identifiers; the key
// itself only ever travels as a bind parameter. A key that exists yields an
// error wrapping ErrKeyExists.
func (s *SQLStore) CreateKey(ctx context.Context, spec KeySpec) error {
	fail := func(err error) error { return keyErr(spec.Key, "create key", err) }
	switch {
	case spec.Key == "":
		return fail(errors.New("empty key"))
	case spec.Step <= 0:
		return fail(fmt.Errorf("step %d: must be positive", spec.Step))
	case spec.Start < 0 || spec.Start > MaxID:
		return fail(fmt.Errorf("start %d out of range", spec.Start))
	}
	next := max(spec.Start, 1) // the first ID to hand out
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if spec.AdoptTable != "" {
		col := spec.AdoptColumn
		if col == "" {
			col = "id"
		}
		table, err := s.sql.Dialect.QuoteTable(spec.AdoptTable)
		if err != nil {
			return fail(err)
		}
		column, err := s.sql.Dialect.QuoteIdent(col)
		if err != nil {
			return fail(err)
		}
		var cur sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(`+column+`) FROM `+table).Scan(&cur); err != nil {
			return fail(fmt.Errorf("adopt %s.%s: %w", spec.AdoptTable, col, err))
		}
		if spec.AdoptShift < 0 || spec.AdoptShift > 62 {
			return fail(fmt.Errorf("adopt shift %d out of range 0..62", spec.AdoptShift))
		}
		if n := cur.Int64 >> spec.AdoptShift; cur.Valid && n >= next {
			if n >= MaxID {
				return fail(fmt.Errorf("adopt %s.%s: %w: MAX is %d", spec.AdoptTable, col, ErrExhausted, cur.Int64))
			}
			next = n + 1
		}
	}
	maxID := next - 1 // idsql_alloc: the last ID handed out
	if s.table.Leaf {
		maxID = next // Leaf: the next ID to hand out
	}
	args := []any{spec.Key, maxID, spec.Step, spec.Description}
	if !s.table.Leaf {
		args = append(args, s.now().UTC())
	}
	res, err := tx.ExecContext(ctx, s.qInsert, args...)
	if err != nil {
		if s.sql.Dialect.UniqueViolation(err) {
			err = ErrKeyExists
		}
		return fail(err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fail(ErrKeyExists)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return nil
}

// DeleteKey removes a key from the allocation table (its log stays). A key that does
// not exist yields an error wrapping ErrUnknownKey. Re-creating a deleted
// key restarts its numbering: adopt the table again to stay above it.
func (s *SQLStore) DeleteKey(ctx context.Context, key string) error {
	res, err := s.db.ExecContext(ctx, s.qDelete, key)
	if err != nil {
		return keyErr(key, "delete key", err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return keyErr(key, "delete key", ErrUnknownKey)
	}
	return nil
}

// LookupResult answers which keys were handed a range containing an ID.
type LookupResult struct {
	ID     int64
	Ranges []Range // every logged range holding ID, sorted by key
}

// Keys returns the distinct keys of the ranges found.
func (r LookupResult) Keys() []string {
	var keys []string
	for _, rg := range r.Ranges {
		if !slices.Contains(keys, rg.Key) {
			keys = append(keys, rg.Key)
		}
	}
	return keys
}

// Ambiguous reports whether more than one key was handed the ID: segment
// keys number independently, so the same integer can belong to several
// tables. The answer then lists them all rather than guess.
func (r LookupResult) Ambiguous() bool { return len(r.Keys()) > 1 }

// Lookup returns the logged ranges containing id, from idsql_alloc_log.
// No range means no segment key was ever handed id.
func (s *SQLStore) Lookup(ctx context.Context, id int64) (LookupResult, error) {
	res := LookupResult{ID: id}
	rows, err := s.db.QueryContext(ctx, s.qLookup, id, id)
	if err != nil {
		return res, fmt.Errorf("segment: lookup %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Range
		var t timeValue
		if err := rows.Scan(&r.Key, &r.First, &r.Last, &r.Instance, &t); err != nil {
			return res, fmt.Errorf("segment: lookup %d: %w", id, err)
		}
		r.Time = t.Time
		res.Ranges = append(res.Ranges, r)
	}
	if err := rows.Err(); err != nil {
		return res, fmt.Errorf("segment: lookup %d: %w", id, err)
	}
	return res, nil
}

// Ranges returns every logged range of key in order of first ID.
func (s *SQLStore) Ranges(ctx context.Context, key string) ([]Range, error) {
	rows, err := s.db.QueryContext(ctx, s.qRanges, key)
	if err != nil {
		return nil, keyErr(key, "list ranges", err)
	}
	defer rows.Close()
	var out []Range
	for rows.Next() {
		var r Range
		var t timeValue
		if err := rows.Scan(&r.Key, &r.First, &r.Last, &r.Instance, &t); err != nil {
			return nil, keyErr(key, "list ranges", err)
		}
		r.Time = t.Time
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, keyErr(key, "list ranges", err)
	}
	return out, nil
}

// timeValue scans a timestamp whichever way the driver returns it.
type timeValue struct{ time.Time }

func (t *timeValue) Scan(v any) error {
	switch v := v.(type) {
	case time.Time:
		t.Time = v
	case nil:
		t.Time = time.Time{}
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	case int64:
		t.Time = time.Unix(v, 0).UTC()
	default:
		return fmt.Errorf("segment: cannot scan %T into a time", v)
	}
	return nil
}

func (t *timeValue) parse(s string) error {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999-07:00", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"} {
		if p, err := time.Parse(layout, s); err == nil {
			t.Time = p
			return nil
		}
	}
	return fmt.Errorf("segment: cannot parse time %q", s)
}
