package dialect

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	_ "github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// dbShapes are spaces and shapes the database-side defaults apply: a
// snowflake layout's time field reversed (leaf's and js53's), a whole
// space reversed, and hashed shapes of several widths (one under the
// spread's first name, shard).
var dbShapes = []struct {
	s  shape.Shape
	sp shape.Space
}{
	{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41}},
	{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 53, Low: 11, Width: 42}},
	{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63}},
	{shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 53}},
	{shape.Shape{Spread: shape.Hashed, Bits: 1}, shape.Space{Bits: 63}},
	{shape.Shape{Spread: shape.Hashed, Bits: 6}, shape.Space{Bits: 63}},
	{shape.Shape{Spread: shape.Hashed, Bits: 10}, shape.Space{Bits: 63}},
	{shape.Shape{Spread: shape.Hashed, Bits: 16}, shape.Space{Bits: 63}},
	{shape.Shape{Spread: shape.Shard, Bits: 4}, shape.Space{Bits: 20}},
}

// keyShapeOf is f as a KeyShape, as idsql's Migrate passes it (the
// dialect imports no idsql package; the test compares its SQL with f).
func keyShapeOf(f shape.Func) KeyShape {
	s, sp := f.Shape(), f.Space()
	k := KeyShape{Name: s.String(), Reverse: s.Spread == shape.Reverse, SpaceBits: sp.Bits, Low: sp.Low, Width: sp.Width, MaxKey: f.MaxKey()}
	if s.IsHashed() {
		k.ShardBits = s.Bits
	}
	return k
}

// shapeKeys are keys of f to shape: the ends of its range, powers of two
// and their neighbours, and random keys.
func shapeKeys(f shape.Func) []int64 {
	keys := []int64{1, 2, 3, f.MaxKey() - 1, f.MaxKey()}
	for b := 1; b < 63 && int64(1)<<b < f.MaxKey(); b++ {
		keys = append(keys, int64(1)<<b-1, int64(1)<<b, int64(1)<<b+1)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		keys = append(keys, 1+r.Int64N(f.MaxKey()))
	}
	return keys
}

// TestDBShapeMatchesGo computes every shape of dbShapes in PostgreSQL's
// idsql_shape_key and MariaDB's trigger statements (here inside a
// function) for many keys and compares each with shape.Func.Apply; keys
// outside what a shape takes fail in both databases.
func TestDBShapeMatchesGo(t *testing.T) {
	ctx := context.Background()
	pg, _ := pgtest.Open(t)
	if _, err := pg.ExecContext(ctx, "DO $do$ BEGIN "+pgShapeFunction+"; END $do$"); err != nil {
		t.Fatal(err)
	}
	my, _ := mysqltest.Open(t)
	for n, c := range dbShapes {
		f, err := shape.New(c.s, c.sp)
		if err != nil {
			t.Fatal(err)
		}
		ks := keyShapeOf(f)
		t.Run(shapeTag(ks), func(t *testing.T) {
			keys := shapeKeys(f)
			var list []string
			for _, k := range keys {
				list = append(list, strconv.FormatInt(k, 10))
			}
			call := pgShapeCall(ks, "k", "t")
			check := func(db *sql.DB, q string, arg func(string) string) {
				t.Helper()
				rows, err := db.QueryContext(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				defer rows.Close()
				seen := 0
				for rows.Next() {
					var k, got int64
					if err := rows.Scan(&k, &got); err != nil {
						t.Fatal(err)
					}
					want, err := f.Apply(k)
					if err != nil || got != want {
						t.Errorf("key %d: the database shapes it to %d, Go to %d (%v)", k, got, want, err)
					}
					seen++
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if seen != len(keys) {
					t.Fatalf("%d keys shaped, want %d", seen, len(keys))
				}
				bads := []int64{0, -1}
				if f.MaxKey() < math.MaxInt64 {
					bads = append(bads, f.MaxKey()+1)
				}
				for _, bad := range bads {
					var got int64
					err := db.QueryRowContext(ctx, "SELECT "+arg(strconv.FormatInt(bad, 10))).Scan(&got)
					if err == nil || !strings.Contains(err.Error(), "is outside 1..") {
						t.Errorf("key %d: shaped to %d, %v; want an error naming the range", bad, got, err)
					}
				}
			}
			check(pg, "SELECT k, "+call+" FROM unnest('{"+strings.Join(list, ",")+"}'::bigint[]) k",
				func(k string) string { return pgShapeCall(ks, k+"::bigint", "t") })

			fn := fmt.Sprintf("idsql_test_shape_%d", n)
			body := "CREATE OR REPLACE FUNCTION " + fn + "(k0 BIGINT) RETURNS BIGINT DETERMINISTIC NO SQL\nBEGIN\n" +
				mariaShapeDecl + "\tSET k = k0;\n" + mariaShape(ks, "t") + "\tRETURN k;\nEND"
			if _, err := my.ExecContext(ctx, body); err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			check(my, "SELECT k, "+fn+"(k) FROM (SELECT "+strings.Join(list, " AS k UNION ALL SELECT ")+" AS k) ks",
				func(k string) string { return fn + "(" + k + ")" })
		})
	}
}
