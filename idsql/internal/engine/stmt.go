package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// Stmt is a plan with what its executions need, derived at the plan's
// first use and kept in the engine's cache: its table's key column was
// checked, and its key source, once drawn from, is at hand without a
// lookup by name.
type Stmt struct {
	// Plan is the rewriter's plan: Plan.Query is the statement to send.
	Plan  *rewrite.Plan
	table string // the plan's table as configured (Table.String, once)
	// checked: the table's key column was checked (and this Stmt is
	// cached); a Stmt of a table the catalog did not know yet is not, and
	// its executions check again.
	checked bool
	// narrow: the key column is narrower than 64 bits and the statement
	// lists the key, so only an execution that generates one is refused.
	narrow bool
	// uuid is how the keys of a table with UUID keys go into its column;
	// nil for 64-bit keys, and for a UUID table not checked yet.
	uuid *uuidKeys
	src  atomic.Pointer[Source]
}

// Plan asks rw about query, reading cat when it must, and returns the
// statement with its state: nil when query passes unchanged. A statement
// that fills a key column narrower than 64 bits, or a table without its
// key column, is refused here, before any key is drawn.
func (e *Engine) Plan(ctx context.Context, rw *rewrite.Rewriter, cat *Catalog, query string) (*Stmt, error) {
	p, err := rw.Plan(ctx, query, cat)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.cfg.Prefix, err)
	}
	if p == nil {
		return nil, nil
	}
	return e.State(ctx, cat, p)
}

// State returns the statement of p, a plan of one of the engine's
// rewriters: the cached one, or, at the plan's first use, a new one after
// checking the table's key column through cat (see Plan).
func (e *Engine) State(ctx context.Context, cat *Catalog, p *rewrite.Plan) (*Stmt, error) {
	if st, ok := e.states.Load(p); ok {
		return st, nil
	}
	st := &Stmt{Plan: p, table: p.Table.String()}
	known, err := e.CheckKey(ctx, cat, p.Table)
	switch {
	case err != nil && p.Listed() && errors.Is(err, dialect.ErrNarrowKey):
		// The rows give their keys: refused only by an execution that
		// would generate one (Fill).
		st.narrow = true
	case err != nil:
		return nil, err
	case !known:
		return st, nil
	}
	st.checked = true
	st.uuid = e.uuidTable(st.table)
	return e.states.Store(p, st), nil
}

// Filled is one execution of a statement as the engine filled it.
type Filled struct {
	// Args are the arguments for the statement's Plan.Query.
	Args []driver.NamedValue
	// IDs are the keys the rows took, in row order.
	IDs []int64
	// rows says which rows took them.
	rows rewrite.Rows
}

// Buffers are a connection's reusable memory for the executions it fills
// one at a time: the keys, the arguments, the rows' decisions and the
// keys' interface values (Boxer). The inner driver holds them only for the
// duration of a call, so the next execution may overwrite them; an
// execution whose arguments outlive the call (a Query's rows) is filled
// without buffers. The zero value is ready; not safe for concurrent use.
type Buffers struct {
	f   Filled // the last execution's, whose arrays the next one reuses
	gen []bool
	box Boxer
}

// maxReused bounds the arguments Buffers keep (a 2,000-row INSERT of four
// columns).
const maxReused = 1 << 13

// Fill fills one execution of st with the caller's arguments args ($1
// first). given, from NamedExec, holds one key per row for a statement
// that does not list the key: the caller's own, or 0 for a new one; nil
// otherwise. With buf (a connection's Buffers; nil for none) the result
// lives in buf until the next Fill: keep nothing of it past that. Each row's key is tested once. Any
// failure (a context already done, a narrow key column, a bad shard
// value, the batch limit, max_id, a key source that cannot issue) fails
// the whole statement before it is sent, and a refused request draws no
// key.
func (e *Engine) Fill(ctx context.Context, cat *Catalog, st *Stmt, args []driver.NamedValue, given []int64, buf *Buffers) (*Filled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // nothing drawn for a statement that will not be sent
	}
	var box rewrite.Boxer
	if buf == nil {
		buf = new(Buffers) // this execution's own
	} else {
		box = &buf.box
	}
	f := &buf.f
	if cap(f.Args) > maxReused || cap(f.IDs) > maxReused {
		f.Args, f.IDs = nil, nil // not kept past one execution
	}
	p := st.Plan
	rows := p.Decide(args, buf.gen)
	w, err := e.decide(ctx, cat, st, args, given, rows)
	if err != nil {
		return nil, err
	}
	ids, err := e.drawn(ctx, st, w, f.IDs[:0])
	if err != nil {
		return nil, e.insertErr(st, err)
	}
	full := f.Args[:0]
	if st.uuid == nil {
		full = p.ArgsFor(full, args, ids, rows, box)
	} else if full, err = e.argsFor(st, full, args, ids, rows, box); err != nil {
		return nil, err
	}
	f.Args, f.IDs, f.rows = full, ids, rows
	if gen := rows.Gen(); cap(gen) > cap(buf.gen) && cap(gen) <= maxReused {
		buf.gen = gen // append grew it
	}
	return f, nil
}

// argsFor appends to dst the arguments of an execution of st with the
// caller's args and its keys ids (rows as Plan.Decide said): each key
// boxed by box (nil: as any(id) would), or, for a table with UUID keys,
// as the UUID value its key column takes.
func (e *Engine) argsFor(st *Stmt, dst, args []driver.NamedValue, ids []int64, rows rewrite.Rows, box rewrite.Boxer) ([]driver.NamedValue, error) {
	if u := st.uuid; u != nil && len(ids) > 0 {
		if err := u.check(ids); err != nil {
			return nil, e.insertErr(st, err)
		}
		box = u
	}
	return st.Plan.ArgsFor(dst, args, ids, rows, box), nil
}

// want is what one execution takes from its table's keys, decided
// before any key is drawn.
type want struct {
	n      int     // keys drawn from the table's source
	shards []int   // a sharded table: the shard of each row's key
	given  []int64 // NamedExec: the caller's key for each row, 0 where a drawn key goes
}

// decide makes the checks of one execution that draw no key (its table's
// key column, its shard values, the batch limit) and says which keys it
// takes; rows are its rows (Plan.Decide). Its errors are final.
func (e *Engine) decide(ctx context.Context, cat *Catalog, st *Stmt, args []driver.NamedValue, given []int64, rows rewrite.Rows) (want, error) {
	p := st.Plan
	need := rows.Need()
	if need > 0 && !st.checked && e.cfg.UUIDs[st.table] != nil {
		// UUID keys go into a column whose type says how it holds them:
		// one the catalog did not know at the plan is asked about now.
		if _, err := e.CheckKey(ctx, cat, p.Table); err != nil {
			return want{}, err
		}
		if st.uuid = e.uuidTable(st.table); st.uuid == nil {
			return want{}, fmt.Errorf("%s: insert into %s: the catalog does not know the table, so idsql cannot tell how its key column holds UUID keys", e.cfg.Prefix, st.table)
		}
	}
	if need > 0 && p.Listed() && (st.narrow || !st.checked) {
		// A narrow key column (see state), or a table unknown when
		// planned: asked again, so a column widened since is seen.
		if _, err := e.CheckKey(ctx, cat, p.Table); err != nil {
			return want{}, err
		}
	}
	var w want
	switch {
	case given != nil && need == len(given) && p.Shards == nil:
		// NamedExec: the caller's keys, and new ones for its zero keys.
		for _, k := range given {
			if k == 0 {
				w.n++
			}
		}
		w.given = given
	case p.Shards != nil:
		// Sharded tables keep zero keys (TableConfig.FillsZero): every
		// row takes one, in the shard of its shard column's value.
		if len(p.Shards) > MaxBatch {
			return w, BatchError(st.table, len(p.Shards))
		}
		bits := e.bits[st.table]
		shards, err := Shards(make([]int, 0, len(p.Shards)), p, args, namedValue,
			func(v any) (int, error) { return e.cfg.ShardOf(v, bits) })
		if err != nil {
			return w, e.insertErr(st, err)
		}
		w.shards = shards
	default:
		w.n = need
	}
	if w.n > MaxBatch {
		return w, BatchError(st.table, w.n)
	}
	return w, nil
}

// drawn appends to dst the keys w takes of st's table, in row order, and
// reports the draw to Config.Observe when it is set.
func (e *Engine) drawn(ctx context.Context, st *Stmt, w want, dst []int64) ([]int64, error) {
	obs := e.cfg.Observe
	if obs == nil {
		return e.take(ctx, st, w, dst)
	}
	start, n := time.Now(), len(dst)
	ids, err := e.take(ctx, st, w, dst)
	obs(ctx, st.table, len(ids)-n, time.Since(start))
	return ids, err
}

// take appends to dst the keys w takes of st's table, in row order.
func (e *Engine) take(ctx context.Context, st *Stmt, w want, dst []int64) ([]int64, error) {
	switch {
	case w.shards != nil:
		return e.cfg.Keys.AppendShardIDs(ctx, dst, st.table, w.shards)
	case w.given != nil:
		gen, err := e.draw(ctx, st, nil, w.n)
		if err != nil {
			return dst, err
		}
		for _, k := range w.given {
			if k == 0 {
				k, gen = gen[0], gen[1:]
			}
			dst = append(dst, k)
		}
		return dst, nil
	}
	return e.draw(ctx, st, dst, w.n)
}

// insertErr wraps err, the failure to give st's rows their keys, with the
// door's prefix and the table, saying how to mend a missing privilege or
// one of idsql's own statements that a connection pooler split (a key
// source's shape read, claim or allocation); the batch limit's error
// names the table already.
func (e *Engine) insertErr(st *Stmt, err error) error {
	if errors.Is(err, ErrBatch) {
		return err
	}
	return fmt.Errorf("%s: insert into %s: %w", e.cfg.Prefix, st.table, e.cfg.Dialect.Denied(e.cfg.Dialect.SplitStatement(err)))
}

// draw appends n keys of st's table to dst, from the source st keeps.
func (e *Engine) draw(ctx context.Context, st *Stmt, dst []int64, n int) ([]int64, error) {
	if n > MaxBatch {
		return dst, BatchError(st.table, n)
	}
	if n == 0 {
		return dst, nil
	}
	if src := st.src.Load(); src != nil {
		return (*src).AppendIDs(ctx, dst, n)
	}
	src, err := e.cfg.Keys.Source(ctx, st.table)
	if err != nil {
		return dst, err
	}
	st.src.Store(&src)
	return src.AppendIDs(ctx, dst, n)
}

// namedValue is a driver argument's value.
func namedValue(a driver.NamedValue) any { return a.Value }

// Known reports whether the keys generated for an execution of p name the
// rows it wrote, from the statement's affected-rows count (-1 when the
// driver did not say); see the package function Known.
func (e *Engine) Known(p *rewrite.Plan, affected int64) bool {
	return Known(p, affected, e.cfg.CountsUpdates)
}

// InsertID decides what a filled statement's LastInsertId answers. first
// is the first key the engine generated for it (generated false when its
// rows all kept the caller's keys), affected its affected-rows count (-1
// when unknown). It answers the first generated key when it is known to
// be written (Known); otherwise server reports that the door should
// answer what the database answered (its rows kept their own keys, or an
// AUTO_INCREMENT database's own value), and id is 0 when it should not.
// It never names a key that no row holds.
func (e *Engine) InsertID(p *rewrite.Plan, first int64, generated bool, affected int64) (id int64, server bool) {
	switch {
	case generated && e.uuidKeyed(p):
		return 0, false // a UUID key is no int64: RETURNING gives it back
	case !generated && affected != 0:
		return 0, true
	case e.Known(p, affected):
		return first, false
	}
	return 0, e.cfg.Dialect.AutoIncrementID()
}

// Written returns, for NamedExec's write-back, the key each of p's rows
// was given in the execution f (given as to Fill), or 0 for a row that
// kept the caller's; nil when the keys are not known to be written
// (affected as for Known).
func (e *Engine) Written(p *rewrite.Plan, f *Filled, given []int64, affected int64) []int64 {
	if !e.Known(p, affected) {
		return nil
	}
	ids := f.IDs
	if given != nil && len(ids) == len(given) {
		got := make([]int64, len(ids))
		for i, k := range given {
			if k == 0 {
				got[i] = ids[i]
			}
		}
		return got
	}
	return p.GeneratedFor(nil, f.rows, ids)
}

// Named returns the values of args (a statement's own arguments, $1
// first) as driver arguments, appended to dst[:0].
func Named(dst []driver.NamedValue, args []any) []driver.NamedValue {
	dst = dst[:0]
	for i, a := range args {
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return dst
}

// Cached reports whether st is the engine's cached statement for its plan
// (its table's key column was checked), which a front door may keep for
// the same query text.
func (st *Stmt) Cached() bool { return st.checked }

// FillZeros gives each zero entry of keys (one row's own key each, 0 where
// the row has none) a new key of table, all drawn in one call, before a
// statement that lists the key column binds them (NamedExec into a table
// that keeps zero keys). It changes nothing when the keys cannot be drawn,
// and refuses more than MaxBatch zero keys at once.
func (e *Engine) FillZeros(ctx context.Context, table string, keys []int64) error {
	n := 0
	for _, k := range keys {
		if k == 0 {
			n++
		}
	}
	switch {
	case n == 0:
		return nil
	case n > MaxBatch:
		return BatchError(table, n)
	}
	src, err := e.cfg.Keys.Source(ctx, table)
	if err != nil {
		return err
	}
	start := time.Now()
	ids, err := src.AppendIDs(ctx, make([]int64, 0, n), n)
	if obs := e.cfg.Observe; obs != nil {
		obs(ctx, table, len(ids), time.Since(start))
	}
	if err != nil {
		return err
	}
	for i, k := range keys {
		if k == 0 {
			keys[i], ids = ids[0], ids[1:]
		}
	}
	return nil
}
