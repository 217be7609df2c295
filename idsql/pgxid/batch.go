package pgxid

import (
	"context"
	"database/sql/driver"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idsql/idsql/idsql/internal/engine"
)

// SendBatch sends b with its INSERTs filled, as Exec fills them. b itself
// is not modified: the batch sent is a copy whose filled queries are
// copies too (their callbacks included). A statement refused before
// sending (see the package documentation) fails the whole batch, and
// nothing is sent; the keys of the batch's INSERTs are drawn only once
// every one of them passed its checks, and those of each table in one
// request, so a refused batch costs no key (engine.FillBatch). A
// transaction the batch begins (Batch.BeginTx) is a Tx that fills keys.
func (s *session) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	nb, err := s.fillBatch(ctx, b)
	if err != nil {
		return errBatch{err}
	}
	return &batchResults{BatchResults: s.q.SendBatch(ctx, nb), s: s}
}

// fillBatch returns b, or a copy of it with its INSERTs filled. A query
// with a pgx.QueryRewriter among its arguments (pgx.NamedArgs) is filled
// by pgx as it sends it, after the rewriter (see filling), one at a time.
func (s *session) fillBatch(ctx context.Context, b *pgx.Batch) (*pgx.Batch, error) {
	var sts []*engine.Stmt // by query; nil until an INSERT needs filling
	var args [][]driver.NamedValue
	var send []string
	for i, qq := range b.QueuedQueries {
		if rewriterAt(qq.Arguments) >= 0 {
			continue
		}
		st, sql, err := s.plan(ctx, qq.SQL)
		if err != nil {
			return nil, fmt.Errorf("pgxid: batch query %d: %w", i, err)
		}
		if st == nil {
			continue
		}
		if sts == nil {
			n := len(b.QueuedQueries)
			sts, args, send = make([]*engine.Stmt, n), make([][]driver.NamedValue, n), make([]string, n)
		}
		sts[i], args[i], send[i] = st, engine.Named(nil, ownArgs(qq.Arguments)), sql
	}
	var filled []*engine.Filled
	if sts != nil {
		var err error
		if filled, err = s.s.eng.FillBatch(ctx, s.cat, sts, args); err != nil {
			return nil, fmt.Errorf("pgxid: %w", err)
		}
	}
	var queued []*pgx.QueuedQuery // nil until a query changes
	for i, qq := range b.QueuedQueries {
		c := *qq
		if j := rewriterAt(qq.Arguments); j >= 0 {
			c.Arguments = s.withFilling(qq.Arguments, j)
		} else if sts != nil && sts[i] != nil {
			c.SQL, c.Arguments = send[i], filledArgs(qq.Arguments, filled[i])
		} else {
			continue
		}
		if queued == nil {
			queued = slices.Clone(b.QueuedQueries)
		}
		queued[i] = &c
	}
	if queued == nil {
		return b, nil
	}
	nb := *b // keeps what Batch.BeginTx set
	nb.QueuedQueries = queued
	return &nb, nil
}

// batchResults are the results of a batch pgxid sent: their errors say
// how to mend a statement a connection pooler split (engine.Engine.Sent),
// and the transaction the batch begins fills keys.
type batchResults struct {
	pgx.BatchResults
	s *session
}

// Exec returns the next query's command tag.
func (r *batchResults) Exec() (pgconn.CommandTag, error) {
	tag, err := r.BatchResults.Exec()
	return tag, r.s.s.eng.Sent(err)
}

// Query returns the next query's rows.
func (r *batchResults) Query() (pgx.Rows, error) {
	rows, err := r.BatchResults.Query()
	if err != nil {
		return rows, r.s.s.eng.Sent(err)
	}
	return sentRows{rows, r.s.s.eng}, nil
}

// QueryRow returns the next query's row.
func (r *batchResults) QueryRow() pgx.Row { return sentRow{r.BatchResults.QueryRow(), r.s.s.eng} }

// Close reads the rest of the batch's results.
func (r *batchResults) Close() error { return r.s.s.eng.Sent(r.BatchResults.Close()) }

// Tx returns the transaction the batch began, as a Tx that fills keys, or
// nil.
func (r *batchResults) Tx() pgx.Tx {
	tx := r.BatchResults.Tx()
	if tx == nil {
		return nil
	}
	return r.s.wrapTx(tx)
}

// errBatch is the result of a batch refused before it was sent.
type errBatch struct{ err error }

func (r errBatch) Exec() (pgconn.CommandTag, error) { return pgconn.CommandTag{}, r.err }
func (r errBatch) Query() (pgx.Rows, error)         { return errRows(r), r.err }
func (r errBatch) QueryRow() pgx.Row                { return errRow(r) }
func (r errBatch) Close() error                     { return r.err }
func (r errBatch) Tx() pgx.Tx                       { return nil }
