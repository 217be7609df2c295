package dialect

import (
	"context"
	"fmt"
	"sync"
)

// Querier reads and writes: *sql.DB, *sql.Conn and *sql.Tx.
type Querier interface {
	RowQueryer
	Execer
}

// OneWriter guards idsql's read-modify-write transactions (a worker ID's
// claim, a segment range's allocation) on a multi-writer cluster. Such a
// cluster can lose one of two concurrent updates of a row made on
// different nodes: Galera's certification does not catch every one (a
// lost update; measured with one counter row and six clients on three
// nodes, and found by Jepsen in a healthy cluster). Two claims or two
// allocations through different nodes could then both succeed on the
// same worker ID or range. Through one node at a time they are that
// node's own InnoDB transactions and stay serial.
//
// Its zero value is ready; it is safe for concurrent use.
type OneWriter struct {
	mu      sync.Mutex
	known   bool
	cluster string
}

// Check refuses (an error wrapping refused, saying for what: "a worker
// ID's claim", "a segment range's allocation") when q's server is a
// node of a multi-writer cluster, unless accepted says every process
// writes through one node at a time; then it waits until the node has
// applied what the cluster committed before (Dialect.CatchUp), so that
// a node that has just taken over the writes of a failed one reads them.
// Elsewhere it does nothing past the first call, which asks the server
// what it is.
func (o *OneWriter) Check(ctx context.Context, d Dialect, q Querier, accepted bool, refused error, what string) error {
	cluster, err := o.clusterOf(ctx, d, q)
	switch {
	case err != nil:
		return err
	case cluster == "":
		return nil
	case !accepted:
		return fmt.Errorf("%w: the server is one node of %s, which can lose one of two updates of a row made at once on different nodes, "+
			"so %s through one node could repeat one through another; send every idsql process's writes to one node at a time "+
			"(a proxy with one writer node, which moves to another only when that one failed) and set holder.one_writer_node: true",
			refused, cluster, what)
	}
	if err := d.CatchUp(ctx, q); err != nil {
		return fmt.Errorf("wait for the node to apply the cluster's writes: %w", err)
	}
	return nil
}

// clusterOf returns Dialect.MultiWriter's answer for q's server, asked
// until one call has it: a server does not become a cluster node while it
// runs. Callers that overlap before then each ask.
func (o *OneWriter) clusterOf(ctx context.Context, d Dialect, q RowQueryer) (string, error) {
	o.mu.Lock()
	known, cluster := o.known, o.cluster
	o.mu.Unlock()
	if known {
		return cluster, nil
	}
	cluster, err := d.MultiWriter(ctx, q)
	if err != nil {
		return "", err
	}
	o.mu.Lock()
	o.known, o.cluster = true, cluster
	o.mu.Unlock()
	return cluster, nil
}
