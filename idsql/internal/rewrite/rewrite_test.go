package rewrite

import (
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

func newTest(t testing.TB, d dialect.Dialect) *Rewriter {
	t.Helper()
	return newTestConfig(t, Config{Tables: testTables, Dialect: d})
}

func newTestConfig(t testing.TB, cfg Config) *Rewriter {
	t.Helper()
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// caseConfig is the Config a table-test case runs with.
func caseConfig(tc rwCase) Config {
	return Config{Tables: testTables, Dialect: tc.d(), NoBackslashEscapes: tc.noBackslash, ANSIQuotes: tc.ansiQuotes}
}

func TestRewrite(t *testing.T) {
	if len(rwCases) < 80 {
		t.Fatalf("only %d cases", len(rwCases))
	}
	runCases(t, rwCases)
}

// runCases runs table-test cases, each with a Rewriter of its Config.
func runCases(t *testing.T, cases []rwCase) {
	t.Helper()
	type mode struct {
		d                              dialect.Dialect
		noBackslashEscapes, ansiQuotes bool
	}
	rws := map[mode]*Rewriter{}
	for _, tc := range cases {
		cfg := caseConfig(tc)
		syn := mode{cfg.Dialect, cfg.NoBackslashEscapes, cfg.ANSIQuotes}
		r := rws[syn]
		if r == nil {
			r = newTestConfig(t, cfg)
			rws[syn] = r
		}
		t.Run(tc.name, func(t *testing.T) {
			// Twice: the second answer comes from the cache.
			for pass := 0; pass < 2; pass++ {
				p, err := r.Plan(context.Background(), tc.in, testCatalog)
				if tc.err != "" {
					var e *Error
					if !errors.As(err, &e) {
						t.Fatalf("Plan(%q) = %+v, %v; want *Error containing %q", tc.in, p, err, tc.err)
					}
					if !strings.Contains(err.Error(), tc.err) {
						t.Fatalf("Plan(%q) error\n%s\nwant it to contain\n%s", tc.in, err, tc.err)
					}
					if p != nil {
						t.Fatalf("plan with error")
					}
					continue
				}
				if err != nil {
					t.Fatalf("Plan(%q): %v", tc.in, err)
				}
				if tc.want == "" {
					if !passes(p, tc.in) {
						t.Fatalf("Plan(%q) = %q (%d rows); want pass-through", tc.in, p.Query, p.Rows)
					}
					continue
				}
				if p == nil {
					t.Fatalf("Plan(%q) = pass-through; want %q", tc.in, tc.want)
				}
				if p.Query != tc.want || p.Rows != tc.rows {
					t.Fatalf("Plan(%q)\n got %q (%d rows)\nwant %q (%d rows)", tc.in, p.Query, p.Rows, tc.want, tc.rows)
				}
				checkFilled(t, r.syn, tc.in, p)
				checkArgs(t, r, tc.in, p)
				if tc.args != "" {
					if got := argsString(p); got != tc.args {
						t.Fatalf("Plan(%q).Args: %s; want %s", tc.in, got, tc.args)
					}
				}
			}
		})
	}
}

// argsString shows the arguments p.Args builds from caller arguments p1,
// p2, ... and IDs id1, id2, ...: "p1 id1 p2".
func argsString(p *Plan) string {
	args := make([]driver.NamedValue, p.Params)
	for i := range args {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: "p" + strconv.Itoa(i+1)}
	}
	ids := make([]int64, p.Need(args))
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	var b strings.Builder
	for i, a := range p.Args(nil, args, ids) {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a.Ordinal != i+1 {
			b.WriteString("!ordinal ")
		}
		switch v := a.Value.(type) {
		case int64:
			b.WriteString("id" + strconv.FormatInt(v, 10))
		default:
			b.WriteString(v.(string))
		}
	}
	return b.String()
}

func TestNoCatalog(t *testing.T) {
	r := newTest(t, dialect.PostgreSQL)
	for _, q := range []string{`INSERT INTO orders VALUES ($1, $2, $3, $4)`, `INSERT INTO orders (user_id) SELECT 1`} {
		_, err := r.Plan(context.Background(), q, nil)
		if !errors.Is(err, ErrNoCatalog) {
			t.Fatalf("Plan(%q, nil catalog) = %v; want ErrNoCatalog", q, err)
		}
		// Not cached: a catalog later answers.
		if _, err := r.Plan(context.Background(), q, testCatalog); errors.Is(err, ErrNoCatalog) {
			t.Fatalf("ErrNoCatalog was cached")
		}
	}
}

type failingCatalog struct{ err error }

func (c failingCatalog) Columns(context.Context, string, string) ([]Column, error) { return nil, c.err }

func TestCatalogError(t *testing.T) {
	r := newTest(t, dialect.PostgreSQL)
	cause := errors.New("connection refused")
	_, err := r.Plan(context.Background(), `INSERT INTO orders VALUES ($1)`, failingCatalog{cause})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, cause) || e.Table != "orders" {
		t.Fatalf("err = %v; want *Error for orders wrapping the cause", err)
	}
	want := `insert into orders: reading the catalog (at byte 0, near "INSERT INTO orders VALUES ($1)"): connection refused`
	if err.Error() != want {
		t.Fatalf("err =\n%s\nwant\n%s", err, want)
	}
}

func TestNew(t *testing.T) {
	for _, cfg := range []Config{
		{Tables: []Table{{Name: ""}}},
		{Tables: []Table{{Name: "a"}, {Name: "a", KeyColumn: "x"}}},
		{Tables: []Table{{Name: "a"}, {Name: "A"}}, Dialect: dialect.SQLite},
		{Tables: []Table{{Name: "a"}, {Name: "A"}}, Dialect: dialect.MySQL},
		{Dialect: 7},
		{NoBackslashEscapes: true},
		{Dialect: dialect.SQLite, ANSIQuotes: true},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	if _, err := New(Config{Tables: []Table{{Name: "a"}, {Name: "A"}}}); err != nil {
		t.Errorf("a and A are different tables in PostgreSQL: %v", err)
	}
}

func nv(vals ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vals))
	for i, v := range vals {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

func TestArgs(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		style dialect.Dialect
		q     string
		args  []driver.NamedValue
		ids   []int64
		want  []driver.NamedValue
	}{
		{dialect.PostgreSQL, `INSERT INTO orders (user_id, total) VALUES ($1, $2), ($3, $4)`,
			nv("a", "b", "c", "d"), []int64{10, 11}, nv("a", "b", "c", "d", int64(10), int64(11))},
		{dialect.PostgreSQL, `INSERT INTO orders DEFAULT VALUES`, nil, []int64{7}, nv(int64(7))},
		{dialect.SQLite, `INSERT INTO orders (user_id, total) VALUES (?, ?), (?, ?)`,
			nv("a", "b", "c", "d"), []int64{10, 11}, nv("a", "b", int64(10), "c", "d", int64(11))},
		{dialect.SQLite, `INSERT INTO orders (user_id) VALUES (?) ON CONFLICT (id) DO UPDATE SET total = ? RETURNING id, ?`,
			nv("a", "b", "c"), []int64{10}, nv("a", int64(10), "b", "c")},
		{dialect.SQLite, `INSERT INTO orders (user_id) VALUES (1), (2)`, nil, []int64{1, 2}, nv(int64(1), int64(2))},
		{dialect.SQLite, `INSERT INTO orders DEFAULT VALUES ON CONFLICT DO UPDATE SET total = ?`, nv("x"), []int64{5}, nv(int64(5), "x")},
	}
	for _, c := range cases {
		r := newTest(t, c.style)
		p, err := r.Plan(ctx, c.q, testCatalog)
		if err != nil || p == nil {
			t.Fatalf("Plan(%q) = %v, %v", c.q, p, err)
		}
		got := p.Args(nil, c.args, c.ids)
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Args for %q\n got %v\nwant %v", c.q, got, c.want)
		}
		// Reusing dst does not allocate.
		buf := make([]driver.NamedValue, 0, 16)
		if n := testing.AllocsPerRun(100, func() { buf = p.Args(buf, c.args, c.ids) }); n != 0 {
			t.Errorf("Args allocates %v times with room in dst", n)
		}
	}
}

func TestArgsWrongIDs(t *testing.T) {
	r := newTest(t, dialect.PostgreSQL)
	p, _ := r.Plan(context.Background(), `INSERT INTO orders DEFAULT VALUES`, nil)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a wrong number of IDs")
		}
	}()
	p.Args(nil, nil, []int64{1, 2})
}

func TestFastRejectAllocs(t *testing.T) {
	r := newTest(t, dialect.PostgreSQL)
	q := `SELECT id, user_id, total FROM orders WHERE id = $1 AND note <> 'x'`
	if n := testing.AllocsPerRun(100, func() { r.Plan(context.Background(), q, nil) }); n != 0 {
		t.Fatalf("fast reject allocates %v times", n)
	}
}

func TestCacheBounded(t *testing.T) {
	r, err := New(Config{Tables: testTables, CacheSize: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		q := `INSERT INTO orders (user_id) VALUES (` + strings.Repeat("1+", i) + `1)`
		p, err := r.Plan(context.Background(), q, nil)
		if err != nil || p == nil || p.Rows != 1 {
			t.Fatalf("Plan: %v %v", p, err)
		}
		if n := r.n.Load(); n > 10 {
			t.Fatalf("cache holds %d entries, limit 10", n)
		}
	}
	off, _ := New(Config{Tables: testTables, CacheSize: -1})
	off.Plan(context.Background(), `INSERT INTO orders DEFAULT VALUES`, nil)
	if off.n.Load() != 0 {
		t.Fatal("disabled cache stored a plan")
	}
}

func TestConcurrent(t *testing.T) {
	r, _ := New(Config{Tables: testTables, CacheSize: 8})
	done := make(chan bool)
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- true }()
			for i := 0; i < 200; i++ {
				tc := rwCases[(i*7+g)%len(rwCases)]
				if tc.d() != dialect.PostgreSQL {
					continue
				}
				p, err := r.Plan(context.Background(), tc.in, testCatalog)
				if tc.want != "" && (err != nil || p == nil || p.Query != tc.want) {
					t.Errorf("%s: %v %v", tc.name, p, err)
					return
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
}

// checkFilled verifies the invariants of a filled statement: the original
// tokens in order, the key column and the new placeholders, and exactly
// Rows more placeholders.
func checkFilled(t testing.TB, syn syntax, in string, p *Plan) {
	t.Helper()
	if p.added() == 0 {
		if p.Query != in {
			t.Fatalf("%q -> %q: text changed without an added placeholder", in, p.Query)
		}
		return
	}
	a, b := lex(in, syn), lex(p.Query, syn)
	if a.bad >= 0 || b.bad >= 0 {
		t.Fatalf("lex: %q %q", a.why, b.why)
	}
	params := func(l lexResult, q string) (n int) {
		for _, tk := range l.toks {
			if tk.kind == tParam {
				n++
			}
		}
		return n
	}
	if p.slots != nil {
		// A zero-filling plan replaces tokens (DEFAULT, NULL, 0, $n) by
		// placeholders, one for one, and changes nothing else.
		if len(a.toks) != len(b.toks) {
			t.Fatalf("%q -> %q: %d tokens, want %d", in, p.Query, len(b.toks), len(a.toks))
		}
		replaced := 0
		for i, tk := range a.toks {
			s, r := in[tk.start:tk.end], p.Query[b.toks[i].start:b.toks[i].end]
			if s == r {
				continue
			}
			if b.toks[i].kind != tParam || !(tk.kind == tParam || tk.kind == tNumber || foldEq(s, "default") || foldEq(s, "null")) {
				t.Fatalf("%q -> %q: token %q became %q", in, p.Query, s, r)
			}
			replaced++
		}
		if replaced != p.added() {
			t.Fatalf("%q -> %q: %d tokens replaced, %d placeholders added", in, p.Query, replaced, p.added())
		}
		return
	}
	if got, want := params(b, p.Query), params(a, in)+p.Rows; got != want {
		t.Fatalf("%q -> %q: %d placeholders, want %d", in, p.Query, got, want)
	}
	// The original tokens are a subsequence of the new ones, except the
	// DEFAULT VALUES that becomes (key) VALUES (...).
	j := 0
	for i, tk := range a.toks {
		s := in[tk.start:tk.end]
		if foldEq(s, "default") && i+1 < len(a.toks) && foldEq(in[a.toks[i+1].start:a.toks[i+1].end], "values") &&
			!strings.Contains(in[:tk.start], "(") {
			continue
		}
		for j < len(b.toks) && p.Query[b.toks[j].start:b.toks[j].end] != s {
			j++
		}
		if j == len(b.toks) {
			t.Fatalf("%q -> %q: token %q lost", in, p.Query, s)
		}
		j++
	}
	key := p.Table.key()
	if !strings.Contains(p.Query, key) {
		t.Fatalf("%q -> %q: key column %s missing", in, p.Query, key)
	}
}

// checkArgs verifies, for ? placeholders, that Plan.Args puts every ID at
// a placeholder the rewrite added and keeps the caller's arguments at
// theirs. The caller's ?s of in are replaced by string literals 'p1',
// 'p2', ...: planning that text adds the same placeholders, now the only
// ones. Filling those with 'ID', and filling p.Query's with what Args
// returns, must give the same text.
func checkArgs(t testing.TB, r *Rewriter, in string, p *Plan) {
	t.Helper()
	if !p.positional || p.slots != nil {
		return // zero-filling plans: TestZeroFillArgs
	}
	subst := func(q string, val func(i int) string) string {
		var b strings.Builder
		last, i := 0, 0
		for _, tk := range lex(q, r.syn).toks {
			if tk.kind == tParam {
				b.WriteString(q[last:tk.start])
				b.WriteString(val(i))
				last, i = tk.end, i+1
			}
		}
		return b.String() + q[last:]
	}
	marked := subst(in, func(i int) string { return "'p" + strconv.Itoa(i+1) + "'" })
	mp, err := r.Plan(context.Background(), marked, testCatalog)
	if err != nil || mp == nil || mp.Rows != p.Rows || mp.Params != 0 {
		t.Fatalf("%q with literals for its ?s: plan %+v, %v; want %d rows", marked, mp, err, p.Rows)
	}
	want := subst(mp.Query, func(int) string { return "'ID'" })

	args := make([]driver.NamedValue, p.Params)
	for i := range args {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: "'p" + strconv.Itoa(i+1) + "'"}
	}
	vals := p.Args(nil, args, make([]int64, p.Rows))
	got := subst(p.Query, func(i int) string {
		if _, ok := vals[i].Value.(int64); ok {
			return "'ID'"
		}
		return vals[i].Value.(string)
	})
	if got != want {
		t.Fatalf("%q -> %q: IDs misplaced among the arguments:\n got %s\nwant %s", in, p.Query, got, want)
	}
}

func TestKeyListed(t *testing.T) {
	r := newTest(t, dialect.PostgreSQL)
	tests := []struct {
		q    string
		want string // "" means not a key-listed INSERT into a configured table
	}{
		{`INSERT INTO orders (id, user_id) VALUES ($1, $2)`, "orders"},
		{`insert into "Items" ("ItemID", name) values ($1, $2);`, "Items"},
		{`INSERT INTO shop.users (user_id, email) VALUES ($1, $2) RETURNING user_id`, "shop.users"},
		{`INSERT INTO orders (user_id) VALUES ($1)`, ""},
		{`INSERT INTO other (id) VALUES ($1)`, ""},
		{`SELECT 1`, ""},
		{`INSERT INTO orders (id) VALUES ($1); INSERT INTO orders (id) VALUES ($2)`, ""},
		{`INSERT INTO orders (id) SELECT 1`, ""},
		{`INSERT INTO orders (id) VALUES ('unterminated)`, ""},
	}
	for _, tt := range tests {
		tbl, ok := r.KeyListed(tt.q)
		got := ""
		if ok {
			got = tbl.String()
		}
		if got != tt.want {
			t.Errorf("KeyListed(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// passes reports whether p sends in unchanged: no plan, or a plan that only
// replaces zero key arguments in place.
func passes(p *Plan, in string) bool {
	return p == nil || p.Query == in && p.added() == 0
}

// TestPlanUpsert: a plan says whether its statement may update an existing
// row instead of inserting (the row then keeps its key).
func TestPlanUpsert(t *testing.T) {
	for _, tc := range []struct {
		d      dialect.Dialect
		in     string
		upsert bool
	}{
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES ($1)`, false},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES ($1) ON CONFLICT DO NOTHING`, false},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES ($1) ON CONFLICT (user_id) DO UPDATE SET user_id = excluded.user_id`, true},
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $2) ON CONFLICT ON CONSTRAINT c DO UPDATE SET user_id = 1`, true},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES ($1) RETURNING id`, false},
		{dialect.SQLite, `INSERT INTO orders (user_id) VALUES (?) ON CONFLICT (user_id) DO UPDATE SET user_id = 2`, true},
		{dialect.SQLite, `INSERT OR REPLACE INTO orders (user_id) VALUES (?)`, false},
		{dialect.MySQL, `INSERT INTO orders (user_id) VALUES (?) ON DUPLICATE KEY UPDATE user_id = VALUES(user_id)`, true},
		{dialect.MySQL, `INSERT INTO orders SET user_id = ? ON DUPLICATE KEY UPDATE user_id = 1`, true},
		{dialect.MySQL, `INSERT IGNORE INTO orders (user_id) VALUES (?)`, false},
		{dialect.MySQL, `REPLACE INTO orders (user_id) VALUES (?)`, false},
	} {
		p, err := newTest(t, tc.d).Plan(context.Background(), tc.in, nil)
		if err != nil || p == nil {
			t.Fatalf("%s: %v, %v", tc.in, p, err)
		}
		if p.Upsert != tc.upsert {
			t.Errorf("%s: Upsert %v, want %v", tc.in, p.Upsert, tc.upsert)
		}
	}
}
