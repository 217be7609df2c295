package rewrite

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

// shardTest returns a rewriter of the test tables, each with column as
// its ShardColumn.
func shardTest(t *testing.T, d dialect.Dialect, column string) *Rewriter {
	tables := slices.Clone(testTables)
	for i := range tables {
		tables[i].ShardColumn = column
	}
	return newTestConfig(t, Config{Tables: tables, Dialect: d})
}

func TestPlanShards(t *testing.T) {
	arg := func(i int) Value { return Value{Kind: ValueArg, Arg: i} }
	num := func(v int64) Value { return Value{Kind: ValueInt, Int: v} }
	str := func(s string) Value { return Value{Kind: ValueString, Str: s} }
	for _, tc := range []struct {
		d     dialect.Dialect
		query string
		want  []Value
		err   string // part of the error, when one is expected
	}{
		{dialect.PostgreSQL, `INSERT INTO orders (user_id, total) VALUES ($1, $2)`, []Value{arg(0)}, ""},
		{dialect.PostgreSQL, `INSERT INTO orders (total, user_id) VALUES ($1, $2), ($3, 7), ($4, -3), ($5, 'a''b'), (f($6), $2)`,
			[]Value{arg(1), num(7), num(-3), str("a'b"), arg(1)}, ""},
		{dialect.PostgreSQL, `insert into orders ("user_id", note) values ($2, $1) returning id;`, []Value{arg(1)}, ""},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) OVERRIDING SYSTEM VALUE VALUES ($1)`, []Value{arg(0)}, ""},
		{dialect.PostgreSQL, `INSERT INTO orders (total) VALUES ($1)`, nil, "does not set column user_id"},
		{dialect.PostgreSQL, `INSERT INTO orders DEFAULT VALUES`, nil, "does not set column user_id"},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES ($1 + 1)`, nil, "is an expression"},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES (NULL)`, nil, `is "NULL"`},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES (E'x\n')`, nil, "bind parameter"},
		{dialect.PostgreSQL, `INSERT INTO orders (user_id) VALUES (1.5)`, nil, "not a 64-bit integer"},
		{dialect.MySQL, "INSERT INTO orders (total, `user_id`) VALUES (?, ?), (?, 'x'), (?, ?)", []Value{arg(1), str("x"), arg(4)}, ""},
		{dialect.MySQL, `INSERT INTO orders (user_id) VALUES ("dq")`, []Value{str("dq")}, ""},
		{dialect.MySQL, `INSERT INTO orders SET total = ?, user_id = ?`, []Value{arg(1)}, ""},
		{dialect.MySQL, `INSERT INTO orders (user_id, total) VALUES ROW(?, ?), ROW(5, ?)`, []Value{arg(0), num(5)}, ""},
		{dialect.MySQL, `INSERT INTO orders SET total = ?`, nil, "does not set column user_id"},
		{dialect.MySQL, `INSERT INTO orders (user_id) VALUES ('a\'b')`, nil, "escapes"},
		{dialect.SQLite, `INSERT INTO orders (x, user_id) VALUES (?, ?)`, []Value{arg(1)}, ""},
	} {
		p, err := shardTest(t, tc.d, "user_id").Plan(context.Background(), tc.query, nil)
		var got []Value
		if p != nil {
			got = p.Shards
		}
		switch {
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), "orders")):
			t.Errorf("%s: %v, %v; want an error naming orders with %q", tc.query, got, err, tc.err)
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.want)):
			t.Errorf("%s: %v, %v; want %v", tc.query, got, err, tc.want)
		}
	}
}

// Without a column list the rewriter fills from the catalog's column order,
// but the shard column is not read from such a statement.
func TestPlanShardsNoColumnList(t *testing.T) {
	q := `INSERT INTO ledger VALUES ($1, $2)`
	if p, err := newTest(t, dialect.PostgreSQL).Plan(context.Background(), q, testCatalog); err != nil || p == nil || p.Shards != nil {
		t.Fatalf("Plan without a shard column: %v, %v", p, err)
	}
	p, err := shardTest(t, dialect.PostgreSQL, "amount").Plan(context.Background(), q, testCatalog)
	if p != nil || err == nil || !strings.Contains(err.Error(), "without a column list") || !strings.Contains(err.Error(), "ledger") {
		t.Fatalf("Plan: %v, %v", p, err)
	}
}
