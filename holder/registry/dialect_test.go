package registry_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/internal/clocktest"
	"github.com/idsql/idsql/internal/dialect"
	"github.com/idsql/idsql/internal/mysqltest"
)

// Several processes may migrate at once, and again.
func testMigrateConcurrently(t *testing.T, b backend) {
	ctx := context.Background()
	db := b.open(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- registry.New(db, b.settings(registry.Settings{})).Migrate(ctx)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if err := registry.New(db, b.settings(registry.Settings{})).Migrate(ctx); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
}

// The dialect comes from the driver when the settings name none.
func testDialectFromDriver(t *testing.T, b backend) {
	want := map[string]dialect.Dialect{"PostgreSQL": dialect.PostgreSQL, "MySQL": dialect.MySQL}[b.name]
	reg := registry.New(b.open(t), registry.Settings{})
	d, err := reg.Dialect()
	if err != nil || d != want {
		t.Fatalf("Dialect() = %v, %v; want %v", d, err, want)
	}
	if got := reg.Settings().Dialect; got != want.String() {
		t.Errorf("Settings().Dialect = %q, want %q", got, want.String())
	}
}

type unknownDriver struct{}

func (unknownDriver) Open(string) (driver.Conn, error) { return nil, errors.New("not a database") }

type unknownConnector struct{}

func (unknownConnector) Connect(context.Context) (driver.Conn, error) {
	return nil, errors.New("not a database")
}
func (unknownConnector) Driver() driver.Driver { return unknownDriver{} }

// An unknown driver is not guessed at: every method says to set
// Settings.Dialect. Settings.Dialect takes the dialects' names and aliases.
func TestDialectChoice(t *testing.T) {
	ctx := context.Background()
	db := sql.OpenDB(unknownConnector{})
	defer db.Close()
	reg := registry.New(db, registry.Settings{})
	if _, err := reg.Dialect(); err == nil || !strings.Contains(err.Error(), "Settings.Dialect") || !strings.Contains(err.Error(), "unknownDriver") {
		t.Errorf("Dialect() of an unknown driver: err = %v, want one naming the driver and Settings.Dialect", err)
	}
	if err := reg.Migrate(ctx); err == nil || !strings.Contains(err.Error(), "Settings.Dialect") {
		t.Errorf("Migrate with an unknown driver: err = %v", err)
	}
	if _, err := reg.Find(ctx, "ns", 1, time.Now()); err == nil || errors.Is(err, registry.ErrNoLease) {
		t.Errorf("Find with an unknown driver: err = %v", err)
	}
	for _, c := range []struct {
		name string
		want dialect.Dialect // Unknown means refused
	}{
		{"postgres", dialect.PostgreSQL},
		{"postgresql", dialect.PostgreSQL},
		{"pgx", dialect.PostgreSQL},
		{"mysql", dialect.MySQL},
		{"MariaDB", dialect.MySQL},
		{"sqlite", dialect.Unknown},
		{"oracle", dialect.Unknown},
	} {
		d, err := registry.New(db, registry.Settings{Dialect: c.name}).Dialect()
		switch {
		case c.want == dialect.Unknown && (err == nil || !strings.Contains(err.Error(), "Settings.Dialect")):
			t.Errorf("Settings.Dialect %q: got %v, %v; want an error naming Settings.Dialect", c.name, d, err)
		case c.want != dialect.Unknown && (err != nil || d != c.want):
			t.Errorf("Settings.Dialect %q: got %v, %v; want %v", c.name, d, err, c.want)
		}
	}
	if _, err := registry.New(nil, registry.Settings{}).Dialect(); err == nil {
		t.Error("Dialect() without a database: no error")
	}
}

// A MySQL server that does not flush every commit is refused, naming the
// setting, unless Settings.AcceptLazyCommits; a durable one is not.
func TestMySQLLazyCommitsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mysqltest.Open(t)
	var flush, logBin, syncBinlog int
	if err := db.QueryRowContext(ctx, `SELECT @@GLOBAL.innodb_flush_log_at_trx_commit, @@GLOBAL.log_bin, @@GLOBAL.sync_binlog`).
		Scan(&flush, &logBin, &syncBinlog); err != nil {
		t.Fatal(err)
	}
	lazy := (flush != 1 && flush != 3) || (logBin != 0 && syncBinlog != 1)
	start := registry.Start{Namespace: "ns", WorkerID: 1, Table: "t", Instance: holder.Instance{ID: "x"}, Kind: "test"}
	strict := registry.New(db, registry.Settings{})
	if err := strict.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := strict.Begin(ctx, start)
	switch {
	case lazy && (!errors.Is(err, registry.ErrNotDurable) || !strings.Contains(err.Error(), "innodb_flush_log_at_trx_commit") ||
		!strings.Contains(err.Error(), "AcceptLazyCommits")):
		t.Fatalf("Begin on a server with innodb_flush_log_at_trx_commit = %d, sync_binlog = %d (log_bin %d): err = %v, want ErrNotDurable naming the settings",
			flush, syncBinlog, logBin, err)
	case !lazy && err != nil:
		t.Fatalf("Begin on a durable server: %v", err)
	}
	if lazy {
		if recs, err := strict.Leases(ctx, "ns", false); err != nil || len(recs) != 0 {
			t.Fatalf("a refused lease left rows: %+v, %v", recs, err)
		}
	}
	if _, err := registry.New(db, registry.Settings{AcceptLazyCommits: true}).Begin(ctx, start); err != nil {
		t.Fatalf("Begin with AcceptLazyCommits: %v", err)
	}
}

// DATETIME columns hold UTC whatever the DSN says about parsing and zones,
// and heartbeats tell a live row from an ended one however the DSN has the
// driver send arguments and count rows.
func TestMySQLWhateverTheDSN(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base, err := mysql.ParseDSN(mysqltest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2030, 3, 31, 1, 30, 0, 123456789, time.UTC)
	for i, c := range []struct {
		parseTime   bool
		loc         *time.Location
		interpolate bool // interpolateParams
		foundRows   bool // clientFoundRows
	}{
		{false, time.UTC, false, false},
		{true, time.UTC, false, false},
		{true, time.FixedZone("UTC+9", 9*3600), true, false},
		{false, time.FixedZone("UTC-5", -5*3600), false, true},
		{true, time.UTC, true, true},
	} {
		cfg := base.Clone()
		cfg.ParseTime, cfg.Loc = c.parseTime, c.loc
		cfg.InterpolateParams, cfg.ClientFoundRows = c.interpolate, c.foundRows
		conn, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(conn)
		defer db.Close()
		clock := clocktest.New(at)
		reg := registry.New(db, registry.Settings{Now: clock.Now, AcceptLazyCommits: true})
		if err := reg.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		start := registry.Start{Namespace: "ns", WorkerID: int64(i), Table: "t", Instance: holder.Instance{ID: "x"}, Kind: "test",
			Horizon: at.Add(time.Second)}
		rec, err := reg.Begin(ctx, start)
		if err != nil {
			t.Fatalf("parseTime=%v loc=%s: Begin: %v", c.parseTime, c.loc, err)
		}
		got, err := reg.Find(ctx, "ns", int64(i), at.Add(time.Millisecond))
		if err != nil {
			t.Fatalf("parseTime=%v loc=%s: Find: %v", c.parseTime, c.loc, err)
		}
		us := at.Truncate(time.Microsecond)
		if got.LeaseID != rec.LeaseID || !got.IDsAfter.Equal(us) || !got.Started.Equal(us) || !got.LastHeartbeat.Equal(us) ||
			!got.LastTimestamp.Equal(at.Add(time.Second).Truncate(time.Microsecond)) || !got.Released.IsZero() {
			t.Errorf("parseTime=%v loc=%s: Find = %+v, want lease %d recorded at %s", c.parseTime, c.loc, got, rec.LeaseID, us)
		}
		if _, err := reg.Find(ctx, "ns", int64(i), us); !errors.Is(err, registry.ErrNoLease) {
			t.Errorf("parseTime=%v loc=%s: Find at the lease's own start: err = %v, want ErrNoLease", c.parseTime, c.loc, err)
		}
		// A tick a nanosecond after ids_after is after it, though both
		// share the stored microsecond.
		if _, err := reg.Find(ctx, "ns", int64(i), us.Add(time.Nanosecond)); err != nil {
			t.Errorf("parseTime=%v loc=%s: Find just after the start: %v", c.parseTime, c.loc, err)
		}
		// The clock stands still: the same values twice are still
		// heartbeats of a live row.
		for j := 0; j < 2; j++ {
			if live, err := reg.Heartbeat(ctx, rec.LeaseID, at.Add(time.Second), time.Minute); err != nil || !live {
				t.Errorf("%+v: heartbeat #%d of a live lease = %v, %v; want live", c, j+1, live, err)
			}
		}
		if err := reg.Release(ctx, rec.LeaseID, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if live, err := reg.Heartbeat(ctx, rec.LeaseID, time.Time{}, 0); err != nil || live {
			t.Errorf("%+v: heartbeat of a released lease = %v, %v; want not live", c, live, err)
		}
		// A row past its expiry on the database clock is not renewed.
		start.WorkerID, start.Expires = int64(100+i), time.Millisecond
		rec, err = reg.Begin(ctx, start)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		if live, err := reg.Heartbeat(ctx, rec.LeaseID, time.Time{}, time.Minute); err != nil || live {
			t.Errorf("%+v: heartbeat of an expired lease = %v, %v; want not live", c, live, err)
		}
	}
}

// Names MySQL would truncate are refused before anything is written.
func TestMySQLLongNamesRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mysqltest.Open(t)
	reg := registry.New(db, registry.Settings{AcceptLazyCommits: true})
	if err := reg.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("é", 192)
	for _, s := range []registry.Start{
		{Namespace: long, Table: "t", Instance: holder.Instance{ID: "x"}},
		{Namespace: "ns", Table: long, Instance: holder.Instance{ID: "x"}},
		{Namespace: "ns", Table: "t", Instance: holder.Instance{ID: long}},
	} {
		s.Kind = "test"
		if _, err := reg.Begin(ctx, s); err == nil || !strings.Contains(err.Error(), "at most 191") {
			t.Errorf("Begin with a 192-character name: err = %v", err)
		}
	}
	ok := strings.Repeat("é", 191)
	if _, err := reg.Begin(ctx, registry.Start{Namespace: ok, Table: ok, Instance: holder.Instance{ID: ok}, Kind: "test"}); err != nil {
		t.Errorf("Begin with 191-character names: %v", err)
	}
}

// Migrate upgrades a MySQL namespace lock table made before the lock
// changed its row (claims): the column is added once, a second Migrate
// changes nothing, and a lock of the namespace then changes the row.
func TestMySQLMigrateAddsClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := mysqltest.Open(t)
	if _, err := db.ExecContext(ctx, "CREATE TABLE idsql_worker_locks (namespace VARCHAR(191) NOT NULL PRIMARY KEY) ENGINE = InnoDB"); err != nil {
		t.Fatal(err)
	}
	r := registry.New(db, registry.Settings{AcceptLazyCommits: true})
	for range 2 {
		if err := r.Migrate(ctx); err != nil {
			t.Fatalf("migrate over an old idsql_worker_locks: %v", err)
		}
	}
	for range 2 {
		if err := r.InTx(ctx, func(tx *sql.Tx) error { return r.LockNamespace(ctx, tx, "ns") }); err != nil {
			t.Fatal(err)
		}
	}
	var claims int
	if err := db.QueryRowContext(ctx, "SELECT claims FROM idsql_worker_locks WHERE namespace = 'ns'").Scan(&claims); err != nil || claims != 1 {
		t.Errorf("claims after two locks of the namespace: %d, %v; want 1 (the first inserts the row, the second changes it)", claims, err)
	}
}
