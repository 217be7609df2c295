package rewrite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

// TestZeroFillArgs checks the execution-time half of filling listed keys:
// which bind values count as "no key", how many keys an execution takes,
// and where Args puts them.
func TestZeroFillArgs(t *testing.T) {
	var nilPtr *int64
	five := int64(5)
	for _, v := range []any{nil, int64(0), 0, uint64(0), int32(0), 0.0, nilPtr, sql.NullInt64{}, &sql.NullInt64{}, new(int64)} {
		if !IsZeroKey(v) {
			t.Errorf("IsZeroKey(%T %v) = false", v, v)
		}
	}
	for _, v := range []any{int64(5), uint64(7), &five, sql.NullInt64{Int64: 3, Valid: true}, "0", []byte("0"), true} {
		if IsZeroKey(v) {
			t.Errorf("IsZeroKey(%T %v) = true", v, v)
		}
	}

	for _, c := range []struct {
		dialect dialect.Dialect
		q       string
		args    []any
		need    int
		want    string // the arguments Args builds, IDs as idN
	}{
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $2), ($3, $4)`, []any{int64(0), 1, int64(9), 2}, 1, "id1 1 9 2"},
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $2), ($3, $4)`, []any{nil, 1, uint64(0), 2}, 2, "id1 1 id2 2"},
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $2), ($3, $4)`, []any{int64(8), 1, int64(9), 2}, 0, "8 1 9 2"},
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($2, $1), (DEFAULT, $1)`, []any{1, int64(0)}, 2, "1 id1 id2"},
		// $1 is also user_id: the key goes to an added placeholder, $1 keeps 0.
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $1)`, []any{int64(0)}, 1, "0 id1"},
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, $1)`, []any{int64(4)}, 0, "4 4"},
		// $1 twice as a key: the first in place, the second added.
		{dialect.PostgreSQL, `INSERT INTO orders (id, user_id) VALUES ($1, 1), ($1, 2)`, []any{int64(0)}, 2, "id1 id2"},
		{dialect.MySQL, `INSERT INTO orders (id, user_id) VALUES (?, ?), (DEFAULT, ?), (?, ?)`, []any{int64(0), 1, 2, int64(6), 3}, 2, "id1 1 id2 2 6 3"},
		{dialect.MySQL, `INSERT INTO orders (user_id, id) VALUES (?, NULL), (?, ?)`, []any{1, 2, nil}, 2, "1 id1 2 id2"},
		{dialect.MySQL, `INSERT INTO orders SET user_id = ?, id = ? ON DUPLICATE KEY UPDATE note = ?`, []any{1, int64(0), "n"}, 1, "1 id1 n"},
		{dialect.SQLite, `INSERT INTO orders (id, user_id) VALUES (0, ?), (?, ?)`, []any{1, int64(3), 2}, 1, "id1 1 3 2"},
	} {
		r := newTest(t, c.dialect)
		p, err := r.Plan(context.Background(), c.q, testCatalog)
		if err != nil || p == nil {
			t.Fatalf("%s: Plan(%q) = %v, %v", c.dialect, c.q, p, err)
		}
		args := make([]driver.NamedValue, len(c.args))
		for i, a := range c.args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
		}
		if got := p.Need(args); got != c.need {
			t.Errorf("%s: %q with %v: Need = %d, want %d", c.dialect, c.q, c.args, got, c.need)
			continue
		}
		ids := make([]int64, c.need)
		for i := range ids {
			ids[i] = -int64(i + 1) // negative: told apart from the caller's values
		}
		var b []string
		for i, a := range p.Args(nil, args, ids) {
			if a.Ordinal != i+1 {
				t.Errorf("%s: %q: ordinal %d at %d", c.dialect, c.q, a.Ordinal, i)
			}
			if id, ok := a.Value.(int64); ok && id < 0 {
				b = append(b, fmt.Sprint("id", -id))
			} else {
				b = append(b, fmt.Sprint(a.Value))
			}
		}
		if got := strings.Join(b, " "); got != c.want {
			t.Errorf("%s: %q -> %q with %v: Args %s, want %s", c.dialect, c.q, p.Query, c.args, got, c.want)
		}
	}
}

// TestKeepZero checks that a table configured to keep zero keys passes
// statements listing the key unchanged, as before fill_zero.
func TestKeepZero(t *testing.T) {
	r := newTestConfig(t, Config{Tables: []Table{{Name: "orders", KeepZero: true}}})
	for _, q := range []string{
		`INSERT INTO orders (id, user_id) VALUES (DEFAULT, $1)`,
		`INSERT INTO orders (id, user_id) VALUES ($1, $2)`,
		`INSERT INTO orders VALUES (0, $1)`,
	} {
		if p, err := r.Plan(context.Background(), q, testCatalog); p != nil || err != nil {
			t.Errorf("KeepZero: Plan(%q) = %+v, %v; want pass-through", q, p, err)
		}
	}
	if p, err := r.Plan(context.Background(), `INSERT INTO orders (user_id) VALUES ($1)`, testCatalog); p == nil || err != nil {
		t.Errorf("KeepZero: a statement without the key is not filled: %v, %v", p, err)
	}
}
