package segment_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/pgtest"
)

// serverSyncCommit returns synchronous_commit as a fresh session of db sees
// it: the server's (or role's, or DSN's) default.
func serverSyncCommit(t *testing.T, db *sql.DB) string {
	t.Helper()
	var v string
	if err := db.QueryRow(`SHOW synchronous_commit`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPostgresAllocationCommitsSynchronouslyWhenServerDefaultIsOff: on a
// server whose synchronous_commit is off, every allocation transaction
// still commits with synchronous_commit = on, in both forms of the store
// (PostgreSQL's one statement and the UPDATE+INSERT transaction), and the
// session keeps its own setting afterwards.
//
// A deferred constraint trigger on idsql_alloc and idsql_alloc_log records
// current_setting('synchronous_commit') at commit time, inside the
// allocating transaction: what it records is what the commit used.
func TestPostgresAllocationCommitsSynchronouslyWhenServerDefaultIsOff(t *testing.T) {
	t.Parallel()
	txSQL := segment.PostgresSQL()
	txSQL.Allocate = nil
	for _, tc := range []struct {
		name string
		d    segment.StoreSQL
	}{{"one statement", segment.PostgresSQL()}, {"transaction", txSQL}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, db, _ := pg.store(t)
			db.SetMaxOpenConns(1) // one session: a leaked setting would show
			if v := serverSyncCommit(t, db); v != "off" {
				t.Fatalf("the test server runs with synchronous_commit = %q; this test needs off (scripts/servers sets it) or it proves nothing", v)
			}
			for _, q := range []string{
				`CREATE TABLE commit_settings (tbl TEXT NOT NULL, setting TEXT NOT NULL)`,
				`CREATE FUNCTION record_commit_setting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO commit_settings VALUES (TG_TABLE_NAME, current_setting('synchronous_commit'));
	RETURN NULL;
END $$`,
				`CREATE CONSTRAINT TRIGGER alloc_commit AFTER UPDATE ON idsql_alloc
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_commit_setting()`,
				`CREATE CONSTRAINT TRIGGER log_commit AFTER INSERT ON idsql_alloc_log
	DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION record_commit_setting()`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatal(err)
				}
			}
			s := segment.NewSQLStore(db, tc.d)
			ctx := context.Background()
			createKey(t, s, segment.KeySpec{Key: "k", Step: 10})

			// Control: a transaction that is not an allocation commits with
			// the server's default, and the trigger sees it.
			if _, err := db.Exec(`UPDATE idsql_alloc SET description = 'control' WHERE biz_tag = 'k'`); err != nil {
				t.Fatal(err)
			}
			seen := func() []string {
				t.Helper()
				rows, err := db.Query(`SELECT tbl || ': ' || setting FROM commit_settings`)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				var out []string
				for rows.Next() {
					var v string
					if err := rows.Scan(&v); err != nil {
						t.Fatal(err)
					}
					out = append(out, v)
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec(`DELETE FROM commit_settings`); err != nil {
					t.Fatal(err)
				}
				return out
			}
			if got := strings.Join(seen(), ", "); got != "idsql_alloc: off" {
				t.Fatalf("control transaction committed with %q, want idsql_alloc: off", got)
			}

			for i := range 3 {
				if _, err := s.Allocate(ctx, segment.Request{Key: "k", Instance: "test"}); err != nil {
					t.Fatal(err)
				}
				if got, want := strings.Join(seen(), ", "), "idsql_alloc: on, idsql_alloc_log: on"; got != want {
					t.Fatalf("allocation %d committed with %q, want %q", i+1, got, want)
				}
				if v := serverSyncCommit(t, db); v != "off" {
					t.Fatalf("after allocation %d the session's synchronous_commit is %q: the setting leaked out of the transaction", i+1, v)
				}
			}
		})
	}
}

// TestPostgresAllocationSurvivesImmediateShutdown: a range handed out just
// before PostgreSQL dies (pg_ctl stop -m immediate, on a server with
// synchronous_commit = off) is still allocated after crash recovery: the
// next allocation does not overlap it. Three crashes, both forms of the
// store.
//
// Without the durable commit the range is lost in the first round: its
// commit record still sits in shared memory when the server dies. That
// happened in every run with the default wal_writer_delay (200ms) too; the
// WAL writer is slowed to 10s so that it cannot flush the record by luck.
func TestPostgresAllocationSurvivesImmediateShutdown(t *testing.T) {
	txSQL := segment.PostgresSQL()
	txSQL.Allocate = nil
	for _, tc := range []struct {
		name string
		d    segment.StoreSQL
	}{{"one statement", segment.PostgresSQL()}, {"transaction", txSQL}} {
		t.Run(tc.name, func(t *testing.T) { testSurvivesImmediateShutdown(t, tc.d) })
	}
}

func testSurvivesImmediateShutdown(t *testing.T, d segment.StoreSQL) {
	srv := pgtest.StartServer(t)
	ctx := context.Background()
	open := func() (*segment.SQLStore, *sql.DB) {
		t.Helper()
		db, err := sql.Open("postgres", srv.DSN())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return segment.NewSQLStore(db, d), db
	}
	s, db := open()
	for _, q := range []string{
		`ALTER SYSTEM SET wal_writer_delay = '10s'`,
		`SELECT pg_reload_conf()`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if v := serverSyncCommit(t, db); v != "off" {
		t.Fatalf("pgtest's server runs with synchronous_commit = %q; this test needs off or it proves nothing", v)
	}
	var dataDir string
	if err := db.QueryRow(`SHOW data_directory`).Scan(&dataDir); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	createKey(t, s, segment.KeySpec{Key: "k", Step: 100})
	// The set-up is not what is under test: make it durable.
	if _, err := db.Exec(`CHECKPOINT`); err != nil {
		t.Fatal(err)
	}

	var handed []segment.Range
	for round := range 3 {
		r, err := s.Allocate(ctx, segment.Request{Key: "k", Instance: "before crash " + strconv.Itoa(round)})
		if err != nil {
			t.Fatal(err)
		}
		handed = append(handed, r)

		immediateShutdown(t, dataDir)
		srv.Stop() // reaps the dead postmaster
		srv.Start()
		s, db = open()

		ranges, err := s.Ranges(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		if len(ranges) != len(handed) || ranges[len(ranges)-1].First != r.First {
			t.Fatalf("round %d: after the crash the log holds %+v; the range handed out before it, %+v, was lost", round, ranges, r)
		}
	}
	next, err := s.Allocate(ctx, segment.Request{Key: "k", Instance: "after crashes"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range handed {
		if next.First <= r.Last && r.First <= next.Last {
			t.Fatalf("range %d-%d handed out again (it was handed out as %d-%d before a crash)", next.First, next.Last, r.First, r.Last)
		}
	}
}

// immediateShutdown does what pg_ctl stop -m immediate does: SIGQUIT to
// the postmaster, which ends every server process without writing anything
// more (crash recovery runs at the next start).
func immediateShutdown(t *testing.T, dataDir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Signal(syscall.SIGQUIT); err != nil {
		t.Fatalf("SIGQUIT to the postmaster (pid %d): %v", pid, err)
	}
}
