package idsql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrNotFound means no worker lease and no segment range explains an ID.
var ErrNotFound = errors.New("idsql: no table issued this ID")

// Origin says which table an ID was issued for, and how.
type Origin struct {
	ID int64
	// Key is ID as its table made it, before the table's shape (see
	// TableConfig.Shape): ID itself for an ordered table. Parts, Range
	// and Gene describe Key.
	Key      int64
	Table    string // the configured table; "" when the record names none of cfg's tables
	Strategy keyset.Strategy

	// Snowflake IDs, and the keys UUIDs of uuid7 tables carry: the
	// decoded parts and the worker lease.
	Parts snowflake.Parts
	Lease registry.Record

	// Segment IDs: the range handed out that holds the ID (for a gene
	// key, the range that holds its index).
	Range segment.Range
	// Gene is the ID taken apart for a segment table with shard or app
	// bits (see Gene), nil otherwise.
	Gene *keyset.GeneParts
}

// Instance returns the process that issued the ID.
func (o Origin) Instance() string {
	if o.Strategy == keyset.Segment {
		return o.Range.Instance
	}
	return o.Lease.Instance
}

// String describes the origin on one line, for logs and %v: the ID, the
// table and strategy, then the snowflake parts and the lease, or the segment
// range (and, for a table with shard or app bits, those).
func (o Origin) String() string {
	var b strings.Builder
	table := o.Table
	if table == "" {
		table = "(not configured)"
	}
	fmt.Fprintf(&b, "%d: table %s (%s)", o.ID, table, o.Strategy)
	if o.Key != 0 && o.Key != o.ID {
		fmt.Fprintf(&b, ", key %d before its shape", o.Key)
	}
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	switch o.Strategy {
	case keyset.Snowflake, keyset.UUID7:
		fmt.Fprintf(&b, ", worker %d, sequence %d, time %s, instance %s", o.Parts.Worker, o.Parts.Sequence, stamp(o.Parts.Time), o.Lease.Instance)
		if o.Lease.LeaseID != 0 {
			fmt.Fprintf(&b, " (lease #%d)", o.Lease.LeaseID)
		}
	case keyset.Segment:
		if g := o.Gene; g != nil {
			fmt.Fprintf(&b, ", shard %d, app %d, index %d", g.Shard, g.App, g.Index)
		}
		fmt.Fprintf(&b, ", key %s, range %d..%d handed out %s to %s", o.Range.Key, o.Range.First, o.Range.Last, stamp(o.Range.Time), o.Range.Instance)
	}
	return b.String()
}

// Lookup traces id back to its table from the records in db, the
// application's database, wrapped by idsql or not: the stores are those
// of its dialect (StoresFor). See LookupIn.
func Lookup(ctx context.Context, db *sql.DB, cfg *Config, id int64) ([]Origin, error) {
	stores, err := storesFor(db, cfg.Holder, keyset.HasSegmentTables(cfg))
	if err != nil {
		return nil, fmt.Errorf("idsql: lookup %d: %w", id, err)
	}
	return LookupIn(ctx, cfg, stores, id)
}

// LookupIn traces id back to its table. As a snowflake ID it is decoded
// with cfg's layout and matched to the worker lease whose time range holds
// its timestamp; as a segment ID it is matched to the logged ranges that
// hold it. Every explanation found is returned (segment keys may share
// numbers, and a small number can be both); none is ErrNotFound, never a
// guess. The ID of a table with a spread shape is first undone by the
// shape (Origin.Key is the key before it): each spread table's shape
// that takes the ID gives a reading, and an explanation counts only for
// the tables of its reading.
func LookupIn(ctx context.Context, cfg *Config, src Stores, id int64) ([]Origin, error) {
	if id <= 0 {
		return nil, fmt.Errorf("idsql: lookup %d: IDs are positive", id)
	}
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return nil, err
	}
	codecs, err := cfg.Codecs()
	if err != nil {
		return nil, fmt.Errorf("idsql: lookup %d: %w", id, err)
	}
	readings := shapeReadings(cfg, codecs, id)
	if err != nil {
		return nil, fmt.Errorf("idsql: lookup %d: %w", id, err)
	}
	var found []Origin
	for _, rd := range readings {
		o, err := lookupKey(ctx, cfg, src, layout, rd)
		if err != nil {
			return nil, fmt.Errorf("idsql: lookup %d: %w", id, err)
		}
		for i := range o {
			o[i].ID, o[i].Key = id, rd.key
		}
		found = append(found, o...)
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("%w: %d (namespace %s)", ErrNotFound, id, cfg.Namespace)
	}
	return found, nil
}

// A shapeReading is one way to read an ID: as the key key, made for one
// of the tables the reading names, before its shape. The ID as it is is
// the reading of ordered tables and of tables cfg does not name.
type shapeReading struct {
	key     int64
	ordered bool            // ordered tables and unconfigured ones read the ID as key
	tables  map[string]bool // the spread tables whose shape gives key
}

// takes reports whether a record naming table explains the reading.
func (r shapeReading) takes(cfg *Config, table string) bool {
	if r.tables[table] {
		return true
	}
	tc, ok := cfg.Tables[table]
	return r.ordered && (!ok || !tc.Spread())
}

// shapeReadings returns the readings of id: as it is, and undone by the
// shape of each spread table that takes it (its codec's Unshape).
func shapeReadings(cfg *Config, codecs *keyset.Codecs, id int64) []shapeReading {
	out := []shapeReading{{key: id, ordered: true}}
	for _, t := range cfg.TableNames() {
		c, err := codecs.Of(t)
		if err != nil || !c.Spread() {
			continue
		}
		key, err := c.Unshape(id)
		if err != nil {
			continue // no key of t's shape
		}
		i := 0
		for i < len(out) && out[i].key != key {
			i++
		}
		if i == len(out) {
			out = append(out, shapeReading{key: key})
		}
		if out[i].tables == nil {
			out[i].tables = map[string]bool{}
		}
		out[i].tables[t] = true
	}
	return out
}

// lookupKey explains the key of reading rd: the snowflake lease and the
// segment ranges of the tables the reading takes.
func lookupKey(ctx context.Context, cfg *Config, src Stores, layout snowflake.Layout, rd shapeReading) ([]Origin, error) {
	id := rd.key
	var found []Origin
	if src.Workers != nil {
		if p, derr := layout.Decode(id, time.Now(), time.Minute); derr == nil {
			rec, err := src.Workers.Find(ctx, cfg.Namespace, p.Worker, p.Time)
			switch {
			case err == nil && rd.takes(cfg, rec.Table):
				o := Origin{Strategy: keyset.Snowflake, Parts: p, Lease: rec}
				if tc, ok := cfg.Tables[rec.Table]; ok {
					o.Table, o.Strategy = rec.Table, tc.Strategy
				}
				found = append(found, o)
			case err != nil && !errors.Is(err, registry.ErrNoLease):
				return nil, err
			}
		}
	}
	if src.Segments != nil {
		res, err := src.Segments.Lookup(ctx, id)
		if err != nil {
			return nil, err
		}
		byKey := map[string]string{}
		geneKeys := map[string]bool{} // keys whose numbers are indexes, not IDs
		for _, t := range cfg.TableNames() {
			tc := cfg.Tables[t]
			if tc.Strategy != keyset.Segment {
				continue
			}
			if g := tc.Gene(); !g.Plain() {
				for s := range g.Shards() {
					geneKeys[g.ShardKey(cfg.SegmentKey(t), s)] = true
				}
				continue
			}
			byKey[cfg.SegmentKey(t)] = t
		}
		for _, r := range res.Ranges {
			if !geneKeys[r.Key] && rd.takes(cfg, byKey[r.Key]) {
				found = append(found, Origin{Table: byKey[r.Key], Strategy: keyset.Segment, Range: r})
			}
		}
		gene, err := lookupGene(ctx, cfg, src.Segments, rd)
		if err != nil {
			return nil, err
		}
		found = append(found, gene...)
	}
	return found, nil
}

// lookupGene explains id as a key of the segment tables with shard or app
// bits: taken apart by each table's layout, its index must lie in a range
// logged for the shard's key, and its app bits be the table's.
func lookupGene(ctx context.Context, cfg *Config, store *segment.SQLStore, rd shapeReading) ([]Origin, error) {
	id := rd.key
	var found []Origin
	byIndex := map[int64]segment.LookupResult{}
	for _, t := range cfg.TableNames() {
		tc := cfg.Tables[t]
		g := tc.Gene()
		if tc.Strategy != keyset.Segment || g.Plain() || !rd.takes(cfg, t) {
			continue
		}
		p := g.Decompose(id)
		if p.App != g.App || p.Index < 1 {
			continue
		}
		res, ok := byIndex[p.Index]
		if !ok {
			var err error
			if res, err = store.Lookup(ctx, p.Index); err != nil {
				return nil, err
			}
			byIndex[p.Index] = res
		}
		key := g.ShardKey(cfg.SegmentKey(t), p.Shard)
		for _, r := range res.Ranges {
			if r.Key == key {
				found = append(found, Origin{Table: t, Strategy: keyset.Segment, Range: r, Gene: &p})
			}
		}
	}
	return found, nil
}
