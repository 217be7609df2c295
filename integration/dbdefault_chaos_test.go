package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestDBDefaultChaos: psql writes into a table with the database-side
// default (multi-row VALUES, INSERT ... SELECT, COPY) while chaos helper
// processes insert through the wrapper; one helper is killed with SIGKILL
// and replaced, and the database crashes (immediate shutdown) and
// restarts under them all, recovering its sequences from the WAL. No key is
// stored twice, every key the helpers acknowledged is stored, and every
// stored key lies in a range of the table's segment key (Lookup traces
// psql's to the instance "database").
func TestDBDefaultChaos(t *testing.T) {
	srv := pgtest.StartServer(t)
	dsn := srv.DSN()
	raw, err := sql.Open("postgres", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE `+segTable+` (id bigint NOT NULL, proc text NOT NULL, pid int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "idsql.yaml")
	if err := os.WriteFile(cfgPath, []byte("namespace: chaos\ntables:\n  "+segTable+": {strategy: segment, step: 100}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := idsql.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 100_000}); err != nil {
		t.Fatal(err)
	}
	bin := buildChaosProc(t, dir)
	var procs []*chaosProc
	start := func(name string) {
		t.Helper()
		// The test server commits lazily (synchronous_commit = off): the
		// helpers' sessions ask for durable commits, so that the keys they
		// acknowledged survive the crash.
		p, err := startProc(bin, dir, dsn+"&synchronous_commit=on", cfgPath, name, "", time.Time{}, []string{"-workers", "2", "-pause", "10ms"})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
	}
	start("c1")
	start("c2")
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
		}
	})

	psql := psqlClient(t, dsn)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var ok, failed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			// Errors are expected while the database restarts.
			if _, err := psql(t, fmt.Sprintf(`INSERT INTO %[1]s (proc, pid) VALUES ('psql', %[2]d), ('psql', %[2]d);
INSERT INTO %[1]s (proc, pid) SELECT 'psql', g FROM generate_series(1, 3) g;
COPY %[1]s (proc, pid) FROM STDIN;
psql	%[2]d
\.
`, segTable, i)); err != nil {
				failed++
			} else {
				ok++
			}
		}
	}()

	time.Sleep(time.Second)
	if !procs[0].kill() {
		t.Fatalf("c1 had exited before it was killed:\n%s", procs[0].log())
	}
	start("c3")
	time.Sleep(time.Second)
	srv.Crash()
	srv.Start()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()
	for _, p := range procs {
		p.kill()
	}
	if ok == 0 {
		t.Fatalf("no psql script succeeded (%d failed)", failed)
	}
	t.Logf("psql scripts: %d succeeded, %d failed (the restart)", ok, failed)

	var rows, dups, untraced, byDB int
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(*) - COUNT(DISTINCT id) FROM `+segTable).Scan(&rows, &dups); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Fatalf("%d of %d keys stored twice", dups, rows)
	}
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+segTable+` o WHERE NOT EXISTS (
		SELECT 1 FROM idsql_alloc_log l WHERE l.biz_tag = $1 AND o.id BETWEEN l.first_id AND l.last_id)`, segTable).Scan(&untraced); err != nil {
		t.Fatal(err)
	}
	if untraced != 0 {
		t.Fatalf("%d of %d keys in no range of segment key %s", untraced, rows, segTable)
	}
	stored := map[int64]bool{}
	all, err := raw.QueryContext(ctx, `SELECT id, proc FROM `+segTable)
	if err != nil {
		t.Fatal(err)
	}
	defer all.Close()
	for all.Next() {
		var id int64
		var proc string
		if err := all.Scan(&id, &proc); err != nil {
			t.Fatal(err)
		}
		stored[id] = true
		if proc != "psql" {
			continue
		}
		byDB++
		if origins, err := idsql.Lookup(ctx, raw, cfg, id); err != nil || len(origins) != 1 || origins[0].Instance() != "database" {
			t.Fatalf("Lookup(%d), inserted by psql: %+v, %v", id, origins, err)
		}
	}
	if err := all.Err(); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if err := p.scan(); err != nil {
			t.Fatal(err)
		}
		_, seg := p.counts()
		if seg == 0 {
			t.Errorf("%s acknowledged no key:\n%s", p.name, p.logTail())
		}
		for _, id := range p.seg {
			if !stored[id] {
				t.Errorf("%s acknowledged key %d, which is not stored", p.name, id)
			}
		}
	}
	t.Logf("%d keys, %d from psql, none twice", rows, byDB)
}
