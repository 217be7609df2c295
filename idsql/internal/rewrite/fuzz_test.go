package rewrite

import (
	"context"
	"strconv"
	"testing"
)

// FuzzRewrite checks, for any text: Plan does not panic; a filled statement
// differs from its input, keeps the input's tokens in order, names the key
// column, has exactly Rows more placeholders (numbered from Params+1 for
// PostgreSQL), and is itself passed through unchanged when planned again.
// Statements not filled are sent byte-for-byte by construction (nil Plan).
func FuzzRewrite(f *testing.F) {
	for _, tc := range rwCases {
		f.Add(tc.in, tc.dialect == SQLite)
	}
	rws := map[bool]*Rewriter{false: newTest(f, PostgreSQL), true: newTest(f, SQLite)}
	f.Fuzz(func(t *testing.T, q string, sqlite bool) {
		d := PostgreSQL
		if sqlite {
			d = SQLite
		}
		r := rws[sqlite]
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
		if p.Query == q {
			t.Fatalf("filled plan with unchanged text %q", q)
		}
		if p.Rows < 1 {
			t.Fatalf("filled plan with %d rows for %q", p.Rows, q)
		}
		checkFilled(t, d, q, p)
		if d == PostgreSQL {
			hi := 0
			for _, tk := range lex(p.Query, d).toks {
				if tk.kind == tParam {
					n, _ := strconv.Atoi(p.Query[tk.start+1 : tk.end])
					hi = max(hi, n)
				}
			}
			if hi != p.Params+p.Rows {
				t.Fatalf("%q -> %q: highest placeholder $%d, want $%d", q, p.Query, hi, p.Params+p.Rows)
			}
		} else if len(p.at) != p.Rows {
			t.Fatalf("%q: %d ID positions for %d rows", q, len(p.at), p.Rows)
		}
		again, err := r.Plan(context.Background(), p.Query, testCatalog)
		if err != nil || again != nil {
			t.Fatalf("%q -> %q planned again: %+v, %v; want pass-through", q, p.Query, again, err)
		}
	})
}
