package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/holder/workertable"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// snowflakeDBTarget is a database a snowflake table's database-side
// default is installed on.
type snowflakeDBTarget struct {
	name, driver string
	open         func(t testing.TB) (*sql.DB, string)
	create       string // CREATE TABLE %s, a table with a key and a note
	ph           string // the first placeholder
	// setClock returns the statement that makes the session's default
	// read the clock at us microseconds since 1970.
	setClock func(us int64) string
	// manyRows inserts n rows with INSERT ... SELECT, keys left to the
	// default.
	manyRows string
	// holder is the kind whose worker table the database holds.
	holder keyset.HolderKind
}

var snowflakeDBTargets = []snowflakeDBTarget{
	{
		name: "postgres", driver: "postgres", open: pgtest.Open,
		create: `CREATE TABLE %s (id bigint PRIMARY KEY, note text NOT NULL)`, ph: "$1",
		setClock: func(us int64) string { return fmt.Sprintf("SET idsql.now_us = '%d'", us) },
		manyRows: `INSERT INTO events (note) SELECT 'select-' || g FROM generate_series(1, %d) g`,
		holder:   "postgres",
	},
	{
		name: "mariadb", driver: "mysql", open: mysqltest.Open,
		create: `CREATE TABLE %s (id BIGINT PRIMARY KEY, note VARCHAR(40) NOT NULL)`, ph: "?",
		setClock: func(us int64) string { return fmt.Sprintf("SET @idsql_now_us = %d", us) },
		manyRows: `INSERT INTO events (note) SELECT CONCAT('select-', seq) FROM seq_1_to_%d`,
		holder:   "mysql",
	},
}

// snowflakeDBConfig is a namespace with one snowflake table and two
// worker IDs kept for the database.
func snowflakeDBConfig(kind keyset.HolderKind) *keyset.Config {
	cfg := &keyset.Config{Namespace: "shop", Tables: map[string]keyset.TableConfig{
		"events": {Strategy: keyset.Snowflake},
	}}
	cfg.Holder.Kind = kind
	cfg.Holder.Mode = "lease"
	cfg.Holder.DatabaseWorkers = 2
	cfg.Holder.AcceptLazyCommits = true // the test MariaDB does not flush every commit
	return cfg
}

// A snowflake table's database-side default composes keys under a worker
// ID reserved in idsql_workers: writers that bypass idsql (plain INSERT,
// multi-row VALUES, INSERT ... SELECT) get keys that Lookup traces to the
// table, that never repeat while the database clock steps back and
// forth, and that the wrapper's own keys (from the worker IDs below the
// reserved ones) never meet. Installing again changes nothing.
func TestSnowflakeDBDefault(t *testing.T) {
	for _, target := range snowflakeDBTargets {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			raw, dsn := target.open(t)
			if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.create, "events")); err != nil {
				t.Fatal(err)
			}
			cfg := snowflakeDBConfig(target.holder)
			layout, err := cfg.SnowflakeLayout()
			if err != nil {
				t.Fatal(err)
			}
			reserved := layout.MaxWorker() - 1 // the lowest of the two
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("MigrateWith: %v", err)
			}
			var before string
			defaultOf(t, raw, target, &before)
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("MigrateWith again: %v", err)
			}
			var after string
			defaultOf(t, raw, target, &after)
			if after != before {
				t.Fatalf("installing again changed the default:\n%s\nto\n%s", before, after)
			}

			// One connection, so the session's clock holds for each insert.
			conn, err := raw.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			var order []int64 // keys in the order they were drawn
			insert := func(q string) {
				t.Helper()
				var maxBefore int64
				if err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) FROM events`).Scan(&maxBefore); err != nil {
					t.Fatal(err)
				}
				if _, err := conn.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				rows, err := conn.QueryContext(ctx, `SELECT id FROM events WHERE id > `+target.ph+` ORDER BY id`, maxBefore)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				n := 0
				for rows.Next() {
					var id int64
					if err := rows.Scan(&id); err != nil {
						t.Fatal(err)
					}
					order = append(order, id)
					n++
				}
				if n == 0 {
					t.Fatalf("%s: no row with a key above every earlier one: the counter moved back", q)
				}
			}
			now := time.Now()
			steps := []struct {
				name string
				at   time.Time
			}{
				{"now", now},
				{"back 5s", now.Add(-5 * time.Second)},
				{"back 1h", now.Add(-time.Hour)},
				{"forward 30s", now.Add(30 * time.Second)},
				{"back to now", now},
			}
			for _, s := range steps {
				if _, err := conn.ExecContext(ctx, target.setClock(s.at.UnixMicro())); err != nil {
					t.Fatal(err)
				}
				insert(`INSERT INTO events (note) VALUES ('one ` + s.name + `')`)
				insert(`INSERT INTO events (note) VALUES ('multi ` + s.name + `'), ('multi 2'), ('multi 3')`)
				insert(fmt.Sprintf(target.manyRows, 50))
				last := layout.Decompose(order[len(order)-1])
				if last.Time.Before(s.at.Add(-layout.Unit)) && s.name == "forward 30s" {
					t.Errorf("after the clock stepped %s, the key is stamped %s, behind it: the counter did not follow the clock", s.name, last.Time)
				}
			}
			seen := map[int64]bool{}
			for i, id := range order {
				if seen[id] {
					t.Fatalf("key %d drawn twice", id)
				}
				seen[id] = true
				if i > 0 && id <= order[i-1] {
					t.Fatalf("key %d drawn after %d: the counter moved back", id, order[i-1])
				}
				if p := layout.Decompose(id); p.Worker != reserved {
					t.Fatalf("key %d has worker %d, want the reserved %d", id, p.Worker, reserved)
				}
			}
			for _, id := range []int64{order[0], order[len(order)/2], order[len(order)-1]} {
				origins, err := idsql.Lookup(ctx, raw, cfg, id)
				if err != nil || len(origins) != 1 || origins[0].Table != "events" || origins[0].Instance() != "database" {
					t.Fatalf("Lookup(%d) = %+v, %v; want table events, instance database", id, origins, err)
				}
			}

			// The wrapper's keys come from a process's worker ID, below
			// the reserved ones; the default leaves them alone.
			db, err := idsql.Open(target.driver, dsn, cfg, idsql.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for i := range 20 {
				res, err := db.ExecContext(ctx, `INSERT INTO events (note) VALUES (`+target.ph+`)`, fmt.Sprint("wrapper ", i))
				if err != nil {
					t.Fatal(err)
				}
				id, err := res.LastInsertId()
				if err != nil {
					t.Fatal(err)
				}
				if w := layout.Decompose(id).Worker; w >= reserved {
					t.Fatalf("the wrapper's key %d has worker %d, one kept for the database", id, w)
				}
			}
			var rows, distinct int
			if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT id) FROM events`).Scan(&rows, &distinct); err != nil {
				t.Fatal(err)
			}
			if rows != distinct || rows != len(order)+20 {
				t.Fatalf("%d rows, %d distinct keys; want %d", rows, distinct, len(order)+20)
			}
		})
	}
}

// defaultOf reads what fills the events table's key on target: the
// column default on PostgreSQL, the trigger on MariaDB.
func defaultOf(t *testing.T, db *sql.DB, target snowflakeDBTarget, into *string) {
	t.Helper()
	q := `SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attrdef d JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
		WHERE d.adrelid = 'events'::regclass AND a.attname = 'id'`
	if target.driver == "mysql" {
		q = `SELECT CONCAT(ACTION_STATEMENT, CREATED) FROM information_schema.TRIGGERS WHERE TRIGGER_SCHEMA = DATABASE() AND TRIGGER_NAME = 'events_id_idsql'`
	}
	if err := db.QueryRowContext(context.Background(), q).Scan(into); err != nil {
		t.Fatalf("the default of events.id: %v", err)
	}
	if !strings.Contains(*into, "idsql") {
		t.Fatalf("the default of events.id is not idsql's: %s", *into)
	}
}

// A worker ID the database holds is never a process's: a holder that
// hands it out anyway (a process configured without
// holder.database_workers) is refused at once with ErrReserved naming
// the table; the disposable mode's numbering passes over it; and the
// install refuses a worker ID a live process holds, naming the process.
func TestSnowflakeDBReservation(t *testing.T) {
	for _, target := range snowflakeDBTargets {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			raw, dsn := target.open(t)
			for _, table := range []string{"events", "audit"} {
				if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.create, table)); err != nil {
					t.Fatal(err)
				}
			}
			cfg := snowflakeDBConfig(target.holder)
			layout, err := cfg.SnowflakeLayout()
			if err != nil {
				t.Fatal(err)
			}
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("install: %v", err)
			}
			stores, err := idsql.StoresFor(raw, cfg.Holder)
			if err != nil {
				t.Fatal(err)
			}
			reg := stores.Workers
			reserved := layout.MaxWorker() - 1 // events's

			req := holder.Request{Namespace: "shop", Table: "events", WorkerBits: layout.WorkerBits,
				Instance: holder.Instance{ID: "twin", Host: "twin", PID: 1}}
			start := time.Now()
			_, err = registry.Recorded(holder.Fixed(reserved), reg, "local").Acquire(ctx, req)
			if !errors.Is(err, registry.ErrReserved) || !strings.Contains(err.Error(), "events") {
				t.Fatalf("a process leasing the reserved worker: %v; want ErrReserved naming events", err)
			}
			if waited := time.Since(start); waited > 3*reg.Settings().Heartbeat {
				t.Errorf("the refusal took %s: it waited for the reservation to go stale", waited)
			}

			// Recording a lease over it is refused too, whatever the holder.
			if _, err := reg.Begin(ctx, registry.Start{Namespace: "shop", WorkerID: reserved, Table: "events",
				Instance: holder.Instance{ID: "direct", Host: "h", PID: 2}, Kind: "custom"}); !errors.Is(err, registry.ErrReserved) {
				t.Fatalf("recording a lease of the reserved worker: %v; want ErrReserved", err)
			}

			// The reservation explains the database's keys for as long as
			// it lives, with no heartbeat: also far past its start.
			later := time.Now().Add(time.Hour)
			if rec, err := reg.Find(ctx, "shop", reserved, later); err != nil || rec.Instance != "database" || rec.Table != "events" {
				t.Fatalf("Find(worker %d, an hour on) = %+v, %v; want the reservation of events", reserved, rec, err)
			}

			// The disposable mode numbers past the greatest worker ID a
			// process used, not the database's.
			h, err := workertable.New(reg, workertable.Settings{Mode: workertable.Disposable})
			if err != nil {
				t.Fatal(err)
			}
			req.Reserved = cfg.Holder.DatabaseWorkers
			for want := range int64(2) {
				l, err := h.Acquire(ctx, req)
				if err != nil {
					t.Fatalf("disposable lease %d: %v", want, err)
				}
				if got := l.WorkerID(); got != want {
					t.Fatalf("disposable lease took worker %d, want %d", got, want)
				}
				if err := l.Release(ctx, time.Time{}); err != nil {
					t.Fatal(err)
				}
			}

			// A second table takes the next reserved worker ID, which a
			// live process holds: refused, naming it, until it ends.
			cfg.Tables["audit"] = keyset.TableConfig{Strategy: keyset.Snowflake}
			busy, err := reg.Begin(ctx, registry.Start{Namespace: "shop", WorkerID: reserved + 1, Table: "events",
				Instance: holder.Instance{ID: "web-7", Host: "web-7", PID: 4242}, Kind: "local"})
			if err != nil {
				t.Fatal(err)
			}
			err = idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true})
			if err == nil || !strings.Contains(err.Error(), "web-7") || !strings.Contains(err.Error(), "database_workers") {
				t.Fatalf("install over a live lease: %v; want a refusal naming web-7 and holder.database_workers", err)
			}
			// The refused install left no transaction open: a connection
			// of another pool takes the namespace lock at once.
			other, err := sql.Open(target.driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			otherReg := registry.New(other, reg.Settings())
			lockCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			if err := otherReg.InTx(lockCtx, func(tx *sql.Tx) error { return otherReg.LockNamespace(lockCtx, tx, "shop") }); err != nil {
				t.Fatalf("the namespace lock after a refused install: %v", err)
			}
			if err := reg.Release(ctx, busy.LeaseID, time.Time{}); err != nil {
				t.Fatal(err)
			}
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("install after the lease ended: %v", err)
			}
			if _, err := raw.ExecContext(ctx, `INSERT INTO audit (note) VALUES ('by the database')`); err != nil {
				t.Fatal(err)
			}
			var id int64
			if err := raw.QueryRowContext(ctx, `SELECT id FROM audit`).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if w := layout.Decompose(id).Worker; w != reserved+1 {
				t.Fatalf("audit's key %d has worker %d, want %d", id, w, reserved+1)
			}

			// Both reserved worker IDs serve tables: a third is refused.
			cfg.Tables["third"] = keyset.TableConfig{Strategy: keyset.Snowflake}
			if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.create, "third")); err != nil {
				t.Fatal(err)
			}
			err = idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true})
			if err == nil || !strings.Contains(err.Error(), "database_workers") {
				t.Fatalf("install of a third table with two database workers: %v; want a refusal naming holder.database_workers", err)
			}
		})
	}
}

// A snowflake table's default needs worker IDs kept for the database:
// without holder.database_workers the install is refused, naming it.
func TestSnowflakeDBDefaultNeedsDatabaseWorkers(t *testing.T) {
	cfg := snowflakeDBConfig("postgres")
	cfg.Holder.DatabaseWorkers = 0
	_, err := idsql.DBDefaultsSQL("postgres", cfg, 0)
	var fe *keyset.FieldError
	if !errors.As(err, &fe) || fe.Field != "holder.database_workers" || !strings.Contains(err.Error(), "events") {
		t.Fatalf("DBDefaultsSQL without database workers: %v; want a FieldError on holder.database_workers naming events", err)
	}
	cfg.Holder.DatabaseWorkers = 1
	for _, d := range []string{"postgres", "mysql"} {
		script, err := idsql.DBDefaultsSQL(d, cfg, 0)
		if err != nil {
			t.Fatalf("DBDefaultsSQL(%s): %v", d, err)
		}
		if !strings.Contains(script, "'database'") || !strings.Contains(script, "events") {
			t.Fatalf("DBDefaultsSQL(%s) reserves no worker for events:\n%s", d, script)
		}
	}
}

// A table that was a segment table with a database-side default, then
// configured as a snowflake table, gets the snowflake default on the next
// install: its sequence, bounded to a block before, no longer limits it.
func TestSnowflakeDBDefaultAfterSegment(t *testing.T) {
	for _, target := range snowflakeDBTargets {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			raw, _ := target.open(t)
			if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.create, "events")); err != nil {
				t.Fatal(err)
			}
			cfg := snowflakeDBConfig(target.holder)
			cfg.Tables["events"] = keyset.TableConfig{Strategy: keyset.Segment}
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 10}); err != nil {
				t.Fatalf("install as a segment table: %v", err)
			}
			insert := `INSERT INTO events (note) VALUES ('a')`
			if _, err := raw.ExecContext(ctx, insert); err != nil {
				t.Fatal(err)
			}
			cfg.Tables["events"] = keyset.TableConfig{Strategy: keyset.Snowflake}
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("install as a snowflake table: %v", err)
			}
			layout, err := cfg.SnowflakeLayout()
			if err != nil {
				t.Fatal(err)
			}
			for range 20 { // past the segment block of 10
				if _, err := raw.ExecContext(ctx, insert); err != nil {
					t.Fatal(err)
				}
			}
			var id int64
			if err := raw.QueryRowContext(ctx, `SELECT MAX(id) FROM events`).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if w := layout.Decompose(id).Worker; w != layout.MaxWorker()-1 {
				t.Fatalf("key %d has worker %d, want the reserved %d", id, w, layout.MaxWorker()-1)
			}
		})
	}
}

// holder.database_workers reaches the holders: with 2 of a layout's 4
// worker IDs kept for the database, a process's first two snowflake tables
// get the two below them and its third none, even with no reservation
// recorded yet to keep a holder off them.
func TestDatabaseWorkersKeptFromProcesses(t *testing.T) {
	ctx := context.Background()
	_, dsn := pgtest.Open(t)
	cfg, err := keyset.Parse("idsql.yaml", []byte(`
namespace: shop
layout: {time_bits: 41, worker_bits: 2, sequence_bits: 20, unit: 1ms, epoch: 2024-01-01T00:00:00Z}
holder: {kind: postgres, mode: lease, database_workers: 2}
tables:
  a: {strategy: snowflake}
  b: {strategy: snowflake}
  c: {strategy: snowflake}
`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := idsql.Migrate(ctx, db.DB.DB, cfg); err != nil {
		t.Fatal(err)
	}
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"a", "b"} {
		id, err := db.Keys().NextID(ctx, table)
		if err != nil {
			t.Fatalf("NextID(%s): %v", table, err)
		}
		if w := layout.Decompose(id).Worker; w >= 2 {
			t.Fatalf("table %s got worker %d, kept for the database", table, w)
		}
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if id, err := db.Keys().NextID(cctx, "c"); err == nil {
		t.Fatalf("table c got key %d (worker %d) with both unreserved worker IDs leased", id, layout.Decompose(id).Worker)
	}
}

// The default composes keys for a layout with the worker in the lowest
// bits (sony) as the layout decodes them, and refuses a key past the
// table's max_id rather than issue it.
func TestSnowflakeDBDefaultLayouts(t *testing.T) {
	for _, target := range snowflakeDBTargets {
		t.Run(target.name, func(t *testing.T) {
			ctx := context.Background()
			raw, _ := target.open(t)
			for _, table := range []string{"events", "capped"} {
				if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.create, table)); err != nil {
					t.Fatal(err)
				}
			}
			cfg := snowflakeDBConfig(target.holder)
			cfg.Layout = keyset.LayoutConfig{Preset: "sony"}
			layout, err := cfg.SnowflakeLayout()
			if err != nil {
				t.Fatal(err)
			}
			// max_id: the keys of the next minute fit, and no later ones.
			limit, err := layout.Compose(snowflake.Parts{Time: time.Now().Add(time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Tables["capped"] = keyset.TableConfig{Strategy: keyset.Snowflake, MaxID: limit}
			if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true}); err != nil {
				t.Fatalf("MigrateWith: %v", err)
			}
			if _, err := raw.ExecContext(ctx, fmt.Sprintf(target.manyRows, 300)); err != nil {
				t.Fatal(err)
			}
			for range 5 {
				if _, err := raw.ExecContext(ctx, `INSERT INTO events (note) VALUES ('one')`); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := raw.QueryContext(ctx, `SELECT id FROM events`)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			seen := map[int64]bool{}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					t.Fatal(err)
				}
				p := layout.Decompose(id)
				if seen[id] || p.Worker < layout.MaxWorker()-1 || p.Time.After(time.Now().Add(time.Minute)) || p.Time.Before(time.Now().Add(-time.Minute)) {
					t.Fatalf("key %d (%+v): twice, not a reserved worker, or not stamped near now", id, p)
				}
				seen[id] = true
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(seen) != 305 {
				t.Fatalf("%d keys, want 305", len(seen))
			}
			origins, err := idsql.Lookup(ctx, raw, cfg, func() int64 {
				for id := range seen {
					return id
				}
				return 0
			}())
			if err != nil || len(origins) != 1 || origins[0].Table != "events" {
				t.Fatalf("Lookup: %+v, %v", origins, err)
			}

			if _, err := raw.ExecContext(ctx, `INSERT INTO capped (note) VALUES ('now')`); err != nil {
				t.Fatalf("a key below max_id: %v", err)
			}
			conn, err := raw.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if _, err := conn.ExecContext(ctx, target.setClock(time.Now().Add(time.Hour).UnixMicro())); err != nil {
				t.Fatal(err)
			}
			if _, err := conn.ExecContext(ctx, `INSERT INTO capped (note) VALUES ('an hour on')`); err == nil {
				var id int64
				conn.QueryRowContext(ctx, `SELECT MAX(id) FROM capped`).Scan(&id)
				t.Fatalf("a key an hour on, past max_id %d, was issued: %d", limit, id)
			}
		})
	}
}
