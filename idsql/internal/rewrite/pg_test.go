package rewrite

import (
	"bufio"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/pgtest"

	"github.com/idsql/idsql/internal/dialect"
)

// pgSchema creates the tables the test statements use; keep in step with
// testCatalog. public.orders and shop.users are created inside the test's
// transaction, which is rolled back.
const pgSchema = `
CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint, total numeric, note text, "we""ird (x)" text);
CREATE TABLE "Items" ("ItemID" bigint PRIMARY KEY, name text);
CREATE TABLE users (user_id bigint PRIMARY KEY, email text);
CREATE TABLE events (id bigserial PRIMARY KEY, kind text);
CREATE TABLE ledger (kind text, amount int, id bigint PRIMARY KEY, memo text);
CREATE TABLE public.orders (id bigint PRIMARY KEY, user_id bigint, total numeric, note text, "we""ird (x)" text);
CREATE SCHEMA shop;
CREATE TABLE shop.users (user_id bigint PRIMARY KEY, email text);
`

// pgCatalog reads columns from PostgreSQL's catalog: the way a wrapper can
// implement Catalog.
type pgCatalog struct {
	q interface {
		QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	}
}

func (c pgCatalog) Columns(ctx context.Context, schema, table string) ([]Column, error) {
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
	var cols []Column
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.HasDefault); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// fuzzCorpus returns the inputs stored under testdata/fuzz/FuzzRewrite.
func fuzzCorpus(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "fuzz", "FuzzRewrite", "*"))
	var out []string
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if s, ok := strings.CutPrefix(line, "string("); ok {
				if u, err := strconv.Unquote(strings.TrimSuffix(s, ")")); err == nil {
					out = append(out, u)
				}
			}
		}
		fh.Close()
	}
	return out
}

// TestPostgresAccepts prepares, on a real PostgreSQL, every statement of the
// table tests that the test schema supports, and every statement filled from
// the fuzz seed and stored corpora: the originals of pass-through and refused
// statements (so the corpus is real SQL) and the rewritten statements (so
// every rewrite is accepted). It also checks that the catalog read from
// PostgreSQL gives the same decisions as the test catalog.
func TestPostgresAccepts(t *testing.T) {
	db, _ := pgtest.Open(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, pgSchema); err != nil {
		t.Fatalf("schema: %v", err)
	}
	prepare := func(q string) error {
		if _, err := tx.ExecContext(ctx, "SAVEPOINT s"); err != nil {
			t.Fatal(err)
		}
		st, err := tx.PrepareContext(ctx, q)
		if err == nil {
			st.Close()
			_, err = tx.ExecContext(ctx, "RELEASE SAVEPOINT s")
			return err
		}
		if _, err2 := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT s"); err2 != nil {
			t.Fatal(err2)
		}
		return err
	}

	r := newTest(t, dialect.PostgreSQL)
	cat := pgCatalog{tx}
	checked := 0
	for _, tc := range rwCases {
		if tc.d() != dialect.PostgreSQL || tc.noPG {
			continue
		}
		if err := prepare(tc.in); err != nil {
			t.Errorf("%s: PostgreSQL rejects the original %q: %v", tc.name, tc.in, err)
		}
		p, err := r.Plan(ctx, tc.in, cat)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: with the PostgreSQL catalog: %v; want error %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: with the PostgreSQL catalog: %v", tc.name, err)
		case tc.want == "" && !passes(p, tc.in), tc.want != "" && (p == nil || p.Query != tc.want):
			t.Errorf("%s: with the PostgreSQL catalog: plan %+v; want %q", tc.name, p, tc.want)
		}
		if tc.want != "" {
			if err := prepare(tc.want); err != nil {
				t.Errorf("%s: PostgreSQL rejects the rewrite %q: %v", tc.name, tc.want, err)
			}
			checked++
		}
	}
	// Filled statements of the stored fuzz corpus.
	for _, q := range fuzzCorpus(t) {
		p, err := r.Plan(ctx, q, testCatalog)
		if err != nil || p == nil {
			continue
		}
		if prepare(q) != nil {
			continue // the original is not valid here either
		}
		if err := prepare(p.Query); err != nil {
			t.Errorf("PostgreSQL rejects the rewrite of fuzz input %q: %q: %v", q, p.Query, err)
		}
		checked++
	}
	t.Logf("%d rewritten statements prepared", checked)
}

// TestPostgresExecute runs filled statements with generated IDs and checks
// the rows and RETURNING id.
func TestPostgresExecute(t *testing.T) {
	db, _ := pgtest.Open(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, `CREATE TABLE orders (id bigint PRIMARY KEY, user_id bigint, total numeric, note text)`); err != nil {
		t.Fatal(err)
	}
	r := newTest(t, dialect.PostgreSQL)
	p, err := r.Plan(ctx, `INSERT INTO orders (user_id, note) VALUES ($1, 'a'), ($2, $$b$$) RETURNING id, user_id`, nil)
	if err != nil || p == nil {
		t.Fatalf("Plan: %v %v", p, err)
	}
	st, err := db.PrepareContext(ctx, p.Query)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for exec := int64(0); exec < 3; exec++ {
		args := p.Args(nil, nv(int64(1), int64(2)), []int64{1000 + 2*exec, 1001 + 2*exec})
		vals := make([]any, len(args))
		for i, a := range args {
			vals[i] = a.Value
		}
		rows, err := st.QueryContext(ctx, vals...)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for rows.Next() {
			var id, uid int64
			if err := rows.Scan(&id, &uid); err != nil {
				t.Fatal(err)
			}
			got = append(got, id, uid)
		}
		rows.Close()
		want := []int64{1000 + 2*exec, 1, 1001 + 2*exec, 2}
		if len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Fatalf("execution %d returned %v, want %v", exec, got, want)
		}
	}
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(DISTINCT id) FROM orders`).Scan(&n); err != nil || n != 6 {
		t.Fatalf("distinct ids = %d, %v; want 6", n, err)
	}
}
