package segment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// BindStyle is how a Dialect writes bind parameters.
type BindStyle int

// Bind styles.
const (
	BindDollar   BindStyle = iota // $1, $2, ... (PostgreSQL)
	BindQuestion                  // ?, ?, ... (SQLite, MySQL)
)

// Dialect holds what differs between the databases an SQLStore runs on.
// PostgreSQL returns the one for PostgreSQL; package sqlitestore has the
// SQLite one. The queries themselves (UPDATE ... RETURNING, INSERT ... ON
// CONFLICT DO NOTHING) are shared.
type Dialect struct {
	Name string    // for messages, e.g. "postgres"
	Bind BindStyle // bind parameter style

	// Schema is the idempotent DDL Migrate runs, in order, in one
	// transaction. It creates idsql_alloc and idsql_alloc_log.
	Schema []string

	// MigrateLock, when set, is run first in the Migrate transaction to
	// serialize concurrent migrations (PostgreSQL's CREATE TABLE IF NOT
	// EXISTS is not safe against a concurrent twin).
	MigrateLock string

	// Allocate, when set, is one statement that both advances the key's row
	// and logs the range (PostgreSQL: a data-modifying WITH), saving three
	// round trips per allocation. Its bind parameters are, in order: step
	// (0: the stored step), now, key, MaxID, instance; it returns max_id and
	// the stored step, or no row when the key is missing or exhausted. When
	// empty, Allocate runs the UPDATE and the INSERT in a transaction.
	//
	// The statement runs in a transaction of its own and must make that
	// transaction's commit durable itself, as DurableCommit does for the
	// two-statement form (PostgreSQL: set_config('synchronous_commit', 'on',
	// true) in the statement, which costs no round trip).
	Allocate string

	// DurableCommit, when set, is run first in every transaction that
	// allocates a range with the UPDATE and the INSERT, so that the commit
	// reaches durable storage before Allocate returns whatever the server's
	// or the session's default (PostgreSQL: SET LOCAL synchronous_commit =
	// on). Without it a database crash just after the commit could lose the
	// allocation and hand the same range out again.
	DurableCommit string
}

// PostgreSQL returns the Dialect for PostgreSQL.
func PostgreSQL() Dialect {
	return Dialect{
		Name: "postgres",
		Bind: BindDollar,
		Schema: []string{
			`CREATE TABLE IF NOT EXISTS idsql_alloc (
	biz_tag     TEXT PRIMARY KEY,
	max_id      BIGINT NOT NULL DEFAULT 0 CHECK (max_id >= 0),
	step        BIGINT NOT NULL CHECK (step > 0),
	description TEXT NOT NULL DEFAULT '',
	update_time TIMESTAMPTZ NOT NULL DEFAULT now()
)`,
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
		MigrateLock: `SELECT pg_advisory_xact_lock(8315429661)`,
		// synchronous_commit = off (server, role or session) would
		// acknowledge the commit before its WAL is written: a crash could
		// then lose a range already handed out. set_config(..., true) lasts
		// until the end of the statement's own (implicit) transaction,
		// commit included, so the session keeps its setting. p is scanned by
		// u, so it is evaluated before any row is changed.
		Allocate: `WITH p AS (SELECT CAST($1 AS BIGINT) AS step, set_config('synchronous_commit', 'on', true) AS sync),
u AS (
	UPDATE idsql_alloc a
	SET max_id = a.max_id + CASE WHEN p.step > 0 THEN p.step ELSE a.step END, update_time = $2
	FROM p
	WHERE a.biz_tag = $3 AND a.max_id <= CAST($4 AS BIGINT) - CASE WHEN p.step > 0 THEN p.step ELSE a.step END
	RETURNING a.max_id, a.step, CASE WHEN p.step > 0 THEN p.step ELSE a.step END AS used
),
l AS (
	INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created)
	SELECT $3, u.max_id - u.used + 1, u.max_id, $5, $2 FROM u
)
SELECT max_id, step FROM u`,
		DurableCommit: `SET LOCAL synchronous_commit = on`,
	}
}

// SQLStore is the Store on a database/sql database: PostgreSQL (through any
// driver, lib/pq in this project's tests) or, with sqlitestore, SQLite.
//
// One allocation is one transaction: the UPDATE of the key's row in
// idsql_alloc, which returns the new max_id, and the INSERT of the range into
// idsql_alloc_log. The row lock taken by the UPDATE orders concurrent
// allocators, so ranges of one key never overlap, whichever process asks.
//
// On PostgreSQL that transaction always commits with synchronous_commit =
// on, whatever the server or the connection says, so a range is on disk
// before it is handed out. (The commit flushes the WAL written before it, so
// the key's creation is durable by then too.)
type SQLStore struct {
	db      *sql.DB
	dialect Dialect
	now     func() time.Time

	qAllocate, qLog, qExists, qKeys, qList, qInsert, qDelete, qLookup string
}

var _ Store = (*SQLStore)(nil)

// NewPostgresStore returns an SQLStore on a PostgreSQL database.
func NewPostgresStore(db *sql.DB) *SQLStore { return NewSQLStore(db, PostgreSQL()) }

// NewSQLStore returns an SQLStore speaking dialect d on db.
func NewSQLStore(db *sql.DB, d Dialect) *SQLStore {
	s := &SQLStore{db: db, dialect: d, now: time.Now}
	q := func(query string) string { return rebind(d.Bind, query) }
	s.qAllocate = q(`UPDATE idsql_alloc
	SET max_id = max_id + CASE WHEN CAST(? AS BIGINT) > 0 THEN CAST(? AS BIGINT) ELSE step END, update_time = ?
	WHERE biz_tag = ? AND max_id <= CAST(? AS BIGINT) - CASE WHEN CAST(? AS BIGINT) > 0 THEN CAST(? AS BIGINT) ELSE step END
	RETURNING max_id, step`)
	s.qLog = q(`INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created) VALUES (?, ?, ?, ?, ?)`)
	s.qExists = q(`SELECT max_id, step FROM idsql_alloc WHERE biz_tag = ?`)
	s.qKeys = q(`SELECT biz_tag FROM idsql_alloc ORDER BY biz_tag`)
	s.qList = q(`SELECT biz_tag, max_id, step, description, update_time FROM idsql_alloc ORDER BY biz_tag`)
	s.qInsert = q(`INSERT INTO idsql_alloc (biz_tag, max_id, step, description, update_time) VALUES (?, ?, ?, ?, ?) ON CONFLICT (biz_tag) DO NOTHING`)
	s.qDelete = q(`DELETE FROM idsql_alloc WHERE biz_tag = ?`)
	s.qLookup = q(`SELECT biz_tag, first_id, last_id, instance, created FROM idsql_alloc_log WHERE first_id <= ? AND last_id >= ? ORDER BY biz_tag, first_id`)
	return s
}

// DB returns the database the store uses.
func (s *SQLStore) DB() *sql.DB { return s.db }

func rebind(style BindStyle, query string) string {
	if style != BindDollar {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Migrate creates idsql_alloc and idsql_alloc_log if they do not exist. It
// is idempotent and safe to run from several processes at once.
func (s *SQLStore) Migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("segment: migrate (%s): %w", s.dialect.Name, err)
	}
	defer tx.Rollback()
	stmts := s.dialect.Schema
	if s.dialect.MigrateLock != "" {
		stmts = append([]string{s.dialect.MigrateLock}, stmts...)
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("segment: migrate (%s): %w", s.dialect.Name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("segment: migrate (%s): %w", s.dialect.Name, err)
	}
	return nil
}

// Allocate implements Store: one transaction advancing the key's max_id
// and logging the range.
func (s *SQLStore) Allocate(ctx context.Context, req Request) (Range, error) {
	if req.Step < 0 {
		return Range{}, keyErr(req.Key, "allocate", fmt.Errorf("negative step %d", req.Step))
	}
	now := s.now().UTC()
	if s.dialect.Allocate != "" {
		return s.allocateOne(ctx, req, now)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	defer tx.Rollback()
	if s.dialect.DurableCommit != "" {
		if _, err := tx.ExecContext(ctx, s.dialect.DurableCommit); err != nil {
			return Range{}, keyErr(req.Key, "allocate", err)
		}
	}
	var maxID, stored int64
	err = tx.QueryRowContext(ctx, s.qAllocate, req.Step, req.Step, now, req.Key, int64(MaxID), req.Step, req.Step).Scan(&maxID, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.whyNoRow(ctx, tx, req)
	}
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	used := cmp(req.Step, stored)
	r := Range{Key: req.Key, First: maxID - used + 1, Last: maxID, StoredStep: stored, Instance: req.Instance, Time: now}
	if _, err := tx.ExecContext(ctx, s.qLog, r.Key, r.First, r.Last, r.Instance, now); err != nil {
		return Range{}, keyErr(req.Key, "allocate: log range", err)
	}
	if err := tx.Commit(); err != nil {
		return Range{}, keyErr(req.Key, "allocate: commit", err)
	}
	return r, nil
}

// allocateOne runs the dialect's single allocation statement (its own
// transaction).
func (s *SQLStore) allocateOne(ctx context.Context, req Request, now time.Time) (Range, error) {
	var maxID, stored int64
	err := s.db.QueryRowContext(ctx, s.dialect.Allocate, req.Step, now, req.Key, int64(MaxID), req.Instance).Scan(&maxID, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.whyNoRow(ctx, s.db, req)
	}
	if err != nil {
		return Range{}, keyErr(req.Key, "allocate", err)
	}
	used := cmp(req.Step, stored)
	return Range{Key: req.Key, First: maxID - used + 1, Last: maxID, StoredStep: stored, Instance: req.Instance, Time: now}, nil
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

// KeyInfo is one row of idsql_alloc.
type KeyInfo struct {
	Key         string
	MaxID       int64 // the last ID handed out to anyone (0: none yet)
	Step        int64
	Description string
	Updated     time.Time
}

// ListKeys returns every row of idsql_alloc, sorted by key.
func (s *SQLStore) ListKeys(ctx context.Context) ([]KeyInfo, error) {
	rows, err := s.db.QueryContext(ctx, s.qList)
	if err != nil {
		return nil, fmt.Errorf("segment: list keys: %w", err)
	}
	defer rows.Close()
	var out []KeyInfo
	for rows.Next() {
		var ki KeyInfo
		var t timeValue
		if err := rows.Scan(&ki.Key, &ki.MaxID, &ki.Step, &ki.Description, &t); err != nil {
			return nil, fmt.Errorf("segment: list keys: %w", err)
		}
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
}

// CreateKey inserts a row into idsql_alloc. The first range starts at
// spec.Start, or above the adopted table's current maximum when that is
// higher. Table and column names are quoted as identifiers; the key itself
// only ever travels as a bind parameter. A key that exists yields an error
// wrapping ErrKeyExists.
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
	maxID := max(spec.Start-1, 0)
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
		table, err := quoteQualified(spec.AdoptTable)
		if err != nil {
			return fail(err)
		}
		column, err := quoteIdent(col)
		if err != nil {
			return fail(err)
		}
		var cur sql.NullInt64
		if err := tx.QueryRowContext(ctx, `SELECT MAX(`+column+`) FROM `+table).Scan(&cur); err != nil {
			return fail(fmt.Errorf("adopt %s.%s: %w", spec.AdoptTable, col, err))
		}
		if cur.Valid && cur.Int64 > maxID {
			maxID = cur.Int64
		}
	}
	res, err := tx.ExecContext(ctx, s.qInsert, spec.Key, maxID, spec.Step, spec.Description, s.now().UTC())
	if err != nil {
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

// DeleteKey removes a key from idsql_alloc (its log stays). A key that does
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
	rows, err := s.db.QueryContext(ctx, rebind(s.dialect.Bind,
		`SELECT biz_tag, first_id, last_id, instance, created FROM idsql_alloc_log WHERE biz_tag = ? ORDER BY first_id`), key)
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

// quoteIdent quotes one SQL identifier with double quotes (standard SQL,
// PostgreSQL, SQLite), doubling embedded quotes.
func quoteIdent(name string) (string, error) {
	if name == "" || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("invalid identifier %q", name)
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`, nil
}

// quoteQualified quotes "schema.table" or "table". A dot always separates
// parts; a table whose name contains a dot cannot be adopted.
func quoteQualified(name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("invalid table name %q", name)
	}
	for i, p := range parts {
		q, err := quoteIdent(p)
		if err != nil {
			return "", fmt.Errorf("invalid table name %q", name)
		}
		parts[i] = q
	}
	return strings.Join(parts, "."), nil
}
