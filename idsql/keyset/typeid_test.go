package keyset_test

import (
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TestTypeIDSpreadConfig: Config.TextForm binds a spread table's shape,
// so the table writes its stored keys as TypeIDs of the keys before the
// shape, and ParseKey reads them back to the stored keys.
func TestTypeIDSpreadConfig(t *testing.T) {
	cfg, err := keyset.Parse("x.yaml", []byte("namespace: n\ntables:\n  users: {strategy: snowflake, shape: {spread: reverse}, text: {encoding: typeid, prefix: user}}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	codec, err := cfg.Codec("users")
	if err != nil {
		t.Fatal(err)
	}
	fn := codec.ShapeFunc()
	key, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC), Worker: 4, Sequence: 2})
	stored, _ := fn.Apply(key)
	s := cfg.TextForm("users").Format(stored)
	if got, from, err := codecsOf(t, cfg).ParseKey(s); err != nil || got != stored || from != "users" {
		t.Errorf("ParseKey(%q) = %d, %q, %v; want %d, users", s, got, from, err, stored)
	}
	plain := keyset.TextForm{Encoding: keyset.TypeID, Prefix: "user"}.WithLayout(snowflake.Leaf)
	if want := plain.Format(key); s != want {
		t.Errorf("the spread table writes %d as %q, want the TypeID of its key before the shape, %q", stored, s, want)
	}
}

// TestTypeIDConfig: a typeid form is validated with the layout (whole
// milliseconds, an epoch on a millisecond), on snowflake tables only, with
// the spec's prefix rule; ParseKey and Config.TextForm use the layout.
func TestTypeIDConfig(t *testing.T) {
	const head = "namespace: n\n"
	for _, tt := range []struct{ yaml, want string }{
		{"tables:\n  users: {strategy: segment, text: {encoding: typeid, prefix: user}}\n", "tables.users.text.encoding: typeid applies to snowflake tables only"},
		{"tables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: User}}\n", `tables.users.text.prefix: "User" is not a TypeID prefix`},
		{"tables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: user_}}\n", `"user_" is not a TypeID prefix`},
		{"layout: {time_bits: 41, worker_bits: 10, sequence_bits: 12, unit: 1500us, epoch: 2024-01-01T00:00:00Z}\ntables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: user}}\n",
			"unit 1.5ms is not a whole number of milliseconds"},
		{"layout: {time_bits: 41, worker_bits: 10, sequence_bits: 12, unit: 1ms, epoch: 2024-01-01T00:00:00.0005Z}\ntables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: user}}\n",
			"is not on a whole millisecond"},
		{"tables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: ord}}\n  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}\n",
			`prefix "ord_" is also the prefix of table`},
	} {
		_, err := keyset.Parse("x.yaml", []byte(head+tt.yaml), time.Now())
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want an error containing %q", tt.yaml, err, tt.want)
		}
	}
	cfg, err := keyset.Parse("x.yaml", []byte(head+"layout: sony\ntables:\n  users: {strategy: snowflake, text: {encoding: typeid, prefix: user}}\n  events: {strategy: snowflake, text: {encoding: typeid}}\n"), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	id, _ := snowflake.Sony.Compose(snowflake.Parts{Time: time.Date(2026, 1, 2, 3, 4, 5, 60e6, time.UTC), Worker: 9, Sequence: 1})
	for _, table := range []string{"users", "events"} {
		s := cfg.TextForm(table).Format(id)
		if got, from, err := codecsOf(t, cfg).ParseKey(s); err != nil || got != id || from != table {
			t.Errorf("ParseKey(%q) = %d, %q, %v; want %d, %s", s, got, from, err, id, table)
		}
	}
}
