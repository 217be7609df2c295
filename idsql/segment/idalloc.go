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

// IDAllocSettings configures a store on the id_alloc table of the ID
// service idsql's shard-gene keys come from: one row per (application,
// shard),
//
// on MySQL (PostgreSQL: the same columns, with integer and bigint)
//
//	CREATE TABLE id_alloc (
//	  app_id       INT    NOT NULL,
//	  shard_id     INT    NOT NULL,
//	  max_id       BIGINT NOT NULL, -- the last index handed out
//	  step         INT    NOT NULL,
//	  max_limit_id BIGINT,          -- the largest index allowed; NULL or <= 0: none
//	  PRIMARY KEY (app_id, shard_id)
//	)
//
// The numbers it hands out are the indexes of gene keys (keyset.Gene): a
// table with `app: {id: 3, ...}` and `shard: {bits: 6}` draws shard n from
// the row (3, n).
type IDAllocSettings struct {
	// Table is the table's name, optionally database-qualified; empty
	// means "id_alloc".
	Table string
	// Apps maps each segment key (the table name, or its key: setting) to
	// its app_id. Key k serves the segment keys k#0, k#1, ... of a sharded
	// table (rows (app, 0), (app, 1), ...) and k itself (row (app, 0)) of
	// a table without shard bits. Required.
	Apps map[string]int64
	// Now is the clock of the log rows; nil means time.Now.
	Now func() time.Time
}

// IDAllocStore is a Store on an id_alloc table (see IDAllocSettings), on
// MySQL/MariaDB (mysqlstore.NewIDAlloc) or PostgreSQL. Every allocation is
// one transaction, committed durably as the dialect's DurableCommit asks:
// it advances the row, refusing to pass max_limit_id, and logs the range
// in idsql_alloc_log under the segment key's name, so that idsql lookup
// explains the keys. Run Migrate once to create the log table.
//
// max_id is read as the last index handed out: the first range after
// adoption starts at max_id + 1. (Were it the next index to hand out, one
// index would be skipped: a gap, never a repeat.)
type IDAllocStore struct {
	db     *sql.DB
	d      StoreSQL
	name   string
	quoted string
	apps   map[string]int64
	now    func() time.Time
	log    *SQLStore // idsql_alloc_log's schema, for Migrate
	qUpd   string
	qSel   string
	qLog   string
	qKeys  string
}

var _ Store = (*IDAllocStore)(nil)

// NewIDAllocStore returns a store on db's id_alloc table speaking d
// (PostgresSQL(), or mysqlstore.SQL() through mysqlstore.NewIDAlloc).
func NewIDAllocStore(db *sql.DB, d StoreSQL, st IDAllocSettings) (*IDAllocStore, error) {
	if st.Table == "" {
		st.Table = "id_alloc"
	}
	quoted, err := d.Dialect.QuoteTable(st.Table)
	if err != nil {
		return nil, fmt.Errorf("segment: IDAllocSettings.Table: %w: %w", ErrInvalidSettings, err)
	}
	if len(st.Apps) == 0 {
		return nil, fmt.Errorf("segment: IDAllocSettings.Apps: %w: no segment key mapped to an app_id", ErrInvalidSettings)
	}
	for k, app := range st.Apps {
		if k == "" || strings.Contains(k, "#") || app < 0 {
			return nil, fmt.Errorf("segment: IDAllocSettings.Apps: %w: key %q -> app_id %d: want a key without '#' and an app_id >= 0", ErrInvalidSettings, k, app)
		}
	}
	if st.Now == nil {
		st.Now = time.Now
	}
	s := &IDAllocStore{db: db, d: d, name: st.Table, quoted: quoted, apps: st.Apps, now: st.Now, log: NewSQLStore(db, d)}
	// n: the size asked, or the row's step when 0.
	n := "(CASE WHEN ? = 0 THEN step ELSE ? END)"
	s.qUpd = d.Dialect.Rebind("UPDATE " + quoted + " SET max_id = max_id + " + n +
		" WHERE app_id = ? AND shard_id = ? AND (max_limit_id IS NULL OR max_limit_id <= 0 OR max_id + " + n + " <= max_limit_id)")
	s.qSel = d.Dialect.Rebind("SELECT max_id, step, COALESCE(max_limit_id, 0) FROM " + quoted + " WHERE app_id = ? AND shard_id = ?")
	s.qLog = d.Dialect.Rebind("INSERT INTO idsql_alloc_log (biz_tag, first_id, last_id, instance, created) VALUES (?, ?, ?, ?, ?)")
	s.qKeys = "SELECT app_id, shard_id FROM " + quoted
	return s, nil
}

// Migrate creates idsql_alloc_log (and the other tables of the dialect's
// plain SQLStore, which lookup reads with) and checks that the id_alloc
// table has the columns the store uses.
func (s *IDAllocStore) Migrate(ctx context.Context) error {
	if err := s.log.Migrate(ctx); err != nil {
		return err
	}
	rows, err := s.db.QueryContext(ctx, "SELECT app_id, shard_id, max_id, step, max_limit_id FROM "+s.quoted+" WHERE 1 = 0")
	if err != nil {
		return fmt.Errorf("segment: id_alloc table %s: %w", s.name, err)
	}
	return rows.Close()
}

// Keys lists the segment keys the rows of id_alloc serve: k#shard for
// every row of a mapped app_id, and k for its shard 0.
func (s *IDAllocStore) Keys(ctx context.Context) ([]string, error) {
	byApp := map[int64][]string{}
	for k, app := range s.apps {
		byApp[app] = append(byApp[app], k)
	}
	rows, err := s.db.QueryContext(ctx, s.qKeys)
	if err != nil {
		return nil, fmt.Errorf("segment: keys of %s: %w", s.name, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var app, shard int64
		if err := rows.Scan(&app, &shard); err != nil {
			return nil, fmt.Errorf("segment: keys of %s: %w", s.name, err)
		}
		for _, k := range byApp[app] {
			out = append(out, k+"#"+strconv.FormatInt(shard, 10))
			if shard == 0 {
				out = append(out, k)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("segment: keys of %s: %w", s.name, err)
	}
	slices.Sort(out)
	return out, nil
}

// row returns the (app_id, shard_id) a segment key names.
func (s *IDAllocStore) row(key string) (app, shard int64, ok bool) {
	base, sh, sharded := strings.Cut(key, "#")
	app, ok = s.apps[base]
	if !ok {
		return 0, 0, false
	}
	if sharded {
		n, err := strconv.ParseInt(sh, 10, 32)
		if err != nil || n < 0 || strconv.FormatInt(n, 10) != sh {
			return 0, 0, false
		}
		shard = n
	}
	return app, shard, true
}

// Allocate advances the row of req.Key and logs the range, in one
// transaction. A key that maps to no row wraps ErrUnknownKey; a
// range that would pass max_limit_id wraps ErrExhausted.
func (s *IDAllocStore) Allocate(ctx context.Context, req Request) (Range, error) {
	fail := func(err error) (Range, error) {
		return Range{}, &KeyError{Key: req.Key, Op: "allocate", Err: err}
	}
	app, shard, ok := s.row(req.Key)
	if !ok {
		return fail(fmt.Errorf("%w: no app_id mapped (IDAllocSettings.Apps)", ErrUnknownKey))
	}
	if req.Step < 0 {
		return fail(fmt.Errorf("negative step %d", req.Step))
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	defer tx.Rollback()
	if err := s.d.Dialect.CommitDurably(ctx, tx); err != nil {
		return fail(err)
	}
	res, err := tx.ExecContext(ctx, s.qUpd, req.Step, req.Step, app, shard, req.Step, req.Step)
	if err != nil {
		return fail(err)
	}
	var maxID, step, limit int64
	err = tx.QueryRowContext(ctx, s.qSel, app, shard).Scan(&maxID, &step, &limit)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return fail(fmt.Errorf("%w: no row (app_id %d, shard_id %d) in %s", ErrUnknownKey, app, shard, s.name))
	case err != nil:
		return fail(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		if err != nil {
			return fail(err)
		}
		return fail(fmt.Errorf("%w: row (app_id %d, shard_id %d) of %s is at max_id %d, max_limit_id %d",
			ErrExhausted, app, shard, s.name, maxID, limit))
	}
	n := req.Step
	if n == 0 {
		n = step
	}
	now := s.now().UTC()
	first, last := maxID-n+1, maxID
	if _, err := tx.ExecContext(ctx, s.qLog, req.Key, first, last, req.Instance, now); err != nil {
		return fail(err)
	}
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	return Range{Key: req.Key, First: first, Last: last, StoredStep: step, Instance: req.Instance, Time: now}, nil
}
