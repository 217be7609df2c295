package dialect_test

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/internal/dialect"
)

// The worker table's facts, per dialect.
func TestWorkerTableFacts(t *testing.T) {
	if got, want := dialect.WorkerTableDialects(), []dialect.Dialect{dialect.PostgreSQL, dialect.MySQL}; !slices.Equal(got, want) {
		t.Errorf("WorkerTableDialects() = %v, want %v", got, want)
	}
	for _, c := range []struct {
		d        dialect.Dialect
		table    bool
		maxName  int
		readComm bool // ReadCommittedTx asks for READ COMMITTED
		locking  string
		changed  bool
		idle     bool
	}{
		{dialect.PostgreSQL, true, 0, false, "", false, true},
		{dialect.MySQL, true, 191, true, " FOR UPDATE", true, false},
		{dialect.SQLite, false, 0, false, "", false, false},
		{dialect.Unknown, false, 0, false, "", false, false},
		{dialect.Dialect(200), false, 0, false, "", false, false},
	} {
		if got := c.d.HasWorkerTable(); got != c.table || (len(c.d.WorkerSchema()) > 0) != c.table {
			t.Errorf("%s: HasWorkerTable() = %v with %d schema statements, want %v", c.d, got, len(c.d.WorkerSchema()), c.table)
		}
		if got := c.d.MaxNameLength(); got != c.maxName {
			t.Errorf("%s: MaxNameLength() = %d, want %d", c.d, got, c.maxName)
		}
		opts := c.d.ReadCommittedTx()
		if got := opts != nil && opts.Isolation == sql.LevelReadCommitted; got != c.readComm || (opts != nil && !c.readComm) {
			t.Errorf("%s: ReadCommittedTx() = %+v", c.d, opts)
		}
		if got := c.d.LockingRead(); got != c.locking {
			t.Errorf("%s: LockingRead() = %q, want %q", c.d, got, c.locking)
		}
		if got := c.d.ChangedRows(); got != c.changed {
			t.Errorf("%s: ChangedRows() = %v, want %v", c.d, got, c.changed)
		}
		if got := c.d.IdleTxTimeout("?") != ""; got != c.idle {
			t.Errorf("%s: IdleTxTimeout = %q", c.d, c.d.IdleTxTimeout("?"))
		}
	}
	// WorkerSchema hands out a copy.
	s := dialect.MySQL.WorkerSchema()
	s[0] = "DROP TABLE idsql_workers"
	if strings.HasPrefix(dialect.MySQL.WorkerSchema()[0], "DROP") {
		t.Error("WorkerSchema's result shares the dialect's statements")
	}
}

// Names longer than the worker table holds are refused, counted in
// characters; PostgreSQL takes any length.
func TestCheckWorkerName(t *testing.T) {
	ok, long := strings.Repeat("é", 191), strings.Repeat("é", 192)
	if err := dialect.MySQL.CheckWorkerName("table", ok); err != nil {
		t.Errorf("MySQL, 191 characters: %v", err)
	}
	if err := dialect.MySQL.CheckWorkerName("table", long); err == nil || !strings.Contains(err.Error(), "table") ||
		!strings.Contains(err.Error(), "at most 191") {
		t.Errorf("MySQL, 192 characters: err = %v, want one naming the table and the limit", err)
	}
	if err := dialect.PostgreSQL.CheckWorkerName("table", strings.Repeat(long, 10)); err != nil {
		t.Errorf("PostgreSQL: %v", err)
	}
}

// Times travel as UTC text with microseconds where the columns hold no
// zone, as they are elsewhere; the zero time is NULL.
func TestTimeArg(t *testing.T) {
	at := time.Date(2030, 3, 31, 1, 30, 0, 123456789, time.FixedZone("UTC+2", 2*3600))
	if got := dialect.MySQL.TimeArg(at); got != "2030-03-30 23:30:00.123456" {
		t.Errorf("MySQL TimeArg = %v", got)
	}
	if got, ok := dialect.PostgreSQL.TimeArg(at).(time.Time); !ok || !got.Equal(at) {
		t.Errorf("PostgreSQL TimeArg = %v", dialect.PostgreSQL.TimeArg(at))
	}
	for _, d := range []dialect.Dialect{dialect.PostgreSQL, dialect.MySQL} {
		if got := d.TimeArg(time.Time{}); got != nil {
			t.Errorf("%s: TimeArg(zero) = %v, want nil", d, got)
		}
	}
}

// ScanTime reads NULL as the zero time, a zoneless column's time as UTC
// whatever the driver's loc, and text as UTC.
func TestScanTime(t *testing.T) {
	utc := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.UTC)
	tokyo := time.Date(2030, 1, 2, 3, 4, 5, 6000, time.FixedZone("UTC+9", 9*3600))
	for _, c := range []struct {
		d    dialect.Dialect
		in   any
		want time.Time
	}{
		{dialect.MySQL, nil, time.Time{}},
		{dialect.MySQL, tokyo, utc},
		{dialect.MySQL, []byte("2030-01-02 03:04:05.000006"), utc},
		{dialect.MySQL, "2030-01-02 03:04:05.000006", utc},
		{dialect.PostgreSQL, tokyo, tokyo},
		{dialect.PostgreSQL, nil, time.Time{}},
	} {
		got := time.Now()
		if err := c.d.ScanTime(&got).Scan(c.in); err != nil || !got.Equal(c.want) {
			t.Errorf("%s: Scan(%v) = %v, %v; want %v", c.d, c.in, got, err, c.want)
		}
	}
	var got time.Time
	if err := dialect.MySQL.ScanTime(&got).Scan(int64(1)); err == nil {
		t.Error("Scan(int64) into a time: no error")
	}
	if err := dialect.MySQL.ScanTime(&got).Scan("yesterday"); err == nil {
		t.Error("Scan(yesterday): no error")
	}
}

func TestWorkerTablePostgreSQL(t *testing.T) { testWorkerTable(t, openPostgres(t)) }
func TestWorkerTableMySQL(t *testing.T)      { testWorkerTable(t, openMySQL(t)) }

// The worker table's schema and expressions are accepted by the real
// server and mean what they say.
func testWorkerTable(t *testing.T, s server) {
	ctx := context.Background()
	d := s.d
	migrate := func() {
		t.Helper()
		if !d.TransactionalDDL() {
			for _, stmt := range d.WorkerSchema() {
				if _, err := s.db.ExecContext(ctx, stmt); err != nil && !d.DuplicateColumn(err) {
					t.Fatal(err)
				}
			}
			return
		}
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		for _, stmt := range d.WorkerSchema() {
			if _, err := tx.ExecContext(ctx, stmt); err != nil && !d.DuplicateColumn(err) {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	migrate()
	migrate() // idempotent

	// A time goes in through TimeParam and TimeArg and comes back, to the
	// microsecond, through ScanTime.
	at := time.Date(2030, 3, 31, 1, 30, 0, 123456789, time.FixedZone("UTC-5", -5*3600))
	us := at.Truncate(time.Microsecond)
	var leaseID int64
	insert := `INSERT INTO idsql_workers (namespace, worker_id, table_name, instance, holder_kind, started, ids_after, last_heartbeat, expires)
		VALUES (?, 1, 't', 'x', 'test', ` + d.TimeParam("?") + `, ` + d.TimeParam("?") + `, ` + d.TimeParam("?") + `, ` +
		d.PlusMicroseconds(d.Clock(), "?") + `)`
	args := []any{"ns", d.TimeArg(us), d.TimeArg(us), d.TimeArg(us), time.Minute.Microseconds()}
	if d.KeyBack() == dialect.Returning {
		if err := s.db.QueryRowContext(ctx, d.Rebind(insert+" RETURNING lease_id"), args...).Scan(&leaseID); err != nil {
			t.Fatal(err)
		}
	} else {
		res, err := s.db.ExecContext(ctx, d.Rebind(insert), args...)
		if err != nil {
			t.Fatal(err)
		}
		if leaseID, err = res.LastInsertId(); err != nil {
			t.Fatal(err)
		}
	}
	var started, released time.Time
	var left, plusNull sql.NullInt64
	err := s.db.QueryRowContext(ctx, d.Rebind(`SELECT started, released, `+d.MicrosecondsUntil("expires")+`,
		`+d.MicrosecondsUntil(d.PlusMicroseconds(d.Clock(), "?"))+` FROM idsql_workers WHERE lease_id = ?`), nil, leaseID).
		Scan(d.ScanTime(&started), d.ScanTime(&released), &left, &plusNull)
	if err != nil {
		t.Fatal(err)
	}
	if !started.Equal(us) || !released.IsZero() {
		t.Errorf("started %s, released %s; want %s and zero", started, released, us)
	}
	if !left.Valid || left.Int64 <= 0 || left.Int64 > time.Minute.Microseconds() {
		t.Errorf("MicrosecondsUntil(expires) = %v, want in (0, 60e6]", left)
	}
	if plusNull.Valid {
		t.Errorf("PlusMicroseconds(clock, NULL) = %v, want NULL", plusNull)
	}

	// The high-water read of the registry: an aggregate with the locking
	// read, in the transaction the registry uses, under the namespace lock.
	tx, err := s.db.BeginTx(ctx, d.ReadCommittedTx())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, d.NamespaceLock(d.Placeholder(1)), "ns"); err != nil {
		t.Fatal(err)
	}
	if idle := d.IdleTxTimeout("?"); idle != "" {
		if _, err := tx.ExecContext(ctx, d.Rebind("SELECT "+idle), "5000"); err != nil {
			t.Fatal(err)
		}
	}
	var hw time.Time
	if err := tx.QueryRowContext(ctx, d.Rebind(`SELECT MAX(GREATEST(COALESCE(last_timestamp, ids_after), ids_after)) FROM idsql_workers
		WHERE namespace = ? AND worker_id = ?`+d.LockingRead()), "ns", 1).Scan(d.ScanTime(&hw)); err != nil {
		t.Fatal(err)
	}
	if !hw.Equal(us) {
		t.Errorf("high water %s, want %s", hw, us)
	}
	// An UPDATE that changes nothing: where RowsAffected counts changed
	// rows, it counts none.
	res, err := tx.ExecContext(ctx, d.Rebind(`UPDATE idsql_workers SET started = started WHERE lease_id = ?`), leaseID)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || (n == 0) != d.ChangedRows() {
		t.Errorf("RowsAffected of an UPDATE changing nothing = %d, %v; ChangedRows() = %v", n, err, d.ChangedRows())
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
