package dialect

import (
	"errors"
	"strings"
	"testing"
)

func TestDBDefault(t *testing.T) {
	ok := DBDefault{Table: "shop.orders", Column: "id", Key: "orders", Block: 100, MaxID: 1 << 40}
	for _, tc := range []struct {
		name    string
		d       Dialect
		s       DBDefault
		want    string // in the statement
		wantErr string // in the error
		is      error
	}{
		{"postgres", PostgreSQL, ok, `CREATE SEQUENCE IF NOT EXISTS "shop"."orders_id_idsql"`, "", nil},
		{"mysql", MySQL, ok, "DEFAULT (NEXT VALUE FOR `shop`.`orders_id_idsql`)", "", nil},
		{"sqlite", SQLite, ok, "", "no database-side key default", ErrNoDBDefault},
		{"quote in key", PostgreSQL, DBDefault{Table: "orders", Column: "id", Key: "o'rders", Block: 1, MaxID: 2}, "", "holds", nil},
		{"dollar in table", PostgreSQL, DBDefault{Table: `"a$b"`, Column: "id", Key: "k", Block: 1, MaxID: 2}, "", "holds", nil},
		{"no block", MySQL, DBDefault{Table: "orders", Column: "id", Key: "k", MaxID: 2}, "", "block of 0 keys", nil},
		{"block above MaxID", MySQL, DBDefault{Table: "orders", Column: "id", Key: "k", Block: 3, MaxID: 2}, "", "block of 3 keys", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.d.DBDefault(tc.s)
			switch {
			case tc.wantErr != "":
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || tc.is != nil && !errors.Is(err, tc.is) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !strings.Contains(got, tc.want) || strings.Contains(got, "{"):
				t.Fatalf("statement lacks %q or holds an unreplaced {name}:\n%s", tc.want, got)
			}
		})
	}
}
