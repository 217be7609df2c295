package rewrite_test

import (
	"context"
	"database/sql/driver"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

func ExampleRewriter_Plan() {
	rw, err := rewrite.New(rewrite.Config{
		Tables: []rewrite.Table{{Name: "orders", KeyColumn: "id"}},
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	plan, err := rw.Plan(ctx, `INSERT INTO orders (user_id, total) VALUES ($1, $2), ($3, $4) RETURNING id`, nil)
	if err != nil {
		panic(err)
	}
	fmt.Println(plan.Query, plan.Rows)

	args := []driver.NamedValue{{Ordinal: 1, Value: 7}, {Ordinal: 2, Value: 9.5}, {Ordinal: 3, Value: 8}, {Ordinal: 4, Value: 1.25}}
	for _, a := range plan.Args(nil, args, []int64{1001, 1002}) {
		fmt.Print(" $", a.Ordinal, "=", a.Value)
	}
	fmt.Println()

	// A statement that lists the key keeps the caller's keys, but DEFAULT,
	// NULL and 0 get generated ones, and so does a bind value that is 0 or
	// NULL when the statement runs (what ORMs send for a new row).
	plan, _ = rw.Plan(ctx, `INSERT INTO orders (id, user_id) VALUES (DEFAULT, $1), ($2, $3)`, nil)
	fmt.Println(plan.Query, plan.Rows)
	args = []driver.NamedValue{{Ordinal: 1, Value: 7}, {Ordinal: 2, Value: int64(0)}, {Ordinal: 3, Value: 8}}
	fmt.Println(plan.Need(args))
	for _, a := range plan.Args(nil, args, []int64{1003, 1004}) {
		fmt.Print(" $", a.Ordinal, "=", a.Value)
	}
	fmt.Println()

	// Statements that do not need filling pass unchanged: the plan is nil.
	plan, _ = rw.Plan(ctx, `INSERT INTO orders (id, user_id) VALUES (42, $1)`, nil)
	fmt.Println(plan == nil)

	// Output:
	// INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $5), ($3, $4, $6) RETURNING id 2
	//  $1=7 $2=9.5 $3=8 $4=1.25 $5=1001 $6=1002
	// INSERT INTO orders (id, user_id) VALUES ($4, $1), ($2, $3) 2
	// 2
	//  $1=7 $2=1004 $3=8 $4=1003
	// true
}

func ExampleRewriter_Plan_sqlite() {
	rw, _ := rewrite.New(rewrite.Config{
		Tables:  []rewrite.Table{{Name: "orders"}},
		Dialect: dialect.SQLite,
	})
	plan, _ := rw.Plan(context.Background(),
		`INSERT INTO orders (user_id) VALUES (?) ON CONFLICT (id) DO UPDATE SET total = ?`, nil)
	fmt.Println(plan.Query)
	for _, a := range plan.Args(nil, []driver.NamedValue{{Ordinal: 1, Value: "u"}, {Ordinal: 2, Value: "t"}}, []int64{42}) {
		fmt.Print(" ", a.Ordinal, "=", a.Value)
	}
	fmt.Println()
	// Output:
	// INSERT INTO orders (user_id, id) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET total = ?
	//  1=u 2=42 3=t
}

func ExampleRewriter_Plan_mysql() {
	rw, _ := rewrite.New(rewrite.Config{
		Tables:  []rewrite.Table{{Name: "orders"}},
		Dialect: dialect.MySQL,
	})
	plan, _ := rw.Plan(context.Background(),
		`INSERT INTO orders SET user_id = ?, note = 'it\'s' AS new ON DUPLICATE KEY UPDATE total = new.total + ?`, nil)
	fmt.Println(plan.Query)
	for _, a := range plan.Args(nil, []driver.NamedValue{{Ordinal: 1, Value: "u"}, {Ordinal: 2, Value: "t"}}, []int64{42}) {
		fmt.Print(" ", a.Ordinal, "=", a.Value)
	}
	fmt.Println()
	// Output:
	// INSERT INTO orders SET user_id = ?, note = 'it\'s', `id` = ? AS new ON DUPLICATE KEY UPDATE total = new.total + ?
	//  1=u 2=42 3=t
}

func ExampleError() {
	rw, _ := rewrite.New(rewrite.Config{Tables: []rewrite.Table{{Name: "orders"}}})
	cat := catalog{"orders": {{Name: "id"}, {Name: "user_id"}}}
	_, err := rw.Plan(context.Background(), `INSERT INTO orders (user_id) SELECT 1`, cat)
	fmt.Println(err)
	// Output:
	// insert into orders: INSERT ... SELECT (or another query form) cannot be filled, and key column id has no default; list id in the column list and pass a key from idsql's DB.NextID(ctx, "orders") or Keys.NextID, or give the column a default (at byte 29, near "SELECT 1")
}

type catalog map[string][]rewrite.Column

func (c catalog) Columns(_ context.Context, _, table string) ([]rewrite.Column, error) {
	return c[table], nil
}
