package keyid_test

import (
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// shopFile is what idsqlgen's idsqlFile returns for a three-table file.
func shopFile() *keyid.File {
	return &keyid.File{
		Package: "shop",
		Name:    "idsql_gen.go",
		Layout:  snowflake.Leaf,
		Tables: []keyid.Table{
			{Name: "orders", Type: "OrderID", Strategy: "snowflake"},
			{Name: "public.order_items", Type: "OrderItemID", Strategy: "snowflake"},
			{Name: "users", Type: "UserID", Strategy: "segment", GoName: "UserID"},
		},
	}
}

func shopConfig() *keyset.Config {
	return &keyset.Config{Namespace: "shop", Tables: map[string]keyset.TableConfig{
		"orders":             {Strategy: keyset.Snowflake},
		"public.order_items": {Strategy: keyset.Snowflake},
		"users":              {Strategy: keyset.Segment, GoName: "UserID"},
	}}
}

func TestCheck(t *testing.T) {
	if err := shopFile().Check(shopConfig()); err != nil {
		t.Fatalf("Check of the same configuration: %v", err)
	}
	const prefix = "shop: idsql_gen.go does not match the configuration; run go generate: "
	for _, tc := range []struct {
		name   string
		change func(*keyset.Config)
		want   []string
	}{
		{"layout", func(c *keyset.Config) { c.Layout = keyset.LayoutConfig{Preset: "uid32"} },
			[]string{"layout is 32/18/13 bits of 1s since 2016-05-20T00:00:00Z, generated for 41/10/12 bits of 1ms since 2010-11-04T01:42:54.657Z"}},
		{"removed", func(c *keyset.Config) { delete(c.Tables, "users") }, []string{`table "users" is no longer configured`}},
		{"added", func(c *keyset.Config) { c.Tables["refunds"] = keyset.TableConfig{Strategy: keyset.Segment} },
			[]string{`table "refunds" is configured but has no generated type`}},
		{"strategy", func(c *keyset.Config) { c.Tables["orders"] = keyset.TableConfig{Strategy: keyset.Segment} },
			[]string{`table "orders" has strategy segment, generated for snowflake`}},
		{"go_name", func(c *keyset.Config) { c.Tables["users"] = keyset.TableConfig{Strategy: keyset.Segment} },
			[]string{`table "users" has go_name "", generated for "UserID"`}},
		{"text", func(c *keyset.Config) {
			c.Tables["orders"] = keyset.TableConfig{Strategy: keyset.Snowflake, Text: keyset.TextForm{Encoding: keyset.Base62, Prefix: "ord_"}}
		}, []string{`table "orders" has text form base62, prefix ord_, generated for decimal`}},
		{"several", func(c *keyset.Config) {
			delete(c.Tables, "orders")
			c.Tables["refunds"] = keyset.TableConfig{Strategy: keyset.Segment}
		}, []string{`table "orders" is no longer configured`, `table "refunds" is configured but has no generated type`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := shopConfig()
			tc.change(cfg)
			err := shopFile().Check(cfg)
			if err == nil || !strings.HasPrefix(err.Error(), prefix) {
				t.Fatalf("Check: %v, want an error starting %q", err, prefix)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Check: %v, want it to say %q", err, w)
				}
			}
		})
	}
	if err := shopFile().Check(nil); err == nil || err.Error() != "shop: CheckConfig: nil configuration" {
		t.Errorf("Check(nil) = %v", err)
	}
}

// TestCheckSegmentOnly: a file without snowflake tables has no layout and
// does not care about the configuration's.
func TestCheckSegmentOnly(t *testing.T) {
	f := &keyid.File{Package: "m", Name: "idsql_gen.go", Tables: []keyid.Table{{Name: "users", Type: "UserID", Strategy: "segment"}}}
	cfg := &keyset.Config{Namespace: "m", Layout: keyset.LayoutConfig{Preset: "sony"},
		Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Segment}}}
	if err := f.Check(cfg); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestTypeOf(t *testing.T) {
	f := shopFile()
	for table, want := range map[string]string{"orders": "OrderID", "public.order_items": "OrderItemID", "order_items": "", "": ""} {
		if got := f.TypeOf(table); got != want {
			t.Errorf("TypeOf(%q) = %q, want %q", table, got, want)
		}
	}
}
