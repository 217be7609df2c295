package pgxid_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestPgBouncerSplitStatement: pgx's default exec mode prepares a named
// statement in one round trip and runs it in another, which PgBouncer in
// transaction mode may send to another server connection. Every error
// pgxid returns then says what happened and the setting that mends it:
// those of the INSERTs it sent (Exec, Query, QueryRow, SendBatch), not
// only those of its catalog reads.
func TestPgBouncerSplitStatement(t *testing.T) {
	direct, bouncer := pgtest.Bouncer(t)
	ctx := context.Background()
	if _, err := direct.ExecContext(ctx, "CREATE TABLE orders (id bigint PRIMARY KEY, user_id int NOT NULL, note text)"); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "split", Tables: map[string]keyset.TableConfig{"orders": {Strategy: keyset.Snowflake}}}
	if err := idsql.Migrate(ctx, direct, cfg); err != nil {
		t.Fatal(err)
	}
	pool, err := pgxpool.New(ctx, bouncer)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	db, err := pgxid.New(pool, cfg, pgxid.Options{KeysOptions: keyset.KeysOptions{Holder: workers(cfg)}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The first use reads the catalog (already mended before pgxid's own
	// statements were); the INSERTs after it split at the server.
	if _, err := db.Exec(ctx, "INSERT INTO orders (user_id) VALUES (0)"); err != nil && !strings.Contains(err.Error(), "default_query_exec_mode=exec") {
		t.Fatalf("first INSERT: %v", err)
	}
	const hint = "as PgBouncer in transaction mode does: with lib/pq add binary_parameters=yes to the DSN, with pgx set default_query_exec_mode=exec"
	var (
		wg                      sync.WaitGroup
		mu                      sync.Mutex
		split, unmended         int
		firstUnmended, anySplit error
		stop                    atomic.Bool
	)
	insert := []func(g, i int) error{
		func(g, i int) error {
			_, err := db.Exec(ctx, "INSERT INTO orders (user_id) VALUES ($1)", g*10000+i)
			return err
		},
		func(g, i int) error {
			var id int64
			return db.QueryRow(ctx, "INSERT INTO orders (user_id) VALUES ($1) RETURNING id", g*10000+i).Scan(&id)
		},
		func(g, i int) error {
			rows, err := db.Query(ctx, "INSERT INTO orders (user_id, note) VALUES ($1, 'q') RETURNING id", g*10000+i)
			if err != nil {
				return err
			}
			rows.Close()
			return rows.Err()
		},
		func(g, i int) error {
			b := &pgx.Batch{}
			b.Queue("INSERT INTO orders (user_id, note) VALUES ($1, 'b')", g*10000+i)
			b.Queue("INSERT INTO orders (user_id, note) VALUES ($1, 'b') RETURNING id", g*10000+i)
			br := db.SendBatch(ctx, b)
			_, err := br.Exec()
			var id int64
			if err == nil {
				err = br.QueryRow().Scan(&id)
			}
			if cerr := br.Close(); err == nil {
				err = cerr
			}
			return err
		},
	}
	for g := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 2000 && !stop.Load(); i++ {
				err := insert[(g+i)%len(insert)](g, i)
				if err == nil {
					continue
				}
				mu.Lock()
				if strings.Contains(err.Error(), hint) {
					split++
					anySplit = err
				} else {
					unmended++
					if firstUnmended == nil {
						firstUnmended = err
					}
				}
				if split+unmended >= 30 {
					stop.Store(true)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if split+unmended == 0 {
		t.Fatal("24,000 INSERT statements over pgx's default exec mode through PgBouncer in transaction mode never split a statement: the test shows nothing")
	}
	if unmended > 0 {
		t.Errorf("%d of %d errors do not say what happened and how to mend it; the first: %v", unmended, split+unmended, firstUnmended)
	}
	t.Logf("%d split statements, each error mended; one: %v", split, anySplit)
}
