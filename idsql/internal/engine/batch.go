package engine

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strconv"
	"strings"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// FillBatch fills the executions of statements sent together, in one
// request (pgx's SendBatch): sts[i] with the caller's arguments args[i]
// ($1 first). A nil sts[i] is a statement that passes unchanged; its
// Filled is nil.
//
// A refused batch costs no key (a refused request leaves the generator
// where it was). Every execution is decided before any key is drawn, with
// each check Fill makes first (the context, the key column, the shard
// values, the batch limit), so a statement refused there costs the others
// nothing. Then the keys of each table are drawn in one request for all of
// the batch's statements into it (when they take at most MaxBatch keys
// between them; otherwise one request per statement): a max_id that cannot
// give them all refuses that request as a whole, at no cost, as it refuses
// one statement's. The tables are drawn in the order of their first
// statement; a table refused after another table's keys were drawn leaves
// those as gaps. An error names the statements it refuses by their index.
func (e *Engine) FillBatch(ctx context.Context, cat *Catalog, sts []*Stmt, args [][]driver.NamedValue) ([]*Filled, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // nothing drawn for a batch that will not be sent
	}
	rows := make([]rewrite.Rows, len(sts))
	wants := make([]want, len(sts))
	var tables [][]int // the statements into each table, by first statement
	at := map[string]int{}
	for i, st := range sts {
		if st == nil {
			continue
		}
		rows[i] = st.Plan.Decide(args[i], nil)
		w, err := e.decide(ctx, cat, st, args[i], nil, rows[i])
		if err != nil {
			return nil, fmt.Errorf("batch query %d: %w", i, err)
		}
		wants[i] = w
		j, ok := at[st.table]
		if !ok {
			j = len(tables)
			at[st.table] = j
			tables = append(tables, nil)
		}
		tables[j] = append(tables[j], i)
	}
	ids := make([][]int64, len(sts))
	for _, qs := range tables {
		if err := e.drawBatch(ctx, sts, wants, qs, ids); err != nil {
			return nil, fmt.Errorf("batch %s: %w", queries(qs), e.insertErr(sts[qs[0]], err))
		}
	}
	out := make([]*Filled, len(sts))
	for i, st := range sts {
		if st == nil {
			continue
		}
		full, err := e.argsFor(st, nil, args[i], ids[i], rows[i], nil)
		if err != nil {
			return nil, fmt.Errorf("batch query %d: %w", i, err)
		}
		out[i] = &Filled{Args: full, IDs: ids[i], rows: rows[i]}
	}
	return out, nil
}

// drawBatch draws into ids[i] the keys of each execution i of qs, all
// into one table: in one request when they take at most MaxBatch keys
// between them.
func (e *Engine) drawBatch(ctx context.Context, sts []*Stmt, wants []want, qs []int, ids [][]int64) error {
	var all want
	sharded := 0
	for _, i := range qs {
		all.n += wants[i].n
		sharded += len(wants[i].shards)
	}
	if len(qs) == 1 || all.n+sharded > MaxBatch || all.n > 0 && sharded > 0 {
		for _, i := range qs {
			var err error
			if ids[i], err = e.drawn(ctx, sts[i], wants[i], nil); err != nil {
				return err
			}
		}
		return nil
	}
	if sharded > 0 {
		all.shards = make([]int, 0, sharded)
		for _, i := range qs {
			all.shards = append(all.shards, wants[i].shards...)
		}
	}
	keys, err := e.drawn(ctx, sts[qs[0]], all, make([]int64, 0, all.n+sharded))
	if err != nil {
		return err
	}
	for _, i := range qs {
		k := wants[i].n + len(wants[i].shards)
		ids[i], keys = keys[:k:k], keys[k:]
	}
	return nil
}

// queries names the statements qs of a batch.
func queries(qs []int) string {
	if len(qs) == 1 {
		return "query " + strconv.Itoa(qs[0])
	}
	var b strings.Builder
	b.WriteString("queries ")
	for j, i := range qs {
		if j == 8 {
			fmt.Fprintf(&b, " and %d more", len(qs)-j)
			break
		}
		if j > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(i))
	}
	return b.String()
}
