package engine

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// Known reports whether the keys generated for an execution of p name rows
// it wrote, from what the database answered: affected is its
// RowsAffected (-1 when the driver did not say), and countsUpdates says
// that the database counts a row an upsert updated twice and one it left
// as it was not at all (MySQL and MariaDB, unless the client asked for
// found rows: CLIENT_FOUND_ROWS).
//
// A statement that wrote no row wrote none of its keys, and one that
// wrote fewer rows than it has (INSERT IGNORE, ON CONFLICT DO NOTHING,
// INSERT OR IGNORE skipped some) does not say which. An upsert (ON
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
		// INSERT IGNORE, ON CONFLICT DO NOTHING, INSERT OR IGNORE: a row
		// may have been skipped, and which one is not said.
		return affected < 0 || affected >= int64(p.Rows)
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
