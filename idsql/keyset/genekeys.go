package keyset

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/idsql/idsql/idsql/kinds"
	"github.com/idsql/idsql/idsql/segment"
)

// ErrSharded is wrapped by the errors of a request for keys of a sharded
// table that does not say the shard of each key.
var ErrSharded = errors.New("idsql: table is sharded: each key needs its row's shard")

// GeneTable is the key source of a segment table whose keys carry shard or
// application bits (see Gene): one segment key per shard in the store
// (Gene.ShardKey), whose numbers it composes into keys. Keys owns it.
type GeneTable struct {
	k     *Keys
	table string
	key   string // the table's segment key
	gene  Gene
	col   string    // the shard column, "" without shard bits
	lim   *keyLimit // max_id, or nil
	// queue, for a table with `buffer: redis`, hands out the numbers of
	// every shard's key instead of the segment generator.
	queue kinds.Buffer

	shards []atomic.Pointer[segment.Key] // started on first use
	srcs   []limitSource                 // per shard: its use of max_id
}

func (k *Keys) startGene(ctx context.Context, table string, tc TableConfig) (KeySource, error) {
	if err := k.startSegments(ctx); err != nil {
		return nil, err
	}
	g := tc.Gene()
	t := &GeneTable{k: k, table: table, key: k.cfg.SegmentKey(table), gene: g, lim: k.limits[table],
		shards: make([]atomic.Pointer[segment.Key], g.Shards()), srcs: make([]limitSource, g.Shards())}
	if tc.Shard != nil {
		t.col = tc.Shard.Column
	}
	if tc.Buffer == BufferRedis {
		var err error
		if t.queue, err = k.redisQueue(ctx, tc); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// Gene returns the table's key layout.
func (t *GeneTable) Gene() Gene { return t.gene }

// NextID returns a new key of a table without shard bits.
func (t *GeneTable) NextID(ctx context.Context) (int64, error) {
	ids, err := t.AppendIDs(ctx, make([]int64, 0, 1), 1)
	if err != nil {
		return 0, err
	}
	return ids[0], nil
}

// AppendIDs appends n new keys of a table without shard bits; a sharded
// table refuses with an error wrapping ErrSharded (use AppendShardIDs).
func (t *GeneTable) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	if t.gene.ShardBits > 0 {
		return dst, fmt.Errorf("%w: table %s takes the shard of each key from its column %s: "+
			"insert through the wrapper, or call Keys.AppendShardIDs with keyset.ShardOf of each row's value", ErrSharded, t.table, t.col)
	}
	return t.appendShard(ctx, dst, 0, n)
}

// AppendShardIDs appends one new key per element of shards, in the shard
// each names: all of them, or none and an error.
func (t *GeneTable) AppendShardIDs(ctx context.Context, dst []int64, shards []int) ([]int64, error) {
	for _, s := range shards {
		if s < 0 || s >= t.gene.Shards() {
			return dst, fmt.Errorf("idsql: table %s: shard %d out of range 0..%d", t.table, s, t.gene.Shards()-1)
		}
	}
	if len(shards) == 0 {
		return dst, nil
	}
	same := true
	for _, s := range shards[1:] {
		same = same && s == shards[0]
	}
	if same {
		return t.appendShard(ctx, dst, shards[0], len(shards))
	}
	// Draw each shard's keys in one call, in the order of the shards'
	// first rows, then lay them out in row order. A shard refused (its
	// keys reach max_id) after others drew gives their keys back: the
	// refusal costs no shard a key.
	counts := map[int]int{}
	var order []int
	for _, s := range shards {
		if counts[s] == 0 {
			order = append(order, s)
		}
		counts[s]++
	}
	drawn := make(map[int][]int64, len(counts))
	for _, s := range order {
		ids, err := t.appendShard(ctx, make([]int64, 0, counts[s]), s, counts[s])
		if err != nil {
			for s, ids := range drawn {
				t.lim.giveBack(ids, &t.srcs[s])
			}
			return dst, err
		}
		drawn[s] = ids
	}
	for _, s := range shards {
		dst = append(dst, drawn[s][0])
		drawn[s] = drawn[s][1:]
	}
	return dst, nil
}

// appendShard appends n keys of shard s.
func (t *GeneTable) appendShard(ctx context.Context, dst []int64, s, n int) ([]int64, error) {
	key, err := t.shardKey(ctx, s)
	if err != nil {
		return dst, err
	}
	return t.lim.take(dst, n, &t.srcs[s], func(dst []int64) ([]int64, error) {
		start := len(dst)
		dst, err := appendKeys(ctx, key, dst, n)
		for i := start; i < len(dst) && err == nil; i++ {
			if dst[i], err = t.gene.Compose(dst[i], s); err != nil {
				err = fmt.Errorf("idsql: table %s, shard %d: %w", t.table, s, err)
			}
		}
		return dst, err
	})
}

// shardKey returns what shard s's numbers come from: its key in the
// table's Redis queue, or its segment key, started on first use.
func (t *GeneTable) shardKey(ctx context.Context, s int) (segmentKey, error) {
	name := t.gene.ShardKey(t.key, s)
	if t.queue != nil {
		return queueKey{q: t.queue, key: name}, nil
	}
	if key := t.shards[s].Load(); key != nil {
		return key, nil
	}
	key, err := t.k.seg.Key(ctx, name)
	if err != nil {
		if errors.Is(err, segment.ErrUnknownKey) {
			return nil, fmt.Errorf("%w: table %s, shard %d: its segment key %q has no row in idsql_alloc: %s to create the key of every shard: %w",
				ErrNotMigrated, t.table, s, name, migrateFix, err)
		}
		return nil, fmt.Errorf("idsql: table %s, shard %d: %w", t.table, s, err)
	}
	t.shards[s].Store(key)
	return key, nil
}

// AppendShardIDs appends one new key of table per element of shards, each
// in the shard it names (0..2^bits-1; compute it with ShardOf or
// Config.ShardOf from the row's shard column value): all of them, or none
// and an error. The table must be a segment table with shard bits.
func (k *Keys) AppendShardIDs(ctx context.Context, dst []int64, table string, shards []int) ([]int64, error) {
	if err := checkBatch(table, len(shards)); err != nil {
		return dst, err
	}
	src, err := k.Source(ctx, table)
	if err != nil {
		return dst, err
	}
	g, ok := src.(*GeneTable)
	if !ok || g.gene.ShardBits == 0 {
		return dst, fmt.Errorf("idsql: table %s has no shard bits (shard: in its configuration)", table)
	}
	return g.AppendShardIDs(ctx, dst, shards)
}

// ShardOf returns the shard of value for table: ShardOf(value, its shard
// bits). It fails for a table without shard bits.
func (c *Config) ShardOf(table string, value any) (int, error) {
	tc, ok := c.Tables[table]
	if !ok {
		return 0, fmt.Errorf("%w: %q", ErrUnknownTable, table)
	}
	if tc.Shard == nil {
		return 0, fmt.Errorf("idsql: table %s has no shard bits (shard: in its configuration)", table)
	}
	s, err := ShardOf(value, tc.Shard.Bits)
	if err != nil {
		return 0, fmt.Errorf("idsql: table %s, column %s: %w", table, tc.Shard.Column, err)
	}
	return s, nil
}
