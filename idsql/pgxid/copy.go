package pgxid

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// Key blocks CopyFrom draws: the first is small, so a short copy wastes
// few keys, and each next one doubles up to the last.
const (
	firstCopyBlock = 16
	maxCopyBlock   = 1024
)

// CopyFrom copies rows into table. Into a configured table whose columns
// do not include the key column, it adds the key column and gives each
// row a key. When they include it, a row whose key is 0 or NULL gets a
// key in its place, as an INSERT's row would (fill_zero; not for a table
// with fill_zero: false or shard bits, whose rows keep the caller's keys).
// Otherwise it copies as pgx does. A key that cannot be issued aborts the
// copy, which then writes nothing.
func (s *session) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error) {
	t, ok := s.s.copyTable(table)
	if !ok {
		return s.q.CopyFrom(ctx, table, columns, rows)
	}
	for i, c := range columns {
		if c != t.KeyColumn {
			continue
		}
		if t.KeepZero {
			return s.q.CopyFrom(ctx, table, columns, rows) // the caller's keys
		}
		// The key column's width is checked at the first key drawn.
		k := &keyedRows{ctx: ctx, s: s.s, t: t, cat: s.cat, table: t.String(), src: rows, keyAt: i, shardAt: -1}
		return k.copy(s.q, table, columns)
	}
	if _, err := s.s.eng.CheckKey(ctx, s.cat, t); err != nil {
		return 0, err
	}
	k := &keyedRows{ctx: ctx, s: s.s, table: t.String(), src: rows, keyAt: -1, shardAt: -1}
	if t.ShardColumn != "" {
		for i, c := range columns {
			if c == t.ShardColumn {
				k.shardAt, k.shardCol = i, c
			}
		}
		if k.shardAt < 0 {
			return 0, fmt.Errorf("pgxid: copy into %s: each key carries the shard of the row's column %s, and the copy's columns %q do not include it",
				k.table, t.ShardColumn, columns)
		}
	}
	return k.copy(s.q, table, append(columns[:len(columns):len(columns)], t.KeyColumn))
}

// copy runs the COPY of k's rows into table's columns on q. A copy that k
// aborted fails with k's own error (the server reports only its text).
func (k *keyedRows) copy(q Querier, table pgx.Identifier, columns []string) (int64, error) {
	n, err := q.CopyFrom(k.ctx, table, columns, k)
	if err != nil && k.err != nil {
		return n, k.err
	}
	return n, err
}

// copyTable returns the configured table a COPY's table name designates.
// pgx quotes each part of the name, so the parts are compared as quoted
// identifiers: exactly.
func (s *shared) copyTable(id pgx.Identifier) (rewrite.Table, bool) {
	switch len(id) {
	case 1:
		return s.eng.Default().Match("", id[0])
	case 2:
		return s.eng.Default().Match(id[0], id[1])
	}
	return rewrite.Table{}, false
}

// keyedRows appends a key to each row of src, or, with keyAt, puts one in
// place of each zero key at keyAt.
type keyedRows struct {
	ctx   context.Context
	s     *shared
	table string
	src   pgx.CopyFromSource

	// keyAt is the index of the caller's key column (-1 when the copy
	// does not list it); t and cat check the column at the first key
	// drawn for it (checked).
	keyAt   int
	t       rewrite.Table
	cat     *engine.Catalog
	checked bool

	ids   []int64 // the block drawn last
	next  int     // ids[next:] are not used yet
	block int
	row   []any
	err   error

	// A sharded table: each row's key is drawn in the shard of its value
	// at shardAt (-1 for other tables), one key per row.
	shardAt  int
	shardCol string
	shard    [1]int
}

func (k *keyedRows) Next() bool { return k.err == nil && k.src.Next() }

// Values returns the source's row with a key appended, in a buffer reused
// for every row (pgx encodes a row before it asks for the next).
func (k *keyedRows) Values() ([]any, error) {
	vals, err := k.src.Values()
	if err != nil {
		return nil, err
	}
	if k.keyAt >= 0 {
		if k.keyAt >= len(vals) || !rewrite.IsZeroKey(vals[k.keyAt]) {
			return vals, nil // the caller's key
		}
		if !k.checked {
			if _, k.err = k.s.eng.CheckKey(k.ctx, k.cat, k.t); k.err != nil {
				return nil, k.err
			}
			k.checked = true
		}
		if err := k.draw(); err != nil {
			return nil, err
		}
		k.row = append(k.row[:0], vals...)
		k.row[k.keyAt] = k.ids[k.next]
		k.next++
		return k.row, nil
	}
	if k.shardAt >= 0 {
		if k.shardAt >= len(vals) {
			k.err = fmt.Errorf("pgxid: copy into %s: a row of %d values has no column %s", k.table, len(vals), k.shardCol)
			return nil, k.err
		}
		if k.shard[0], err = k.s.eng.ShardOf(k.table, vals[k.shardAt]); err != nil {
			k.err = fmt.Errorf("pgxid: copy into %s: column %s: %w", k.table, k.shardCol, err)
			return nil, k.err
		}
		if k.ids, err = k.s.keys.AppendShardIDs(k.ctx, k.ids[:0], k.table, k.shard[:]); err != nil {
			k.err = fmt.Errorf("pgxid: copy into %s: %w", k.table, err)
			return nil, k.err
		}
		k.next = 0
	} else if err := k.draw(); err != nil {
		return nil, err
	}
	k.row = append(append(k.row[:0], vals...), k.ids[k.next])
	k.next++
	return k.row, nil
}

// draw draws the next block of keys when the last is used up.
func (k *keyedRows) draw() error {
	if k.next < len(k.ids) {
		return nil
	}
	k.block = min(max(2*k.block, firstCopyBlock), maxCopyBlock)
	var err error
	if k.ids, err = k.s.keys.AppendIDs(k.ctx, k.ids[:0], k.table, k.block); err != nil {
		k.err = fmt.Errorf("pgxid: copy into %s: %w", k.table, err)
		return k.err
	}
	k.next = 0
	return nil
}

func (k *keyedRows) Err() error {
	if k.err != nil {
		return k.err
	}
	return k.src.Err()
}
