package segment_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

func createKey(t testing.TB, s *segment.SQLStore, spec segment.KeySpec) {
	t.Helper()
	if err := s.CreateKey(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
}

func TestPostgresStore(t *testing.T) { testStore(t, pg) }
func TestMySQLStore(t *testing.T)    { testStore(t, my) }

// testStore runs testSQLStore on both forms of c's dialect: its one
// statement and the UPDATE and INSERT in a transaction.
func testStore(t *testing.T, c dbCase) {
	t.Parallel()
	for _, f := range c.forms() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			db, _ := c.open(t)
			testSQLStore(t, c.migrated(t, db, f.d, segment.StoreSettings{}), db)
		})
	}
}

func testSQLStore(t *testing.T, s *segment.SQLStore, db *sql.DB) {
	ctx := context.Background()
	createKey(t, s, segment.KeySpec{Key: "a", Step: 10})
	createKey(t, s, segment.KeySpec{Key: "b'; DROP TABLE idsql_alloc; --", Step: 5, Description: "hostile name"})
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "a", Step: 10}); !errors.Is(err, segment.ErrKeyExists) {
		t.Fatalf("duplicate key: %v", err)
	}
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "z", Step: 0}); err == nil {
		t.Fatal("step 0 accepted")
	}
	r, err := s.Allocate(ctx, segment.Request{Key: "a", Instance: "test"})
	if err != nil || r.First != 1 || r.Last != 10 || r.StoredStep != 10 {
		t.Fatalf("Allocate: %+v, %v", r, err)
	}
	r, err = s.Allocate(ctx, segment.Request{Key: "a", Step: 100, Instance: "test"})
	if err != nil || r.First != 11 || r.Last != 110 {
		t.Fatalf("Allocate step 100: %+v, %v", r, err)
	}
	big := int64(3_000_000_000) // does not fit an int4 parameter
	r, err = s.Allocate(ctx, segment.Request{Key: "a", Step: big, Instance: "test"})
	if err != nil || r.First != 111 || r.Last != 110+big {
		t.Fatalf("Allocate step %d: %+v, %v", big, r, err)
	}
	hostile := "b'; DROP TABLE idsql_alloc; --"
	r, err = s.Allocate(ctx, segment.Request{Key: hostile, Instance: "test"})
	if err != nil || r.First != 1 || r.Last != 5 {
		t.Fatalf("Allocate hostile key: %+v, %v", r, err)
	}
	_, err = s.Allocate(ctx, segment.Request{Key: "missing"})
	var ke *segment.KeyError
	if !errors.Is(err, segment.ErrUnknownKey) || !errors.As(err, &ke) || ke.Key != "missing" {
		t.Fatalf("unknown key: %v", err)
	}
	keys, err := s.Keys(ctx)
	if err != nil || !slices.Equal(keys, []string{"a", hostile}) {
		t.Fatalf("Keys %q, %v", keys, err)
	}

	// Reverse lookup: 3 was handed to both keys, 50 only to a, 2^40 to none.
	res, err := s.Lookup(ctx, 3)
	if err != nil || !res.Ambiguous() || !slices.Equal(res.Keys(), []string{"a", hostile}) {
		t.Fatalf("Lookup(3) = %+v, %v", res, err)
	}
	res, err = s.Lookup(ctx, 5_000_000)
	if err != nil || len(res.Ranges) != 1 || res.Ranges[0].Last != 110+big {
		t.Fatalf("Lookup(5e6) = %+v, %v", res, err)
	}
	res, err = s.Lookup(ctx, 50)
	if err != nil || res.Ambiguous() || len(res.Ranges) != 1 || res.Ranges[0].First != 11 || res.Ranges[0].Instance != "test" {
		t.Fatalf("Lookup(50) = %+v, %v", res, err)
	}
	if res, err = s.Lookup(ctx, 1<<40); err != nil || len(res.Ranges) != 0 {
		t.Fatalf("Lookup(2^40) = %+v, %v", res, err)
	}

	// Exhaustion is an error, never a wrap-around.
	createKey(t, s, segment.KeySpec{Key: "full", Step: 10, Start: segment.MaxID - 14})
	if _, err := s.Allocate(ctx, segment.Request{Key: "full"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allocate(ctx, segment.Request{Key: "full"}); !errors.Is(err, segment.ErrExhausted) {
		t.Fatalf("exhausted: %v", err)
	}

	if err := s.DeleteKey(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteKey(ctx, "a"); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("second delete: %v", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM idsql_alloc_log`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("log rows %d, %v", n, err)
	}
}

// TestPostgresAdoptBigserial, TestMySQLAdoptAutoIncrement: a table whose
// keys came from the database (BIGSERIAL, AUTO_INCREMENT) adopts idsql; the
// first generated ID is above its MAX(id). The table name needs quoting.
func TestPostgresAdoptBigserial(t *testing.T)  { testAdopt(t, pg) }
func TestMySQLAdoptAutoIncrement(t *testing.T) { testAdopt(t, my) }

func testAdopt(t *testing.T, c dbCase) {
	t.Parallel()
	s, db, _ := c.store(t)
	ctx := context.Background()
	for _, q := range c.adopt {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	createKey(t, s, segment.KeySpec{Key: "lines", Step: 100, AdoptTable: c.adoptName})
	createKey(t, s, segment.KeySpec{Key: "empty", Step: 100, Start: 500, AdoptTable: "empty_t", AdoptColumn: "pk"})
	if err := s.CreateKey(ctx, segment.KeySpec{Key: "bad", Step: 1, AdoptTable: "no_such_table"}); err == nil {
		t.Fatal("adopting a missing table succeeded")
	}
	g := newGen(t, s, segment.Settings{})
	if id, err := g.NextID(ctx, "lines"); err != nil || id != 1235 {
		t.Fatalf("first adopted ID %d, %v; want 1235", id, err)
	}
	if id, err := g.NextID(ctx, "empty"); err != nil || id != 500 {
		t.Fatalf("first ID of empty table %d, %v; want 500", id, err)
	}
	if _, err := g.NextID(ctx, "bad"); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("failed adoption left a key: %v", err)
	}
}

// TestPostgresNeverBothSegmentsNotReady: Leaf's users saw "both segments
// not ready" under load (Leaf issues #35, #143, #190). With the database up
// and a step of 100, 8 goroutines taking IDs as fast as they can never see
// an error: when both segments are empty they wait for the load in flight.
func TestPostgresNeverBothSegmentsNotReady(t *testing.T) { testNeverBothSegmentsNotReady(t, pg) }
func TestMySQLNeverBothSegmentsNotReady(t *testing.T)    { testNeverBothSegmentsNotReady(t, my) }

func testNeverBothSegmentsNotReady(t *testing.T, c dbCase) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		maxStep int64
		perG    int
	}{
		{"fixed step 100", 100, 2500}, // 200 ranges, callers outrun every load
		{"adaptive from 100", 0, 25000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _, _ := c.store(t)
			createKey(t, s, segment.KeySpec{Key: "hot", Step: 100})
			g := newGen(t, s, segment.Settings{MaxStep: tc.maxStep, WaitTimeout: 30 * time.Second})
			k := mustKey(t, g, "hot")
			ids := takeConcurrently(t, k, 8, tc.perG)
			checkUnique(t, ids)
			st := k.Stats()
			t.Logf("%d IDs, %d loads, %d waits, %d load errors, step now %d", len(ids), st.Loads, st.Waits, st.LoadErrors, st.Step)
			if st.LoadErrors != 0 || st.Timeouts != 0 {
				t.Fatalf("errors with the database up: %+v", st)
			}
		})
	}
}

func checkUnique(t testing.TB, ids []int64) {
	t.Helper()
	s := slices.Clone(ids)
	slices.Sort(s)
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1] {
			t.Fatalf("duplicate ID %d", s[i])
		}
	}
	if len(s) > 0 && s[0] <= 0 {
		t.Fatalf("non-positive ID %d", s[0])
	}
}

// checkLog verifies that the logged ranges of key are disjoint and cover
// every issued ID.
func checkLog(t testing.TB, s *segment.SQLStore, key string, ids []int64) []segment.Range {
	t.Helper()
	ranges, err := s.Ranges(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(ranges); i++ {
		if ranges[i].First <= ranges[i-1].Last {
			t.Fatalf("logged ranges overlap: %+v and %+v", ranges[i-1], ranges[i])
		}
	}
	for _, id := range ids {
		i, _ := slices.BinarySearchFunc(ranges, id, func(r segment.Range, id int64) int {
			switch {
			case r.Last < id:
				return -1
			case r.First > id:
				return 1
			}
			return 0
		})
		if i == len(ranges) || !ranges[i].Contains(id) {
			t.Fatalf("ID %d is in no logged range", id)
		}
	}
	return ranges
}

const (
	helperEnv    = "IDSQL_SEGMENT_HELPER"
	helperDB     = "IDSQL_SEGMENT_HELPER_DB" // dbCase.name: driver and dialect
	helperDSN    = "IDSQL_SEGMENT_HELPER_DSN"
	helperOut    = "IDSQL_SEGMENT_HELPER_OUT"
	helperCount  = "IDSQL_SEGMENT_HELPER_COUNT"
	helperWorker = "IDSQL_SEGMENT_HELPER_WORKERS"
)

// TestMain runs the helper process of TestPostgresFourProcesses (and
// TestMySQLFourProcesses) when the
// test binary is started again with helperEnv set, and the tests otherwise.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		if err := helperProcess(); err != nil {
			fmt.Fprintln(os.Stderr, "segment helper:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// helperProcess is one of TestPostgresFourProcesses' OS processes: it takes
// its share of IDs of the shared key with several goroutines and writes them
// to a file for the parent to check.
func helperProcess() error {
	count, _ := strconv.Atoi(os.Getenv(helperCount))
	workers, _ := strconv.Atoi(os.Getenv(helperWorker))
	name := os.Getenv(helperDB)
	db, err := sql.Open(name, os.Getenv(helperDSN))
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	g, err := segment.New(ctx, segment.NewSQLStore(db, storeSQLNamed(name)), segment.Settings{WaitTimeout: 30 * time.Second})
	if err != nil {
		return err
	}
	defer g.Close()
	k, err := g.Key(ctx, "shared")
	if err != nil {
		return err
	}
	per := make([][]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range count / workers {
				id, err := k.Next(ctx)
				if err != nil {
					errs[w] = err
					return
				}
				per[w] = append(per[w], id)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	buf := make([]byte, 0, 8*count)
	for _, ids := range per {
		for _, id := range ids {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(id))
		}
	}
	return os.WriteFile(os.Getenv(helperOut), buf, 0o644)
}

// TestPostgresFourProcesses, TestMySQLFourProcesses: 4 OS processes x 4
// goroutines take 2 million IDs of one key from one database. No
// duplicates; the logged ranges are disjoint and cover every issued ID.
func TestPostgresFourProcesses(t *testing.T) { testFourProcesses(t, pg) }
func TestMySQLFourProcesses(t *testing.T)    { testFourProcesses(t, my) }

func testFourProcesses(t *testing.T, c dbCase) {
	t.Parallel()
	const procs, workers, total = 4, 4, 2_000_000
	s, _, dsn := c.store(t)
	// Start small so the run has many ranges and step changes; the adaptive
	// step grows it fast enough to keep the run short under -race.
	createKey(t, s, segment.KeySpec{Key: "shared", Step: 2000})
	dir := t.TempDir()
	var wg sync.WaitGroup
	errs := make([]error, procs)
	outs := make([][]byte, procs)
	for p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0]) // TestMain runs helperProcess
			cmd.Env = append(os.Environ(),
				helperEnv+"=1",
				helperDB+"="+c.name,
				helperDSN+"="+dsn,
				helperOut+"="+filepath.Join(dir, fmt.Sprint(p)),
				helperCount+"="+strconv.Itoa(total/procs),
				helperWorker+"="+strconv.Itoa(workers),
			)
			outs[p], errs[p] = cmd.CombinedOutput()
		}()
	}
	wg.Wait()
	var ids []int64
	for p := range procs {
		if errs[p] != nil {
			t.Fatalf("process %d: %v\n%s", p, errs[p], outs[p])
		}
		buf, err := os.ReadFile(filepath.Join(dir, fmt.Sprint(p)))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+8 <= len(buf); i += 8 {
			ids = append(ids, int64(binary.LittleEndian.Uint64(buf[i:])))
		}
	}
	if len(ids) != total {
		t.Fatalf("%d IDs, want %d", len(ids), total)
	}
	checkUnique(t, ids)
	ranges := checkLog(t, s, "shared", ids)
	instances := map[string]bool{}
	for _, r := range ranges {
		instances[r.Instance] = true
	}
	t.Logf("%d IDs from %d ranges handed to %d instances", len(ids), len(ranges), len(instances))
	if len(instances) != procs {
		t.Fatalf("ranges went to %d instances, want %d", len(instances), procs)
	}
}

// TestPostgresRestartSkipsUnused: a new generator (a restarted process)
// never reuses the unused part of the previous one's ranges.
func TestPostgresRestartSkipsUnused(t *testing.T) { testRestartSkipsUnused(t, pg) }
func TestMySQLRestartSkipsUnused(t *testing.T)    { testRestartSkipsUnused(t, my) }

func testRestartSkipsUnused(t *testing.T, c dbCase) {
	t.Parallel()
	s, _, _ := c.store(t)
	createKey(t, s, segment.KeySpec{Key: "k", Step: 100})
	ctx := context.Background()
	g1, err := segment.New(ctx, s, segment.Settings{RefreshInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	var first []int64
	for range 15 {
		id, err := g1.NextID(ctx, "k")
		if err != nil {
			t.Fatal(err)
		}
		first = append(first, id)
	}
	g1.Close()
	g2 := newGen(t, s, segment.Settings{})
	id, err := g2.NextID(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if id <= 100 {
		t.Fatalf("restarted generator handed out %d, inside the previous process's range", id)
	}
}

// TestPostgresDatabaseRestart stops and restarts PostgreSQL mid-run:
// buffered IDs keep flowing while it is down, callers who outrun them get a
// clear error, and the generator recovers by itself, with no duplicates.
func TestPostgresDatabaseRestart(t *testing.T) {
	srv := pgtest.StartServer(t)
	testDatabaseDown(t, pg, srv.DSN(), srv.Stop, srv.Start)
}

// TestMySQLDatabaseUnreachable is TestPostgresDatabaseRestart on MariaDB,
// whose server the tests share: a proxy between the store and the server
// closes every connection and refuses new ones while the server is
// "down".
func TestMySQLDatabaseUnreachable(t *testing.T) {
	t.Parallel()
	cfg, err := mysql.ParseDSN(mysqltest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCutProxy(t, cfg.Addr)
	cfg.Addr = proxy.Addr()
	testDatabaseDown(t, my, cfg.FormatDSN(), proxy.Cut, proxy.Restore)
}

// testDatabaseDown runs a generator on the database at dsn, which stop
// makes unreachable and start brings back.
func testDatabaseDown(t *testing.T, c dbCase, dsn string, stop, start func()) {
	db, err := sql.Open(c.name, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := c.migrated(t, db, c.storeSQL(), segment.StoreSettings{})
	ctx := context.Background()
	createKey(t, s, segment.KeySpec{Key: "k", Step: 1000})
	g := newGen(t, s, segment.Settings{
		MaxStep: 1000, WaitTimeout: 2 * time.Second, LoadTimeout: 2 * time.Second,
		RetryMin: 10 * time.Millisecond, RetryMax: 200 * time.Millisecond,
	})
	k := mustKey(t, g, "k")

	var ids []int64
	take := func() (int64, error) {
		id, err := k.Next(ctx)
		if err == nil {
			ids = append(ids, id)
		}
		return id, err
	}
	// Fill both buffers: 101 IDs start the preload of the second range.
	for range 101 {
		if _, err := take(); err != nil {
			t.Fatal(err)
		}
	}
	waitIdle(t, k)
	if st := k.Stats(); !st.Next.Ready {
		t.Fatalf("next segment not loaded: %+v", st)
	}

	stop()
	// Everything buffered (the rest of range 1 and all of range 2) flows.
	// The preload that starts meanwhile fails and retries in the background.
	for i := 101; i < 2000; i++ {
		if _, err := take(); err != nil {
			t.Fatalf("buffered ID %d with the database down: %v", i+1, err)
		}
	}
	_, err = take()
	var ke *segment.KeyError
	if err == nil || !errors.As(err, &ke) || ke.Key != "k" {
		t.Fatalf("outrunning the buffer with the database down: %v", err)
	}
	t.Logf("database down: %v", err)
	if st := k.Stats(); st.LoadErrors == 0 {
		t.Fatalf("no load errors recorded: %+v", st)
	}

	start()
	// Recovery without a restart: the next caller succeeds once the
	// background retry gets through (the pool's dead connections included).
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := take(); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("no recovery after the database came back: %v", err)
		}
	}
	// And keeps going, concurrently.
	ids = append(ids, takeConcurrently(t, k, 4, 2000)...)
	checkUnique(t, ids)
	checkLog(t, s, "k", ids)
	st := k.Stats()
	t.Logf("%d IDs, %d loads, %d load errors", len(ids), st.Loads, st.LoadErrors)
}

// BenchmarkPostgresAllocate, BenchmarkMySQLAllocate measure one
// allocation against the test server: the dialect's single statement and
// the transaction (BEGIN, UPDATE, INSERT, COMMIT) it falls back to.
func BenchmarkPostgresAllocate(b *testing.B) { benchmarkAllocate(b, pg) }
func BenchmarkMySQLAllocate(b *testing.B)    { benchmarkAllocate(b, my) }

func benchmarkAllocate(b *testing.B, c dbCase) {
	for _, f := range c.forms() {
		b.Run(strings.ReplaceAll(f.name, " ", "-"), func(b *testing.B) {
			db, _ := c.open(b)
			s := c.migrated(b, db, f.d, segment.StoreSettings{})
			ctx := context.Background()
			createKey(b, s, segment.KeySpec{Key: "k", Step: 1000})
			for b.Loop() {
				if _, err := s.Allocate(ctx, segment.Request{Key: "k", Instance: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "allocs/s")
		})
	}
}

// TestPostgresRefreshKeys: keys created after start are picked up by a
// refresh, deleted keys are dropped.
func TestPostgresRefreshKeys(t *testing.T) { testRefreshKeys(t, pg) }
func TestMySQLRefreshKeys(t *testing.T)    { testRefreshKeys(t, my) }

func testRefreshKeys(t *testing.T, c dbCase) {
	t.Parallel()
	s, _, _ := c.store(t)
	ctx := context.Background()
	createKey(t, s, segment.KeySpec{Key: "old", Step: 10})
	g := newGen(t, s, segment.Settings{})
	createKey(t, s, segment.KeySpec{Key: "new", Step: 10})
	if err := s.DeleteKey(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if err := g.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if got := g.KeyNames(); !slices.Equal(got, []string{"new"}) {
		t.Fatalf("keys after refresh: %v", got)
	}
	if id, err := g.NextID(ctx, "new"); err != nil || id != 1 {
		t.Fatalf("new key: %d, %v", id, err)
	}
	if _, err := g.NextID(ctx, "old"); !errors.Is(err, segment.ErrUnknownKey) {
		t.Fatalf("deleted key: %v", err)
	}
	snap := g.Snapshot()
	if len(snap.Keys) != 1 || snap.Keys[0].Key != "new" || snap.Keys[0].Loads != 1 || snap.RefreshError != "" {
		t.Fatalf("snapshot: %+v", snap)
	}
}
