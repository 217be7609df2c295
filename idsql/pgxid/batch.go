package pgxid

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SendBatch sends b with its INSERTs filled, as Exec fills them. b itself
// is not modified: the batch sent is a copy whose filled queries are
// copies too (their callbacks included). A statement refused before
// sending (see the package documentation) fails the whole batch, and
// nothing is sent. A transaction the batch begins (Batch.BeginTx) is a
// Tx that fills keys.
func (s *session) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	nb, err := s.fillBatch(ctx, b)
	if err != nil {
		return errBatch{err}
	}
	return &batchResults{BatchResults: s.q.SendBatch(ctx, nb), s: s}
}

// fillBatch returns b, or a copy of it with its INSERTs filled.
func (s *session) fillBatch(ctx context.Context, b *pgx.Batch) (*pgx.Batch, error) {
	var queued []*pgx.QueuedQuery // nil until a query changes
	for i, qq := range b.QueuedQueries {
		var sql string
		var args []any
		if j := rewriterAt(qq.Arguments); j >= 0 {
			sql, args = qq.SQL, s.withFilling(qq.Arguments, j)
		} else {
			var err error
			if sql, args, err = s.filled(ctx, qq.SQL, qq.Arguments); err != nil {
				return nil, fmt.Errorf("pgxid: batch query %d: %w", i, err)
			}
			if sql == qq.SQL && len(args) == len(qq.Arguments) {
				continue
			}
		}
		if queued == nil {
			queued = slices.Clone(b.QueuedQueries)
		}
		c := *qq
		c.SQL, c.Arguments = sql, args
		queued[i] = &c
	}
	if queued == nil {
		return b, nil
	}
	nb := *b // keeps what Batch.BeginTx set
	nb.QueuedQueries = queued
	return &nb, nil
}

// batchResults wraps the transaction a batch begins.
type batchResults struct {
	pgx.BatchResults
	s *session
}

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
