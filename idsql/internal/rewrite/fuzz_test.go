package rewrite

import (
	"context"
	"database/sql/driver"
	"slices"
	"strconv"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

// fuzzConfigs are the configurations FuzzRewrite runs, chosen by its second
// argument.
var fuzzConfigs = []Config{
	{Tables: testTables, Dialect: dialect.PostgreSQL},
	{Tables: testTables, Dialect: dialect.SQLite},
	{Tables: testTables, Dialect: dialect.MySQL},
	{Tables: testTables, Dialect: dialect.MySQL, NoBackslashEscapes: true},
	{Tables: testTables, Dialect: dialect.MySQL, ANSIQuotes: true},
}

// fuzzConfig returns the index in fuzzConfigs of a table-test case's Config.
func fuzzConfig(tc rwCase) uint8 {
	cfg := caseConfig(tc)
	for i, c := range fuzzConfigs {
		if c.Dialect == cfg.Dialect && c.NoBackslashEscapes == cfg.NoBackslashEscapes && c.ANSIQuotes == cfg.ANSIQuotes {
			return uint8(i)
		}
	}
	panic("rewrite: no fuzz configuration for case " + tc.name)
}

// FuzzRewrite checks, for any text in every dialect: Plan does not panic; a
// filled statement differs from its input, keeps the input's tokens in
// order, names the key column, has exactly Rows more placeholders (numbered
// from Params+1 for PostgreSQL; for ?, Args puts the IDs at exactly the added
// ones), and is itself passed through unchanged when planned again. Statements not filled are
// sent byte-for-byte by construction (nil Plan).
func FuzzRewrite(f *testing.F) {
	for _, cases := range [][]rwCase{rwCases, mysqlCases} {
		for _, tc := range cases {
			f.Add(tc.in, fuzzConfig(tc))
			if tc.dialect != dialect.MySQL {
				f.Add(tc.in, fuzzConfig(rwCase{dialect: dialect.MySQL})) // the same text read as MySQL
			}
		}
	}
	rws := make([]*Rewriter, len(fuzzConfigs))
	shards := make([]*Rewriter, len(fuzzConfigs)) // the same, every table's shard column user_id
	for i, cfg := range fuzzConfigs {
		rws[i] = newTestConfig(f, cfg)
		cfg.Tables = slices.Clone(cfg.Tables)
		for j := range cfg.Tables {
			cfg.Tables[j].ShardColumn = "user_id"
		}
		shards[i] = newTestConfig(f, cfg)
	}
	f.Fuzz(func(t *testing.T, q string, config uint8) {
		r := rws[int(config)%len(rws)]
		p, err := r.Plan(context.Background(), q, testCatalog)
		if err != nil {
			if p != nil {
				t.Fatalf("plan and error for %q", q)
			}
			return
		}
		if p == nil {
			return
		}
		if p.Query == q && p.added() > 0 {
			t.Fatalf("filled plan with unchanged text %q", q)
		}
		if p.Rows < 1 {
			t.Fatalf("filled plan with %d rows for %q", p.Rows, q)
		}
		checkFilled(t, r.syn, q, p)
		checkArgs(t, r, q, p)
		if p.slots != nil {
			// Keys given by the statement: any mix of zero and non-zero
			// arguments takes Need keys and gives every placeholder one
			// argument.
			args := make([]driver.NamedValue, p.Params)
			for i := range args {
				args[i].Value = int64((i + len(q)) % 2)
			}
			ids := make([]int64, p.Need(args))
			if got := len(p.Args(nil, args, ids)); got != p.Params+p.added() {
				t.Fatalf("%q -> %q: %d arguments, want %d", q, p.Query, got, p.Params+p.added())
			}
		}
		if r.syn.Bind == dialect.Dollar {
			hi := 0
			for _, tk := range lex(p.Query, r.syn).toks {
				if tk.kind == tParam {
					n, _ := strconv.Atoi(p.Query[tk.start+1 : tk.end])
					hi = max(hi, n)
				}
			}
			if p.added() > 0 && hi != p.Params+p.added() {
				t.Fatalf("%q -> %q: highest placeholder $%d, want $%d", q, p.Query, hi, p.Params+p.added())
			}
		} else if len(p.at) != p.added() {
			t.Fatalf("%q: %d ID positions for %d rows", q, len(p.at), p.Rows)
		}
		again, err := r.Plan(context.Background(), p.Query, testCatalog)
		if err != nil || !passes(again, p.Query) {
			t.Fatalf("%q -> %q planned again: %+v, %v; want pass-through", q, p.Query, again, err)
		}
		// Shard columns: the same plan, and one value per row, arguments
		// within the caller's.
		sp, err := shards[int(config)%len(shards)].Plan(context.Background(), q, testCatalog)
		if err == nil {
			if sp == nil || sp.Query != p.Query || len(sp.Shards) != p.Rows {
				t.Fatalf("%q: with a shard column: %+v; want %q and a shard value for each of %d rows", q, sp, p.Query, p.Rows)
			}
			for _, v := range sp.Shards {
				if v.Kind == ValueArg && (v.Arg < 0 || v.Arg >= p.Params) {
					t.Fatalf("%q: shard value from argument %d of %d", q, v.Arg, p.Params)
				}
			}
		}
	})
}
