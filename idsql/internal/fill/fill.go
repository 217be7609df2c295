// Package fill holds the decisions that give a row its key, made once for
// both of idsql's front doors: the database/sql wrapper (package idsql)
// and native pgx (idsql/pgxid). Which rows of an INSERT take a generated
// key is the rewriter's Plan (Plan.Need, Plan.Args, Plan.Generated) read
// with the tables Table describes; what a statement may report about the
// keys it wrote (LastInsertId, the keys NamedExec writes back) is Known.
// A front door that decided either on its own would drift from the other
// (pgxid once wrote a row whose key was 0 where the wrapper filled it).
package fill

import (
	"database/sql/driver"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// TableConfig is what Tables reads of a configured table
// (idsql.TableConfig).
type TableConfig interface {
	// KeyColumn is the key column's name.
	KeyColumn() string
	// FillsZero reports whether keys a statement gives as DEFAULT, NULL or
	// 0 are filled (fill_zero; never for a sharded table, whose key needs
	// its row's shard, which the rewriter reads only from statements that
	// leave the key out).
	FillsZero() bool
	// ShardColumn is the column whose value picks the shard of each row's
	// key; "" for a table without shard bits.
	ShardColumn() string
}

// Tables returns the rewriter's description of the configured tables
// names, in that order: each labelled with its configuration name, with its
// key column and shard column, and keeping zero keys unless it fills them.
func Tables[T TableConfig](names []string, tables map[string]T) []rewrite.Table {
	out := make([]rewrite.Table, 0, len(names))
	for _, name := range names {
		tc := tables[name]
		t := rewrite.TableNamed(name, tc.KeyColumn())
		t.KeepZero = !tc.FillsZero()
		t.ShardColumn = tc.ShardColumn()
		out = append(out, t)
	}
	return out
}

// Named returns the values of args (a statement's own arguments, $1
// first) as driver arguments, for Plan.Need and Plan.Args, appended to
// dst[:0].
func Named(dst []driver.NamedValue, args []any) []driver.NamedValue {
	dst = dst[:0]
	for i, a := range args {
		dst = append(dst, driver.NamedValue{Ordinal: i + 1, Value: a})
	}
	return dst
}

// Known reports whether the keys generated for an execution of p name rows
// it wrote, from what the database answered: affected is its
// RowsAffected (-1 when the driver did not say), and countsUpdates says
// that the database counts a row an upsert updated twice and one it left
// as it was not at all (MySQL and MariaDB, unless the client asked for
// found rows: CLIENT_FOUND_ROWS).
//
// A statement that wrote no row wrote none of its keys. An upsert (ON
// CONFLICT ... DO UPDATE, ON DUPLICATE KEY UPDATE) may have updated an
// existing row, which keeps its own key: its generated key is known to be
// written only for a single row that MySQL counts once (inserted).
// PostgreSQL and SQLite count a row once either way, so an upsert's key is
// not known there without asking the server (RETURNING id).
func Known(p *rewrite.Plan, affected int64, countsUpdates bool) bool {
	switch {
	case affected == 0:
		return false
	case !p.Upsert:
		return true
	}
	return countsUpdates && p.Rows == 1 && affected == 1
}

// Shards appends to dst the shard of each of p's rows (p.Shards, for a
// table with a shard column): shardOf of the value the row gives that
// column, a literal or the argument args[i] (read with value). The errors
// name the table and the row.
func Shards[A any](dst []int, p *rewrite.Plan, args []A, value func(A) any, shardOf func(any) (int, error)) ([]int, error) {
	for i, v := range p.Shards {
		var x any
		switch v.Kind {
		case rewrite.ValueArg:
			if v.Arg >= len(args) {
				return dst, fmt.Errorf("insert into %s: row %d: column %s takes argument %d of %d", p.Table, i+1, p.Table.ShardColumn, v.Arg+1, len(args))
			}
			x = value(args[v.Arg])
		case rewrite.ValueInt:
			x = v.Int
		default:
			x = v.Str
		}
		s, err := shardOf(x)
		if err != nil {
			return dst, fmt.Errorf("insert into %s: row %d: column %s: %w", p.Table, i+1, p.Table.ShardColumn, err)
		}
		dst = append(dst, s)
	}
	return dst, nil
}

// maxStates bounds a States; past it the cache starts over (the
// rewriter drops plans from its own cache too, and a dropped plan's state
// must not be kept alive).
const maxStates = 4096

// States is a front door's cache of what it derives once per plan (its
// table's key source, the key column check), keyed by the plan: the
// rewriter's plans carry no state of their callers. The plan stored last
// is answered without a map lookup (Load writes nothing, so goroutines
// that look up different plans do not contend). Safe for concurrent use;
// the zero value is empty.
type States[S any] struct {
	m    sync.Map // *rewrite.Plan -> *stateEntry[S]
	n    atomic.Int64
	last atomic.Pointer[stateEntry[S]]
}

// stateEntry is one plan's state.
type stateEntry[S any] struct {
	p  *rewrite.Plan
	st *S
}

// Load returns the state kept for p.
func (s *States[S]) Load(p *rewrite.Plan) (*S, bool) {
	if e := s.last.Load(); e != nil && e.p == p {
		return e.st, true
	}
	v, ok := s.m.Load(p)
	if !ok {
		return nil, false
	}
	return v.(*stateEntry[S]).st, true
}

// Store keeps st for p, unless a state is kept for p already, and returns
// the state kept.
func (s *States[S]) Store(p *rewrite.Plan, st *S) *S {
	if s.n.Add(1) > maxStates {
		s.m.Clear()
		s.last.Store(nil)
		s.n.Store(1)
	}
	v, loaded := s.m.LoadOrStore(p, &stateEntry[S]{p, st})
	if loaded {
		s.n.Add(-1)
	}
	e := v.(*stateEntry[S])
	s.last.Store(e)
	return e.st
}
