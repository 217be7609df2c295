package idsql_test

import (
	"bufio"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lib/pq"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// recorder keeps every statement text a recConn sent to the inner driver.
type recorder struct {
	mu    sync.Mutex
	texts []string
}

func (r *recorder) add(q string) {
	if strings.HasPrefix(strings.TrimSpace(q), "SELECT a.attname") {
		return // catalog queries, the wrapper's and this test's
	}
	r.mu.Lock()
	r.texts = append(r.texts, q)
	r.mu.Unlock()
}

// take returns the texts recorded since the last take.
func (r *recorder) take() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.texts
	r.texts = nil
	return t
}

// recConnector wraps lib/pq's connector and records what reaches it.
type recConnector struct {
	inner driver.Connector
	rec   *recorder
}

func (c recConnector) Connect(ctx context.Context) (driver.Conn, error) {
	ic, err := c.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &recConn{Conn: ic, rec: c.rec}, nil
}

func (c recConnector) Driver() driver.Driver { return c.inner.Driver() }

// recConn forwards everything to a lib/pq connection, recording texts.
type recConn struct {
	driver.Conn
	rec *recorder
}

func (c *recConn) Prepare(q string) (driver.Stmt, error) {
	c.rec.add(q)
	return c.Conn.Prepare(q)
}

func (c *recConn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	c.rec.add(q)
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, q)
}

func (c *recConn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	c.rec.add(q)
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, q, args)
}

func (c *recConn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	c.rec.add(q)
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, q, args)
}

func (c *recConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *recConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }
func (c *recConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}
func (c *recConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }
func (c *recConn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}

// openRecorded opens an idsql.DB over a recording lib/pq connector on dsn.
// Keys are allocated over keysDB, which is not recorded.
func openRecorded(t *testing.T, dsn string, cfg *keyset.Config, keysDB *sql.DB) (*idsql.DB, *recorder) {
	t.Helper()
	pc, err := pq.NewConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	c, err := idsql.NewConnector(recConnector{pc, rec}, cfg, idsql.Options{
		KeysOptions: keyset.KeysOptions{DB: keysDB, Holder: tableWorkers(cfg, 5)},
	})
	if err != nil {
		t.Fatal(err)
	}
	db := idsql.NewDB(c)
	t.Cleanup(func() { db.Close() })
	return db, rec
}

// seedCase is one input of the rewriter's fuzz seed corpus.
type seedCase struct {
	name     string
	query    string
	question bool
}

// fuzzSeeds reads FuzzRewrite's seed corpus (the in and style fields of
// rwCases in the rewriter's cases_test.go) and the stored corpus files
// under testdata/fuzz/FuzzRewrite.
func fuzzSeeds(t *testing.T) []seedCase {
	t.Helper()
	dir := filepath.Join("internal", "rewrite")
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "cases_test.go"), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []seedCase
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "rwCases" {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			var sc seedCase
			for _, kv := range el.(*ast.CompositeLit).Elts {
				kv := kv.(*ast.KeyValueExpr)
				switch kv.Key.(*ast.Ident).Name {
				case "name", "in":
					lit, ok := kv.Value.(*ast.BasicLit)
					if !ok {
						t.Fatalf("%s: seed field is not a literal", fset.Position(kv.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					if kv.Key.(*ast.Ident).Name == "in" {
						sc.query = s
					} else {
						sc.name = s
					}
				case "style":
					sc.question = kv.Value.(*ast.Ident).Name == "Question"
				}
			}
			out = append(out, sc)
		}
		return false
	})
	if len(out) < 100 {
		t.Fatalf("read %d seeds from cases_test.go; the parser of this test is out of date", len(out))
	}
	files, _ := filepath.Glob(filepath.Join(dir, "testdata", "fuzz", "FuzzRewrite", "*"))
	for _, file := range files {
		fh, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		sc := seedCase{name: filepath.Base(file)}
		s := bufio.NewScanner(fh)
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			line := s.Text()
			if v, ok := strings.CutPrefix(line, "string("); ok {
				if u, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					sc.query = u
				}
			}
			if line == "bool(true)" {
				sc.question = true
			}
		}
		fh.Close()
		out = append(out, sc)
	}
	return out
}

// The tables of the rewriter's tests (testTables, pgSchema there).
const replaySchema = `
CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint, total numeric, note text, "we""ird (x)" text);
CREATE TABLE "Items" ("ItemID" bigint PRIMARY KEY, name text);
CREATE TABLE users (user_id bigint PRIMARY KEY, email text);
CREATE TABLE events (id bigserial PRIMARY KEY, kind text);
CREATE TABLE ledger (kind text, amount int, id bigint PRIMARY KEY, memo text);
`

// pgCat is the rewriter's Catalog on a lib/pq handle, for the expected
// decisions.
type pgCat struct {
	q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
}

func (c pgCat) Columns(ctx context.Context, schema, table string) ([]rewrite.Column, error) {
	rows, err := c.q.QueryContext(ctx, `
SELECT a.attname, a.atthasdef OR a.attidentity <> ''
FROM pg_attribute a
WHERE a.attrelid = to_regclass(CASE WHEN $1 = '' THEN format('%I', $2::text) ELSE format('%I.%I', $1::text, $2::text) END)
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, schema, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []rewrite.Column
	for rows.Next() {
		var c rewrite.Column
		if err := rows.Scan(&c.Name, &c.HasDefault); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// TestReplayFuzzCorpus sends every Dollar-style input of FuzzRewrite's seed
// and stored corpora through the wrapper to PostgreSQL (PREPARE, inside a
// rolled-back transaction) over a recording connector. Statements the
// rewriter fills reach the server as the rewrite and are accepted whenever
// the original is; statements it does not fill reach it byte-for-byte;
// statements it refuses reach it not at all.
func TestReplayFuzzCorpus(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, replaySchema); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "replay", Tables: map[string]keyset.TableConfig{
		"orders":     {Strategy: keyset.Snowflake},
		"Items":      {Strategy: keyset.Snowflake, Column: "ItemID"},
		"shop.users": {Strategy: keyset.Snowflake, Column: "user_id"},
		"events":     {Strategy: keyset.Snowflake},
		"ledger":     {Strategy: keyset.Snowflake},
	}}
	db, rec := openRecorded(t, dsn, cfg, raw)
	// One connection in one transaction, begun and ended by statements so
	// that the inner connection stays reachable through Raw.
	tx, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	// shop.users exists only inside this transaction: the schema name is
	// shared by every test on the server.
	if _, err := tx.ExecContext(ctx, `BEGIN; CREATE SCHEMA shop; CREATE TABLE shop.users (user_id bigint PRIMARY KEY, email text)`); err != nil {
		t.Fatal(err)
	}
	defer tx.ExecContext(ctx, "ROLLBACK")
	exec := func(q string) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// prepare runs PREPARE of q through the wrapper in a savepoint.
	prepare := func(q string) error {
		exec("SAVEPOINT s")
		st, err := tx.PrepareContext(ctx, q)
		if err == nil {
			st.Close()
			exec("RELEASE SAVEPOINT s")
			return nil
		}
		exec("ROLLBACK TO SAVEPOINT s")
		return err
	}
	// The expected decisions, from a rewriter configured alike and the
	// catalog as the transaction sees it.
	rw, err := rewrite.New(rewrite.Config{Tables: []rewrite.Table{
		{Name: "orders"}, {Name: "Items", KeyColumn: "ItemID"},
		{Schema: "shop", Name: "users", KeyColumn: "user_id"}, {Name: "events"}, {Name: "ledger"},
	}, CacheSize: -1})
	if err != nil {
		t.Fatal(err)
	}
	var filled, accepted, passed, refused, rejectedBoth int
	for _, sc := range fuzzSeeds(t) {
		if sc.question {
			continue // the ? style: internal/rewrite/sqlite_test.go prepares those on SQLite
		}
		rec.take()
		p, planErr := rw.Plan(ctx, sc.query, pgCat{tx})
		err := prepare(sc.query)
		sent := rec.take()
		// sent: [SAVEPOINT s, <statement>?, RELEASE/ROLLBACK TO SAVEPOINT s]
		var got []string
		for _, s := range sent {
			if !strings.HasSuffix(s, "SAVEPOINT s") {
				got = append(got, s)
			}
		}
		switch {
		case planErr != nil:
			refused++
			var re *rewrite.Error
			if !errors.As(err, &re) || err.Error() != "idsql: "+planErr.Error() {
				t.Errorf("%s: %q: wrapper error %v, want the rewriter's %v after idsql's prefix", sc.name, sc.query, err, planErr)
			}
			if len(got) != 0 {
				t.Errorf("%s: refused statement reached the server as %q", sc.name, got)
			}
		case p == nil:
			passed++
			if len(got) != 1 || got[0] != sc.query {
				t.Errorf("%s: pass-through %q reached the server as %q", sc.name, sc.query, got)
			}
		default:
			filled++
			if len(got) != 1 || got[0] != p.Query {
				t.Errorf("%s: %q reached the server as %q, want the rewrite %q", sc.name, sc.query, got, p.Query)
			}
			// Accepted only matters when the original is valid SQL here.
			switch rawErr := prepareRaw(t, tx, sc.query); {
			case rawErr == nil && err != nil:
				t.Errorf("%s: PostgreSQL accepts %q but rejects its rewrite %q: %v", sc.name, sc.query, p.Query, err)
			case rawErr == nil:
				accepted++
			case err != nil:
				rejectedBoth++
			}
		}
	}
	t.Logf("%d filled (%d of them accepted by PostgreSQL before and after the rewrite, %d invalid here before and after), %d passed through byte-for-byte, %d refused",
		filled, accepted, rejectedBoth, passed, refused)
	// The floor counts fills PostgreSQL prepared both ways: a fill that
	// both sides refuse proves nothing.
	if accepted < 50 || passed < 20 {
		t.Fatalf("corpus too small: %d fills accepted before and after the rewrite, %d passed", accepted, passed)
	}
}

// prepareRaw prepares q on the inner lib/pq connection of c, bypassing
// the wrapper, in a savepoint.
func prepareRaw(t *testing.T, c *sql.Conn, q string) error {
	t.Helper()
	ctx := context.Background()
	if _, err := c.ExecContext(ctx, "SAVEPOINT r"); err != nil {
		t.Fatal(err)
	}
	var err error
	c.Raw(func(dc any) error {
		var st driver.Stmt
		st, err = idsql.InnerConn(dc).(driver.ConnPrepareContext).PrepareContext(ctx, q)
		if err == nil {
			st.Close()
		}
		return nil
	})
	if _, err2 := c.ExecContext(ctx, "ROLLBACK TO SAVEPOINT r"); err2 != nil {
		t.Fatal(err2)
	}
	return err
}
