package dialect

import (
	"slices"
	"testing"
)

func TestSplitQualified(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string // nil: not a valid name
	}{
		{"orders", []string{"orders"}},
		{"shop.orders", []string{"shop", "orders"}},
		{"Audit", []string{"Audit"}},
		{`"Mixed Case"`, []string{"Mixed Case"}},
		{`shop."Order Items"`, []string{"shop", "Order Items"}},
		{`"my.schema"."t"`, []string{"my.schema", "t"}},
		{`"a""b"`, []string{`a"b`}},
		{`_x1.y_2`, []string{"_x1", "y_2"}},
		{"", nil},
		{"a.b.c", nil},
		{"1abc", nil},
		{`"unterminated`, nil},
		{`""`, nil},
		{`"a" b`, nil},
		{"a.", nil},
		{".a", nil},
		{"a b", nil},
		{`"a"."b"."c"`, nil},
	} {
		got, ok := SplitQualified(c.in)
		if ok != (c.want != nil) || !slices.Equal(got, c.want) {
			t.Errorf("SplitQualified(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	if got := PostgreSQL.QuoteQualified(`shop."Order Items"`); got != `"shop"."Order Items"` {
		t.Errorf("QuoteQualified = %s", got)
	}
	if got := MySQL.QuoteQualified(`"a""b"`); got != "`a\"b`" {
		t.Errorf("MySQL QuoteQualified = %s", got)
	}
}
