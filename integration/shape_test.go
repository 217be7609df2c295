package integration

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestShapeCrash runs three processes inserting through the wrapper into
// a snowflake table with shape {spread: reverse} and a segment table with
// shape {spread: hashed, bits: 6}, on PostgreSQL with the worker table as
// holder; one is killed with SIGKILL and restarted on its identity. It
// asserts the fault happened (the killed process is gone: its pid no
// longer exists), that no key repeats in the tables, that every
// acknowledged key is stored, that every key is one of its table's shape
// (undone, a snowflake key of the run's time), and that the untouched
// processes kept issuing.
func TestShapeCrash(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	for _, table := range []string{sfTable, segTable} {
		// No unique constraint: a duplicate is stored, to be counted.
		if _, err := raw.ExecContext(ctx, `CREATE TABLE `+table+` (id bigint NOT NULL, proc text NOT NULL, pid int NOT NULL)`); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	cfgText := fmt.Sprintf(`namespace: shapechaos
layout: leaf
holder: {kind: postgres, session_timeout: %s, heartbeat: %s, cache_dir: %q}
tables:
  %s: {strategy: snowflake, shape: {spread: reverse}}
  %s: {strategy: segment, step: 50, shape: {spread: hashed, bits: 6}}
`, chaosTimeout, chaosHeartbeat, filepath.Join(dir, "cache"), sfTable, segTable)
	cfg, err := keyset.Parse("shape.yaml", []byte(cfgText), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	bin := buildChaosProc(t, dir)
	var procs []*chaosProc
	start := func(name, identity string) *chaosProc {
		t.Helper()
		path := filepath.Join(dir, name+".yaml")
		text := fmt.Sprintf(`namespace: shapechaos
layout: leaf
holder: {kind: postgres, instance: %s, session_timeout: %s, heartbeat: %s, cache_dir: %q}
tables:
  %s: {strategy: snowflake, shape: {spread: reverse}}
  %s: {strategy: segment, step: 50, shape: {spread: hashed, bits: 6}}
`, identity, chaosTimeout, chaosHeartbeat, filepath.Join(dir, "cache"), sfTable, segTable)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		p, err := startProc(bin, dir, dsn, path, name, identity, time.Time{}, []string{"-workers", "2", "-pause", "2ms"})
		if err != nil {
			t.Fatal(err)
		}
		procs = append(procs, p)
		return p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.kill()
		}
	})
	began := time.Now()
	p1, p2, p3 := start("p1", "shape-1"), start("p2", "shape-2"), start("p3", "shape-3")
	for _, p := range []*chaosProc{p1, p2, p3} {
		if !p.waitUntil(time.Minute, func() bool { sf, seg := p.counts(); return sf > 50 && seg > 50 }) {
			t.Fatalf("%s issued no keys: %s", p.name, p.outcome())
		}
	}

	// The fault: SIGKILL, and the process is gone.
	pid := p2.cmd.Process.Pid
	if !p2.kill() {
		t.Fatalf("p2 was not running when killed: %s", p2.outcome())
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("p2 (pid %d) still exists after SIGKILL: kill(pid, 0) = %v", pid, err)
	}
	before1, _ := p1.counts()
	before3, _ := p3.counts()
	p2b := start("p2.2", "shape-2")
	if !p2b.waitUntil(time.Minute, func() bool { sf, seg := p2b.counts(); return sf > 50 && seg > 50 }) {
		t.Fatalf("p2.2 issued no keys after the restart: %s", p2b.outcome())
	}
	for _, c := range []struct {
		p    *chaosProc
		have int
	}{{p1, before1}, {p3, before3}} {
		if !c.p.waitSnowflake(c.have+50, time.Minute) {
			t.Errorf("%s stopped issuing after p2 was killed: %s", c.p.name, c.p.outcome())
		}
	}
	for _, p := range []*chaosProc{p1, p2b, p3} {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not exit on SIGTERM", p.name)
		}
	}
	ended := time.Now()

	// Every key stored once; every acknowledged key stored; every key of
	// its table's shape.
	acked := map[string]map[int64]string{sfTable: {}, segTable: {}}
	for _, p := range procs {
		_ = p.scan()
		for table, keys := range map[string][]int64{sfTable: p.sf, segTable: p.seg} {
			for _, k := range keys {
				if other, dup := acked[table][k]; dup {
					t.Errorf("%s: key %d acknowledged to %s and %s", table, k, other, p.name)
				}
				acked[table][k] = p.name
			}
		}
	}
	for _, table := range []string{sfTable, segTable} {
		codec, err := cfg.Codec(table)
		if err != nil {
			t.Fatal(err)
		}
		stored := storedKeys(t, raw, table)
		dups := 0
		for k, n := range stored {
			if n > 1 {
				dups++
				t.Errorf("%s: key %d stored %d times", table, k, n)
			}
			made, err := codec.Unshape(k)
			if err != nil {
				t.Fatalf("%s: key %d is not of its shape: %v", table, k, err)
			}
			if table == sfTable {
				p := chaosLayout.Decompose(made)
				if p.Time.Before(began.Add(-time.Second)) || p.Time.After(ended.Add(time.Second)) {
					t.Fatalf("%s: key %d (made %d) has time %s outside the run", table, k, made, p.Time)
				}
			}
		}
		for k, name := range acked[table] {
			if stored[k] == 0 {
				t.Errorf("%s: key %d acknowledged to %s is not stored", table, k, name)
			}
		}
		t.Logf("%s: %d keys stored, %d acknowledged, %d duplicates", table, len(stored), len(acked[table]), dups)
	}
	for _, p := range procs {
		if lines := p.errorLines(3); len(lines) > 0 {
			t.Logf("%s errors: %q", p.name, lines)
		}
	}
}

// storedKeys counts the rows of each key of table.
func storedKeys(t *testing.T, db *sql.DB, table string) map[int64]int {
	t.Helper()
	rows, err := db.Query("SELECT id FROM " + table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]int{}
	for rows.Next() {
		var k int64
		if err := rows.Scan(&k); err != nil {
			t.Fatal(err)
		}
		out[k]++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
