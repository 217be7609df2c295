package engine

import (
	"context"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// Key blocks a copy draws: the first is small, so a short copy wastes few
// keys, and each next one doubles up to the last.
const (
	firstCopyBlock = 16
	maxCopyBlock   = 1024
)

// RowSource is a source of rows to copy (pgx.CopyFromSource's methods).
type RowSource interface {
	Next() bool
	Values() ([]any, error)
	Err() error
}

// Copy decides a copy of src's rows into columns of the configured table
// t: when columns do not include the key column, it adds the key column
// and gives each row a key (in the shard of its shard column's value, for
// a table with shard bits); when they include it, a row whose key is 0 or
// NULL gets a key in its place, as an INSERT's row would, unless the table
// keeps zero keys (fill_zero: false, or shard bits), whose rows keep the
// caller's keys. It returns the columns to copy and the rows, which draw
// the keys as the copy reads them; rows is nil when the copy takes no key
// and goes as the caller wrote it.
func (e *Engine) Copy(ctx context.Context, cat *Catalog, t rewrite.Table, columns []string, src RowSource) ([]string, *CopyRows, error) {
	if err := e.refuseUUID(t.String(), "copy"); err != nil {
		return nil, nil, err
	}
	k := &CopyRows{ctx: ctx, e: e, t: t, cat: cat, table: t.String(), src: src, keyAt: -1, shardAt: -1}
	for i, c := range columns {
		if c != t.KeyColumn {
			continue
		}
		if t.KeepZero {
			return columns, nil, nil // the caller's keys
		}
		// The key column's width is checked at the first key drawn.
		k.keyAt = i
		return columns, k, nil
	}
	if _, err := e.CheckKey(ctx, cat, t); err != nil {
		return nil, nil, err
	}
	k.checked = true
	if t.ShardColumn != "" {
		for i, c := range columns {
			if c == t.ShardColumn {
				k.shardAt, k.shardCol = i, c
			}
		}
		if k.shardAt < 0 {
			return nil, nil, fmt.Errorf("%s: copy into %s: each key carries the shard of the row's column %s, and the copy's columns %q do not include it",
				e.cfg.Prefix, k.table, t.ShardColumn, columns)
		}
	}
	return append(columns[:len(columns):len(columns)], t.KeyColumn), k, nil
}

// CopyRows are the rows of a copy the engine keys (Engine.Copy): a key
// appended to each row, or, with keyAt, put in place of each zero key at
// keyAt. It is a RowSource.
type CopyRows struct {
	ctx   context.Context
	e     *Engine
	t     rewrite.Table
	cat   *Catalog
	table string
	src   RowSource

	// keyAt is the index of the caller's key column (-1 when the copy
	// does not list it); the column is checked at the first key drawn
	// for it (checked).
	keyAt   int
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

// Next reports whether there is another row, as the source does, until a
// key could not be given.
func (k *CopyRows) Next() bool { return k.err == nil && k.src.Next() }

// Values returns the source's row with its key, in a buffer reused for
// every row (a copy encodes a row before it asks for the next).
func (k *CopyRows) Values() ([]any, error) {
	vals, err := k.src.Values()
	if err != nil {
		return nil, err
	}
	if k.keyAt >= 0 {
		if k.keyAt >= len(vals) || !rewrite.IsZeroKey(vals[k.keyAt]) {
			return vals, nil // the caller's key
		}
		if !k.checked {
			if _, k.err = k.e.CheckKey(k.ctx, k.cat, k.t); k.err != nil {
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
			return nil, k.fail(fmt.Errorf("a row of %d values has no column %s", len(vals), k.shardCol))
		}
		if k.shard[0], err = k.e.ShardOf(k.table, vals[k.shardAt]); err != nil {
			return nil, k.fail(fmt.Errorf("column %s: %w", k.shardCol, err))
		}
		if k.ids, err = k.e.cfg.Keys.AppendShardIDs(k.ctx, k.ids[:0], k.table, k.shard[:]); err != nil {
			return nil, k.fail(err)
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
func (k *CopyRows) draw() error {
	if k.next < len(k.ids) {
		return nil
	}
	k.block = min(max(2*k.block, firstCopyBlock), maxCopyBlock)
	src, err := k.e.cfg.Keys.Source(k.ctx, k.table)
	if err == nil {
		k.ids, err = src.AppendIDs(k.ctx, k.ids[:0], k.block)
	}
	if err != nil {
		return k.fail(err)
	}
	k.next = 0
	return nil
}

// fail ends the copy with err, naming the door and the table.
func (k *CopyRows) fail(err error) error {
	k.err = fmt.Errorf("%s: copy into %s: %w", k.e.cfg.Prefix, k.table, err)
	return k.err
}

// Err returns why the rows ended early: a key that could not be given, or
// the source's error.
func (k *CopyRows) Err() error {
	if k.err != nil {
		return k.err
	}
	return k.src.Err()
}

// Failure returns the error of a copy of these rows that failed with err:
// the rows' own, when they aborted it (the server reports only its text),
// else err.
func (k *CopyRows) Failure(err error) error {
	if err != nil && k.err != nil {
		return k.err
	}
	return err
}
