package idsql_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/clocktest"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// logBuffer is a slog destination tests read back.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger { return slog.New(slog.NewTextHandler(b, nil)) }

const cappedMax = 25

func cappedConfig() *keyset.Config {
	return &keyset.Config{Namespace: "cap", Tables: map[string]keyset.TableConfig{
		"capped": {Strategy: keyset.Segment, Step: 10, MaxID: cappedMax},
	}}
}

// runOutCapped inserts into capped (max_id 25, step 10) until it runs out
// and checks the refusals and the warning. ph(n) is the n-th placeholder.
func runOutCapped(t *testing.T, db *idsql.DB, raw *sql.DB, logs *logBuffer, ph func(int) string) {
	t.Helper()
	ctx := context.Background()
	insert := func(rows int) error {
		var vals []string
		var args []any
		for i := range rows {
			vals = append(vals, "("+ph(i+1)+")")
			args = append(args, fmt.Sprint("v", i))
		}
		_, err := db.ExecContext(ctx, "INSERT INTO capped (v) VALUES "+strings.Join(vals, ", "), args...)
		return err
	}
	for i := range 20 {
		if err := insert(1); err != nil {
			t.Fatalf("insert %d: %v", i+1, err)
		}
		if warned := strings.Contains(logs.String(), "key space"); warned != (i+1 >= 20) {
			t.Fatalf("after key %d: warned %v, want a warning at 80%% (key 20) only; log:\n%s", i+1, warned, logs)
		}
	}
	// 21..30 would cross 25: the whole statement is refused before any
	// key is drawn, nothing written, and the refusal costs no key.
	err := insert(10)
	if !errors.Is(err, keyset.ErrKeySpaceExhausted) || !strings.Contains(err.Error(), "capped") || !strings.Contains(err.Error(), "max_id 25") {
		t.Fatalf("10-row insert across max_id: %v; want ErrKeySpaceExhausted naming capped and max_id 25", err)
	}
	if want := "10 keys asked, but at most 5 remain below max_id 25; refused whole, no key was drawn (ask for at most 5 keys"; !strings.Contains(err.Error(), want) {
		t.Fatalf("10-row insert across max_id: %v; want it to say %q", err, want)
	}
	// The five keys left are still there, one by one: 21..25, no gap.
	for i := range 5 {
		if err := insert(1); err != nil {
			t.Fatalf("insert %d after the refused batch: %v", 21+i, err)
		}
	}
	for range 3 {
		err := insert(1)
		if !errors.Is(err, keyset.ErrKeySpaceExhausted) || !strings.Contains(err.Error(), "capped") {
			t.Fatalf("insert after running out: %v, want ErrKeySpaceExhausted naming capped", err)
		}
		if want := "has used its keys up to max_id 25 (keys are never wrapped; raise max_id and restart)"; !strings.Contains(err.Error(), want) {
			t.Fatalf("insert after running out: %v; want it to say %q", err, want)
		}
	}
	var n, distinct int
	var hi int64
	if err := raw.QueryRowContext(ctx, "SELECT COUNT(*), COUNT(DISTINCT id), MAX(id) FROM capped").Scan(&n, &distinct, &hi); err != nil {
		t.Fatal(err)
	}
	if n != 25 || distinct != 25 || hi != 25 {
		t.Fatalf("%d rows, %d distinct keys, highest %d; want 25, 25, 25 (no partial write, no repeat, no gap)", n, distinct, hi)
	}
	if c := strings.Count(logs.String(), "key space"); c != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", c, logs)
	}
	ks := db.Keys().KeySpaces()
	if len(ks) != 1 || ks[0].Table != "capped" || ks[0].MaxID != cappedMax || ks[0].Highest != 25 || !ks[0].Exhausted || ks[0].Used() != 1 {
		t.Fatalf("KeySpaces %+v", ks)
	}
}

// openSegmentsPG opens cfg over PostgreSQL after running schema and
// Migrate on a fresh schema, with segment stores there.
func openSegmentsPG(t testing.TB, schema []string, cfg *keyset.Config, ko keyset.KeysOptions) (*idsql.DB, *sql.DB, idsql.Stores) {
	t.Helper()
	raw, dsn := pgtest.Open(t)
	stores, err := idsql.StoresFor(raw, keyset.HolderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	return openSegments(t, "postgres", dsn, raw, stores, schema, cfg, ko), raw, stores
}

// openSegmentsMySQL is openSegmentsPG on MariaDB.
func openSegmentsMySQL(t testing.TB, schema []string, cfg *keyset.Config, ko keyset.KeysOptions) (*idsql.DB, *sql.DB, idsql.Stores) {
	t.Helper()
	dsn := mysqltest.Database(t)
	raw, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	stores := idsql.Stores{Segments: mysqlstore.New(raw)}
	ko.SegmentStore = stores.Segments
	return openSegments(t, "mysql", dsn, raw, stores, schema, cfg, ko), raw, stores
}

func openSegments(t testing.TB, driver, dsn string, raw *sql.DB, stores idsql.Stores, schema []string, cfg *keyset.Config, ko keyset.KeysOptions) *idsql.DB {
	t.Helper()
	ctx := context.Background()
	for _, q := range schema {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := idsql.MigrateIn(ctx, raw, cfg, stores); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open(driver, dsn, cfg, idsql.Options{KeysOptions: ko})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

const cappedSchema = `CREATE TABLE capped (id bigint PRIMARY KEY, v text)`

func TestMaxIDPostgres(t *testing.T) {
	logs := &logBuffer{}
	db, raw, _ := openSegmentsPG(t, []string{cappedSchema}, cappedConfig(), keyset.KeysOptions{Logger: logs.logger()})
	runOutCapped(t, db, raw, logs, func(n int) string { return fmt.Sprint("$", n) })
}

func TestMaxIDMySQL(t *testing.T) {
	logs := &logBuffer{}
	db, raw, _ := openSegmentsMySQL(t, []string{cappedSchema}, cappedConfig(), keyset.KeysOptions{Logger: logs.logger()})
	runOutCapped(t, db, raw, logs, func(int) string { return "?" })
}

// A snowflake table's keys grow with time: max_id is the last moment it may
// issue. The fake clock runs past it.
func TestMaxIDSnowflake(t *testing.T) {
	epoch := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	clock := clocktest.New(epoch.Add(time.Second))
	const shift = 10 + 12           // worker and sequence bits
	maxID := int64(2000)<<shift - 1 // the last key of the tick 2 s after the epoch
	cfg := &keyset.Config{Namespace: "capsnow",
		Layout: keyset.LayoutConfig{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Epoch: epoch},
		Tables: map[string]keyset.TableConfig{"events": {Strategy: keyset.Snowflake, MaxID: maxID}}}
	logs := &logBuffer{}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Static(map[string]int64{"events": 3}), Clock: clock, Logger: logs.logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	ctx := context.Background()
	seen := map[int64]bool{}
	var last error
	for i := 0; i < 100 && last == nil; i++ {
		ids, err := keys.NextIDs(ctx, "events", 50)
		if err != nil {
			last = err
			if len(ids) != 0 {
				t.Fatalf("refused batch returned %d keys", len(ids))
			}
			break
		}
		for _, id := range ids {
			if seen[id] || id > maxID {
				t.Fatalf("key %d: repeated %v, above max_id %d", id, seen[id], maxID)
			}
			seen[id] = true
		}
		clock.Add(50 * time.Millisecond)
	}
	if !errors.Is(last, keyset.ErrKeySpaceExhausted) || !strings.Contains(last.Error(), "events") || !strings.Contains(last.Error(), fmt.Sprint("max_id ", maxID)) {
		t.Fatalf("last error %v; want ErrKeySpaceExhausted naming events and its max_id", last)
	}
	if len(seen) != 20*50 {
		t.Fatalf("%d keys issued, want 1000 (one batch per 50 ms tick from 1 s to 2 s)", len(seen))
	}
	// Refused at once from now on, even when the clock went back.
	clock.Set(epoch.Add(time.Second))
	if _, err := keys.NextID(ctx, "events"); !errors.Is(err, keyset.ErrKeySpaceExhausted) {
		t.Fatalf("after running out: %v", err)
	}
	if c := strings.Count(logs.String(), "key space"); c != 1 {
		t.Fatalf("%d warnings, want 1:\n%s", c, logs)
	}
}

func TestKeySpaceConfig(t *testing.T) {
	for _, tc := range []struct {
		yaml, field string
	}{
		{`orders: {strategy: segment, max_id: -1}`, "tables.orders.max_id"},
		{`orders: {strategy: snowflake, shard: {column: user_id, bits: 6}}`, "tables.orders.shard"},
		{`orders: {strategy: snowflake, app: {id: 1, bits: 4}}`, "tables.orders.app"},
		{`orders: {strategy: segment, shard: {column: user_id, bits: 0}}`, "tables.orders.shard.bits"},
		{`orders: {strategy: segment, shard: {column: user_id, bits: 13}}`, "tables.orders.shard.bits"},
		{`orders: {strategy: segment, shard: {column: id, bits: 6}}`, "tables.orders.shard.column"},
		{`orders: {strategy: segment, shard: {column: "a b", bits: 6}}`, "tables.orders.shard.column"},
		{`orders: {strategy: segment, app: {id: 256, bits: 8}}`, "tables.orders.app.id"},
		{`orders: {strategy: segment, app: {id: 1, bits: 17}}`, "tables.orders.app.bits"},
		{`orders: {strategy: segment, shard: {column: u, bits: 12}, app: {id: 1, bits: 16}}`, "tables.orders"},
		{`orders: {strategy: segment, shard: {column: u, bits: 6}, max_id: 63}`, "tables.orders.max_id"},
	} {
		_, err := keyset.Parse("x.yaml", []byte("namespace: n\ntables:\n  "+tc.yaml+"\n"), time.Now())
		var fe *keyset.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a FieldError on %s", tc.yaml, err, tc.field)
		}
	}
	cfg, err := keyset.Parse("x.yaml", []byte("namespace: n\ntables:\n  orders: {strategy: segment, shard: {column: user_id, bits: 6}, app: {id: 3, bits: 8}, max_id: 4294967295}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.Tables["orders"].Gene(); g != (keyset.Gene{ShardBits: 6, AppBits: 8, App: 3}) || cfg.Tables["orders"].MaxID != 1<<32-1 {
		t.Fatalf("parsed %+v", cfg.Tables["orders"])
	}
}

// Promise 11, a refused request costs nothing: with max_id 15 and one key
// used, a batch of 20 is refused before drawing; the next key is 2, and
// keys 2..15 are all still issued.
func TestRefusedBatchCostsNothing(t *testing.T) {
	cfg := &keyset.Config{Namespace: "cap15", Tables: map[string]keyset.TableConfig{
		"small": {Strategy: keyset.Segment, Step: 10, MaxID: 15},
	}}
	db, _, _ := openSegmentsPG(t, []string{`CREATE TABLE small (id bigint PRIMARY KEY)`}, cfg, keyset.KeysOptions{})
	keys, ctx := db.Keys(), context.Background()
	if id, err := keys.NextID(ctx, "small"); err != nil || id != 1 {
		t.Fatalf("first key %d, %v", id, err)
	}
	ids, err := keys.NextIDs(ctx, "small", 20)
	if !errors.Is(err, keyset.ErrKeySpaceExhausted) || len(ids) != 0 {
		t.Fatalf("batch of 20: %v, %v; want ErrKeySpaceExhausted and no key", ids, err)
	}
	for _, want := range []string{"table small", "20 keys asked", "at most 14 remain below max_id 15", "no key was drawn", "ask for at most 14 keys, or raise max_id"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("batch of 20: %v; want it to say %q", err, want)
		}
	}
	if id, err := keys.NextID(ctx, "small"); err != nil || id != 2 {
		t.Fatalf("key after the refused batch %d, %v; want 2", id, err)
	}
	ids, err = keys.NextIDs(ctx, "small", 13)
	if err != nil || len(ids) != 13 || ids[0] != 3 || ids[12] != 15 {
		t.Fatalf("the last 13 keys: %v, %v; want 3..15", ids, err)
	}
	if _, err := keys.NextID(ctx, "small"); !errors.Is(err, keyset.ErrKeySpaceExhausted) || !strings.Contains(err.Error(), "used its keys up to max_id 15") {
		t.Fatalf("after 15: %v", err)
	}
}

// A batch that crosses max_id although the process could not tell before
// drawing (its first request) keeps the keys below max_id for later ones.
func TestCrossingBatchKeepsItsKeys(t *testing.T) {
	cfg := &keyset.Config{Namespace: "cap5", Tables: map[string]keyset.TableConfig{
		"tiny": {Strategy: keyset.Segment, Step: 10, MaxID: 5},
	}}
	db, _, _ := openSegmentsPG(t, []string{`CREATE TABLE tiny (id bigint PRIMARY KEY)`}, cfg, keyset.KeysOptions{})
	keys, ctx := db.Keys(), context.Background()
	_, err := keys.NextIDs(ctx, "tiny", 8)
	if !errors.Is(err, keyset.ErrKeySpaceExhausted) || !strings.Contains(err.Error(), "the 5 keys below max_id drawn for it are kept for later requests") ||
		!strings.Contains(err.Error(), "ask for at most 5 keys") {
		t.Fatalf("first batch of 8 across max_id 5: %v", err)
	}
	if ids, err := keys.NextIDs(ctx, "tiny", 6); !errors.Is(err, keyset.ErrKeySpaceExhausted) || len(ids) != 0 || !strings.Contains(err.Error(), "at most 5 remain") {
		t.Fatalf("6 of the 5 kept: %v, %v", ids, err)
	}
	ids, err := keys.NextIDs(ctx, "tiny", 5)
	if err != nil || fmt.Sprint(ids) != "[1 2 3 4 5]" {
		t.Fatalf("the 5 kept keys: %v, %v", ids, err)
	}
	if ks := keys.KeySpaces(); !ks[0].Exhausted || ks[0].Highest != 5 {
		t.Fatalf("KeySpaces %+v", ks)
	}
}

// A snowflake table refuses a batch bigger than what remains below max_id
// before drawing: the next key follows the last one issued.
func TestRefusedSnowflakeBatchCostsNothing(t *testing.T) {
	epoch := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	clock := clocktest.New(epoch.Add(time.Second))
	cfg := &keyset.Config{Namespace: "capsnow2",
		Layout: keyset.LayoutConfig{TimeBits: 41, WorkerBits: 10, SequenceBits: 12, Epoch: epoch},
		Tables: map[string]keyset.TableConfig{"events": {Strategy: keyset.Snowflake, MaxID: 1000<<22 | 3<<12 | 10}}}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: holder.Static(map[string]int64{"events": 3}), Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	ctx := context.Background()
	first, err := keys.NextID(ctx, "events")
	if err != nil || first != 1000<<22|3<<12 {
		t.Fatalf("first key %d, %v", first, err)
	}
	if _, err := keys.NextIDs(ctx, "events", 20); !errors.Is(err, keyset.ErrKeySpaceExhausted) || !strings.Contains(err.Error(), "at most 10 remain") || !strings.Contains(err.Error(), "no key was drawn") {
		t.Fatalf("batch of 20 with 10 left: %v", err)
	}
	if id, err := keys.NextID(ctx, "events"); err != nil || id != first+1 {
		t.Fatalf("key after the refused batch %d, %v; want %d", id, err, first+1)
	}
}
