package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/pgxid"
	_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // the MariaDB segment store
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// The database-side default (idsql migrate --db-defaults) serves writers
// that do not go through idsql: psql and the mariadb client insert into
// the configured table, with multi-row VALUES, INSERT ... SELECT and COPY,
// while Go processes insert through the wrapper (whose INSERT ... SELECT
// passes to the default) and pgxid. No key repeats, and Lookup traces
// every key to the table: the client's to a block logged under the
// instance "database", the wrapper's to a process's range.

const dbdefaultRounds = 20

func dbdefaultConfig() *keyset.Config { return dbdefaultConfigOf(keyset.Segment, "") }

// dbdefaultStrategies are the kinds of table a database-side default
// serves.
var dbdefaultStrategies = []keyset.Strategy{keyset.Segment, keyset.Snowflake}

// dbdefaultCase is a table a database-side default serves: its strategy
// and its key shape.
type dbdefaultCase struct {
	name     string
	strategy keyset.Strategy
	shape    keyset.Shape
}

// dbdefaultCases are both strategies, ordered and spread.
var dbdefaultCases = []dbdefaultCase{
	{"segment", keyset.Segment, keyset.Shape{}},
	{"snowflake", keyset.Snowflake, keyset.Shape{}},
	{"segment-shard", keyset.Segment, keyset.Shape{Spread: "shard", Bits: 6}},
	{"segment-reverse", keyset.Segment, keyset.Shape{Spread: "reverse"}},
	{"snowflake-reverse", keyset.Snowflake, keyset.Shape{Spread: "reverse"}},
}

// config is dbdefaultConfigOf the case's strategy, its table shaped.
func (c dbdefaultCase) config(kind keyset.HolderKind) *keyset.Config {
	cfg := dbdefaultConfigOf(c.strategy, kind)
	tc := cfg.Tables["orders"]
	tc.Shape = c.shape
	cfg.Tables["orders"] = tc
	return cfg
}

// dbdefaultConfigOf is a namespace whose table orders has strategy; a
// snowflake one keeps a worker ID for the database, and its processes
// take theirs from the worker table of kind (postgres or mysql).
func dbdefaultConfigOf(strategy keyset.Strategy, kind keyset.HolderKind) *keyset.Config {
	cfg := &keyset.Config{Namespace: "shop", Tables: map[string]keyset.TableConfig{
		"orders": {Strategy: strategy, Step: 50},
	}}
	if strategy == keyset.Snowflake {
		cfg.Tables["orders"] = keyset.TableConfig{Strategy: strategy}
		cfg.Holder = keyset.HolderConfig{Kind: kind, Mode: "lease", DatabaseWorkers: 1, AcceptLazyCommits: true}
	}
	return cfg
}

// client runs a script through a database's own command-line client.
type client func(t *testing.T, script string) (string, error)

// psqlClient runs scripts through psql on dsn (a pgtest DSN, whose
// search_path becomes the session's). Without psql in PATH the test skips,
// or fails under CI.
func psqlClient(t *testing.T, dsn string) client {
	t.Helper()
	needClient(t, "psql")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := u.Query().Get("search_path")
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return func(t *testing.T, script string) (string, error) {
		cmd := exec.Command("psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", u.String())
		cmd.Env = os.Environ()
		if schema != "" {
			cmd.Env = append(cmd.Env, "PGOPTIONS=-c search_path="+schema)
		}
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// mariadbClient runs scripts through the mariadb client on dsn (a
// go-sql-driver DSN). Without mariadb in PATH the test skips, or fails
// under CI.
func mariadbClient(t *testing.T, dsn string) client {
	t.Helper()
	needClient(t, "mariadb")
	c, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	host, port, ok := strings.Cut(c.Addr, ":")
	if !ok {
		t.Fatalf("mariadb client: address %q has no port", c.Addr)
	}
	return func(t *testing.T, script string) (string, error) {
		// A generous connect timeout: on a loaded machine the server may
		// accept late.
		cmd := exec.Command("mariadb", "--protocol=TCP", "--connect-timeout=20", "-h", host, "-P", port, "-u", c.User, c.DBName)
		cmd.Env = append(os.Environ(), "MYSQL_PWD="+c.Passwd)
		cmd.Stdin = strings.NewReader(script)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// needClient stops the test when the command name is not in PATH.
func needClient(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		pgtest.Unavailable(t, "the "+name+" client ("+err.Error()+")")
	}
}

func TestDBDefaultMixedWritersPostgres(t *testing.T) {
	for _, c := range dbdefaultCases {
		t.Run(c.name, func(t *testing.T) { mixedWritersPostgres(t, c.config("postgres")) })
	}
}

func mixedWritersPostgres(t *testing.T, cfg *keyset.Config) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	db := openWithDefaults(t, raw, cfg, "postgres", dsn, `CREATE TABLE orders (id BIGINT PRIMARY KEY, note TEXT NOT NULL)`)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	px, err := pgxid.New(pool, cfg, pgxid.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { px.Close() })
	psql := psqlClient(t, dsn)

	writers := map[string]func(i int) error{
		"psql": func(i int) error {
			out, err := psql(t, fmt.Sprintf(`INSERT INTO orders (note) VALUES ('psql %[1]d a'), ('psql %[1]d b');
INSERT INTO orders (note) SELECT 'psql select ' || g FROM generate_series(1, 3) g;
COPY orders (note) FROM STDIN;
copy %[1]d a
copy %[1]d b
\.
`, i))
			if err != nil {
				return fmt.Errorf("psql: %w: %s", err, out)
			}
			return nil
		},
		"wrapper": func(i int) error {
			if _, err := db.ExecContext(ctx, `INSERT INTO orders (note) VALUES ($1), ($2)`, "wrapper a", "wrapper b"); err != nil {
				return err
			}
			// The front doors cannot fill INSERT ... SELECT: it passes to
			// the default.
			_, err := db.ExecContext(ctx, `INSERT INTO orders (note) SELECT 'wrapper select ' || g FROM generate_series(1, 3) g`)
			return err
		},
		"pgxid": func(i int) error {
			if _, err := px.Exec(ctx, `INSERT INTO orders (note) VALUES ($1)`, "pgxid"); err != nil {
				return err
			}
			if _, err := px.CopyFrom(ctx, pgx.Identifier{"orders"}, []string{"note"}, pgx.CopyFromRows([][]any{{"pgxid copy a"}, {"pgxid copy b"}})); err != nil {
				return err
			}
			_, err := px.Exec(ctx, `INSERT INTO orders (note) SELECT 'pgxid select ' || g FROM generate_series(1, 2) g`)
			return err
		},
	}
	runWriters(t, writers)
	checkKeys(t, raw, cfg, map[string]int{"psql": 7 * dbdefaultRounds, "wrapper": 2 * dbdefaultRounds,
		"wrapper select": 3 * dbdefaultRounds, "pgxid": 3 * dbdefaultRounds, "pgxid select": 2 * dbdefaultRounds},
		"CASE WHEN note LIKE 'psql%' OR note LIKE 'copy%' THEN 'psql' WHEN note LIKE 'wrapper select%' THEN 'wrapper select' "+
			"WHEN note LIKE 'wrapper%' THEN 'wrapper' WHEN note LIKE 'pgxid select%' THEN 'pgxid select' ELSE 'pgxid' END")
}

func TestDBDefaultMixedWritersMariaDB(t *testing.T) {
	for _, c := range dbdefaultCases {
		t.Run(c.name, func(t *testing.T) { mixedWritersMariaDB(t, c.config("mysql")) })
	}
}

func mixedWritersMariaDB(t *testing.T, cfg *keyset.Config) {
	raw, dsn := mysqltest.Open(t)
	ctx := context.Background()
	db := openWithDefaults(t, raw, cfg, "mysql", dsn, `CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL)`)
	mariadb := mariadbClient(t, dsn)
	writers := map[string]func(i int) error{
		"mariadb": func(i int) error {
			out, err := mariadb(t, fmt.Sprintf(`INSERT INTO orders (note) VALUES ('mariadb %[1]d a'), ('mariadb %[1]d b');
INSERT INTO orders (note) SELECT CONCAT('mariadb select ', seq) FROM seq_1_to_3;
`, i))
			if err != nil {
				return fmt.Errorf("mariadb: %w: %s", err, out)
			}
			return nil
		},
		"wrapper": func(i int) error {
			if _, err := db.ExecContext(ctx, `INSERT INTO orders (note) VALUES (?), (?)`, "wrapper a", "wrapper b"); err != nil {
				return err
			}
			_, err := db.ExecContext(ctx, `INSERT INTO orders (note) SELECT CONCAT('wrapper select ', seq) FROM seq_1_to_3`)
			return err
		},
	}
	runWriters(t, writers)
	checkKeys(t, raw, cfg, map[string]int{"mariadb": 5 * dbdefaultRounds, "wrapper": 2 * dbdefaultRounds,
		"wrapper select": 3 * dbdefaultRounds},
		"CASE WHEN note LIKE 'mariadb%' THEN 'mariadb' WHEN note LIKE 'wrapper select%' THEN 'wrapper select' ELSE 'wrapper' END")
}

// runWriters runs every writer dbdefaultRounds times, all at once.
func runWriters(t *testing.T, writers map[string]func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(writers))
	for name, w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range dbdefaultRounds {
				if err := w(i); err != nil {
					errs <- fmt.Errorf("%s, round %d: %w", name, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.FailNow()
	}
}

// checkKeys checks that orders holds the rows each writer (told apart by
// the SQL expression writer over its columns) inserted, no key twice, and
// that Lookup traces every key to orders: the keys idsql filled
// ("wrapper", "pgxid") to a process's range, every other writer's to a
// block of the instance "database".
func checkKeys(t *testing.T, raw *sql.DB, cfg *keyset.Config, want map[string]int, writer string) {
	t.Helper()
	got := map[string]int{}
	for _, w := range traceKeys(t, raw, cfg, "orders", writer, func(w string) bool { return w == "wrapper" || w == "pgxid" }) {
		got[w]++
	}
	for w, n := range want {
		if got[w] != n {
			t.Errorf("%s inserted %d rows, want %d", w, got[w], n)
		}
	}
}

// traceKeys checks that table holds no key twice and that Lookup traces
// every key to table: the keys of the writers idsql fills (goKeyed) to a
// process, every other writer's to the instance "database". It returns
// the writer of every key, told apart by the SQL expression writer over
// table's columns.
func traceKeys(t *testing.T, raw *sql.DB, cfg *keyset.Config, table, writer string, goKeyed func(writer string) bool) map[int64]string {
	t.Helper()
	ctx := context.Background()
	var dups int
	if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM (SELECT id FROM `+table+` GROUP BY id HAVING COUNT(*) > 1) d`).Scan(&dups); err != nil {
		t.Fatal(err)
	}
	if dups != 0 {
		t.Fatalf("%s: %d keys inserted more than once", table, dups)
	}
	rows, err := raw.QueryContext(ctx, `SELECT id, `+writer+` FROM `+table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	keys := map[int64]string{}
	for rows.Next() {
		var id int64
		var w string
		if err := rows.Scan(&id, &w); err != nil {
			t.Fatal(err)
		}
		keys[id] = w
		origins, err := idsql.Lookup(ctx, raw, cfg, id)
		if err != nil || len(origins) != 1 || origins[0].Table != table {
			t.Fatalf("%s: Lookup(%d) from %s: %+v, %v", table, id, w, origins, err)
		}
		if byDB := origins[0].Instance() == "database"; byDB == goKeyed(w) {
			t.Errorf("%s: key %d from %s traced to instance %q", table, id, w, origins[0].Instance())
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestDBDefaultBlockUsedUp: a used-up block fails the client's INSERT
// (on PostgreSQL with an error naming the command that extends it);
// migrating again moves the sequence to a fresh block, which Lookup
// traces; migrating while most of a block is left changes nothing.
func TestDBDefaultBlockUsedUp(t *testing.T) {
	for _, tc := range dbdefaultClients {
		t.Run(tc.name, func(t *testing.T) {
			raw, cli := tc.open(t)
			ctx := context.Background()
			if _, err := raw.ExecContext(ctx, `CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL)`); err != nil {
				t.Fatal(err)
			}
			cfg := dbdefaultConfig()
			migrate := func() {
				t.Helper()
				if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 10}); err != nil {
					t.Fatal(err)
				}
			}
			blocks := func() int {
				t.Helper()
				var n int
				if err := raw.QueryRowContext(ctx, `SELECT COUNT(*) FROM idsql_alloc_log WHERE instance = 'database'`).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			migrate()
			migrate() // the whole block is left: no new one
			if n := blocks(); n != 1 {
				t.Fatalf("%d blocks after migrating twice, want 1", n)
			}
			insert := `INSERT INTO orders (note) VALUES ('a'), ('b'), ('c'), ('d'), ('e'), ('f'), ('g'), ('h'), ('i');`
			if out, err := cli(t, insert); err != nil {
				t.Fatalf("first 9 keys: %v: %s", err, out)
			}
			if out, err := cli(t, insert); err == nil || !strings.Contains(out, tc.wantErr) {
				t.Fatalf("keys 10 to 18 of a block of 10: %v: %q, want an error saying %q", err, out, tc.wantErr)
			}
			if _, err := raw.ExecContext(ctx, insert); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("keys 10 to 18 of a block of 10 from Go: %v, want an error saying %q", err, tc.wantErr)
			}
			migrate()
			if n := blocks(); n != 2 {
				t.Fatalf("%d blocks after the block was used up, want 2", n)
			}
			if out, err := cli(t, insert); err != nil {
				t.Fatalf("after migrating again: %v: %s", err, out)
			}
			checkKeys(t, raw, cfg, map[string]int{"client": 18}, "'client'")
		})
	}
}

// dbdefaultClients are the databases with their own clients.
var dbdefaultClients = []struct {
	name    string // the dialect
	open    func(t *testing.T) (*sql.DB, client)
	wantErr string // in the error of a used-up block
}{
	{"postgres", func(t *testing.T) (*sql.DB, client) {
		raw, dsn := pgtest.Open(t)
		return raw, psqlClient(t, dsn)
	}, `idsql migrate --db-defaults`},
	{"mysql", func(t *testing.T) (*sql.DB, client) {
		raw, dsn := mysqltest.Open(t)
		return raw, mariadbClient(t, dsn)
	}, `has run out`},
}

// TestDBDefaultByHand: a DBA installs the defaults with the script idsql
// sql prints, through the database's own client, after idsql migrate.
func TestDBDefaultByHand(t *testing.T) {
	for _, tc := range dbdefaultClients {
		for _, c := range dbdefaultCases {
			t.Run(tc.name+"/"+c.name, func(t *testing.T) {
				byHand(t, tc.open, c.config(keyset.HolderKind(tc.name)), tc.name)
			})
		}
	}
}

// byHand runs idsql migrate, then installs cfg's defaults with the script
// of idsql sql --dialect dialect through the client, twice, and inserts.
func byHand(t *testing.T, open func(t *testing.T) (*sql.DB, client), cfg *keyset.Config, dialect string) {
	raw, cli := open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	script, err := idsql.DBDefaultsSQL(dialect, cfg, 100)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second run changes nothing
		if out, err := cli(t, script); err != nil {
			t.Fatalf("the script of idsql sql: %v: %s\n%s", err, out, script)
		}
	}
	if out, err := cli(t, `INSERT INTO orders (note) VALUES ('a'), ('b');`); err != nil {
		t.Fatalf("insert: %v: %s", err, out)
	}
	checkKeys(t, raw, cfg, map[string]int{"client": 2}, "'client'")
}

// openWithDefaults creates the orders table on raw with ddl, migrates cfg
// with its database-side defaults (a segment table's has a block of
// 100,000 keys) and opens it through idsql, closed when the test ends.
func openWithDefaults(t *testing.T, raw *sql.DB, cfg *keyset.Config, driver, dsn, ddl string) *idsql.DB {
	t.Helper()
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, ddl); err != nil {
		t.Fatal(err)
	}
	if err := idsql.MigrateWith(ctx, raw, cfg, idsql.MigrateOptions{DBDefaults: true, DBBlock: 100_000}); err != nil {
		t.Fatal(err)
	}
	db, err := idsql.Open(driver, dsn, cfg, idsql.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestDBDefaultOpenTransaction: a writer's open transaction blocks no other
// writer of the table. Session A inserts a row through the database-side
// default and keeps its transaction open; sessions B and C insert a row
// each through the default and commit while A's transaction is still open;
// then A commits, and the three keys are distinct. B and C must be done
// within openTxBound, generous for a loaded machine (the goal is 100 ms);
// A waits openTxHold for them, so a default that makes them wait for A's
// transaction fails the test.
func TestDBDefaultOpenTransaction(t *testing.T) {
	const (
		openTxBound = 2 * time.Second
		openTxHold  = 6 * time.Second
	)
	for _, tc := range dbdefaultClients {
		for _, strategy := range dbdefaultStrategies {
			t.Run(tc.name+"/"+string(strategy), func(t *testing.T) {
				raw, _ := tc.open(t)
				ctx := context.Background()
				if _, err := raw.ExecContext(ctx, `CREATE TABLE orders (id BIGINT PRIMARY KEY, note VARCHAR(64) NOT NULL)`); err != nil {
					t.Fatal(err)
				}
				if err := idsql.MigrateWith(ctx, raw, dbdefaultConfigOf(strategy, keyset.HolderKind(tc.name)), idsql.MigrateOptions{DBDefaults: true, DBBlock: 1000}); err != nil {
					t.Fatal(err)
				}
				a, err := raw.BeginTx(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer a.Rollback()
				if _, err := a.ExecContext(ctx, `INSERT INTO orders (note) VALUES ('a')`); err != nil {
					t.Fatal(err)
				}
				type result struct {
					name string
					took time.Duration
					err  error
				}
				done := make(chan result, 2)
				for _, name := range []string{"b", "c"} {
					go func() {
						conn, err := raw.Conn(ctx)
						if err != nil {
							done <- result{name, 0, err}
							return
						}
						defer conn.Close()
						start := time.Now()
						_, err = conn.ExecContext(ctx, `INSERT INTO orders (note) VALUES ('`+name+`')`)
						done <- result{name, time.Since(start), err}
					}()
				}
				hold := time.After(openTxHold)
				var results []result
				for len(results) < 2 {
					select {
					case r := <-done:
						results = append(results, r)
					case <-hold:
						t.Errorf("A's open transaction held B or C for %s", openTxHold)
						hold = nil
						if err := a.Commit(); err != nil {
							t.Fatal(err)
						}
					}
				}
				for _, r := range results {
					if r.err != nil {
						t.Fatalf("session %s: %v", r.name, r.err)
					}
					if r.took > openTxBound {
						t.Errorf("session %s took %s beside A's open transaction, want within %s", r.name, r.took, openTxBound)
					}
					t.Logf("session %s inserted and committed in %s while A's transaction was open", r.name, r.took)
				}
				if hold != nil {
					if err := a.Commit(); err != nil {
						t.Fatal(err)
					}
				}
				var rows, distinct int
				if err := raw.QueryRowContext(ctx, `SELECT COUNT(*), COUNT(DISTINCT id) FROM orders`).Scan(&rows, &distinct); err != nil {
					t.Fatal(err)
				}
				if rows != 3 || distinct != 3 {
					t.Fatalf("%d rows, %d distinct keys; want 3 and 3", rows, distinct)
				}
			})
		}
	}
}
