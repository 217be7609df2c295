package keyform_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"go.jetify.com/typeid"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// typeIDLayouts are the layouts a typeid form maps losslessly: every
// preset, and a custom one with a 5ms unit.
var typeIDLayouts = []snowflake.Layout{snowflake.Leaf, snowflake.UID32, snowflake.Sony, snowflake.SonyWidths, snowflake.JS53,
	{Name: "custom", TimeBits: 40, WorkerBits: 11, SequenceBits: 12, Unit: 5 * time.Millisecond, Epoch: time.UnixMilli(1700000000123)}}

// typeIDKeys returns keys of l at the edges of its fields and now.
func typeIDKeys(l snowflake.Layout) []int64 {
	now, _ := l.Compose(snowflake.Parts{Time: time.Date(2026, 11, 27, 9, 51, 0, 0, time.UTC), Worker: 3, Sequence: 7})
	top := int64(math.MaxInt64)
	if bits := l.TimeBits + l.WorkerBits + l.SequenceBits; bits < 63 {
		top = 1<<bits - 1
	}
	return []int64{1, 2, 1 << (l.WorkerBits + l.SequenceBits), now, now + 1, top - 1, top}
}

// TestTypeIDReference: idsql's TypeIDs parse with jetify's reference
// implementation to the table's prefix and a UUIDv7 whose time is the
// key's, the reference writes the same text from that UUID, and idsql
// reads it back to the exact key.
func TestTypeIDReference(t *testing.T) {
	for _, l := range typeIDLayouts {
		form := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(l)
		for _, id := range typeIDKeys(l) {
			b, err := form.AppendText(nil, id)
			if err != nil {
				t.Fatalf("%s: AppendText(%d): %v", l.Name, id, err)
			}
			s := string(b)
			ref, err := typeid.FromString(s)
			if err != nil {
				t.Errorf("%s: %d is %q, which the reference refuses: %v", l.Name, id, s, err)
				continue
			}
			u := ref.UUIDBytes()
			ms := int64(binary.BigEndian.Uint64(u[:8]) >> 16)
			if ref.Prefix() != "user" || u[6]>>4 != 7 || u[8]>>6 != 2 {
				t.Errorf("%s: %q: prefix %q, UUID %x: want user, version 7, variant 10", l.Name, s, ref.Prefix(), u)
			}
			if want := l.Decompose(id).Time.UnixMilli(); ms != want {
				t.Errorf("%s: %q: UUID time %d ms, key time %d ms", l.Name, s, ms, want)
			}
			back, err := typeid.FromUUIDBytesWithPrefix("user", u)
			if err != nil || back.String() != s {
				t.Errorf("%s: reference writes %q, %v; want %q", l.Name, back.String(), err, s)
			}
			if got, err := form.Parse(s); err != nil || got != id {
				t.Errorf("%s: Parse(%q) = %d, %v; want %d", l.Name, s, got, err, id)
			}
		}
	}
}

// TestTypeIDRefuses: TypeIDs idsql did not write for the form are
// refused: another prefix, the reference's random UUIDv7s, a UUIDv4, a
// time between ticks, a form without layout.
func TestTypeIDRefuses(t *testing.T) {
	form := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(snowflake.Sony)
	good := form.Format(123456789012)
	for _, s := range []string{
		"order" + good[4:],
		good[5:],
		strings.ToUpper(good),
		"user_01h455vb4pex5vsknk084sn02q", // the spec's example: random bits
		mustTypeID(t, "user", "0191a6e1-7b1c-7000-8000-00000000002a"), // 2024-08-29T…: not on a 10ms tick
		mustTypeID(t, "user", "0191a6e1-7b1a-4000-8000-00000000002a"), // version 4
		mustTypeID(t, "user", "0191a6e1-7b1a-7001-8000-00000000002a"), // rand_a set
		mustTypeID(t, "user", "0191a6e1-7b1a-7000-c000-00000000002a"), // variant 11
		mustTypeID(t, "user", "00000000-0000-7000-8000-000000000001"), // before the epoch
	} {
		if id, err := form.Parse(s); !errors.Is(err, keyform.ErrText) {
			t.Errorf("Parse(%q) = %d, %v; want ErrText", s, id, err)
		}
	}
	unbound := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}
	if _, err := unbound.AppendText(nil, 1); !errors.Is(err, keyform.ErrText) || !strings.Contains(err.Error(), "WithLayout") {
		t.Errorf("unbound AppendText: %v", err)
	}
	if _, err := unbound.Parse(good); !errors.Is(err, keyform.ErrText) {
		t.Errorf("unbound Parse: %v", err)
	}
	js := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(snowflake.JS53)
	if _, err := js.AppendText(nil, 1<<53); !errors.Is(err, keyform.ErrText) {
		t.Errorf("js53 AppendText(2^53): %v; want ErrText", err)
	}
}

func mustTypeID(t *testing.T, prefix, uuid string) string {
	t.Helper()
	id, err := typeid.FromUUIDWithPrefix(prefix, uuid)
	if err != nil {
		t.Fatalf("FromUUIDWithPrefix(%q, %q): %v", prefix, uuid, err)
	}
	return id.String()
}

// TestTypeIDSorts: a table's TypeIDs sort byte by byte as its keys.
func TestTypeIDSorts(t *testing.T) {
	for _, l := range typeIDLayouts {
		form := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(l)
		if !form.SortsAsKeys() {
			t.Errorf("%s: an ordered TypeID form says its texts do not sort as its keys", l.Name)
		}
		keys := typeIDKeys(l)
		for i := 1; i < len(keys); i++ {
			if a, b := form.Format(keys[i-1]), form.Format(keys[i]); a >= b {
				t.Errorf("%s: %d < %d but %q >= %q", l.Name, keys[i-1], keys[i], a, b)
			}
		}
	}
}

// FuzzTypeID: every key of the layout survives Format and Parse, its
// TypeID is one the reference reads, and a string Parse accepts is exactly
// the TypeID Format writes for its key: no other string reads as a key.
func FuzzTypeID(f *testing.F) {
	forms := []keyform.Form{
		keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(snowflake.Leaf),
		keyform.Form{Encoding: keyform.TypeID}.WithLayout(snowflake.Sony),
		keyform.Form{Encoding: keyform.TypeID, Prefix: "my_type"}.WithLayout(snowflake.JS53),
		keyform.Form{Encoding: keyform.TypeID, Prefix: "rev"}.WithLayout(snowflake.Leaf).WithShape(shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41}),
		keyform.Form{Encoding: keyform.TypeID, Prefix: "shard"}.WithLayout(snowflake.JS53).WithShape(shape.Shape{Spread: shape.Shard, Bits: 6}, shape.Space{Bits: 63}),
	}
	for _, form := range forms {
		f.Add(int64(1), form.Format(1))
		f.Add(int64(1)<<52, form.Format(1<<52))
	}
	f.Add(int64(-3), "user_01h455vb4pex5vsknk084sn02q")
	f.Add(int64(math.MaxInt64), "7zzzzzzzzzzzzzzzzzzzzzzzzz")
	f.Fuzz(func(t *testing.T, id int64, s string) {
		for i, form := range forms {
			b, err := form.AppendText(nil, id)
			switch {
			case err == nil:
				if got, err := form.Parse(string(b)); err != nil || got != id {
					t.Fatalf("form %d: Parse(%q) = %d, %v; want %d", i, b, got, err, id)
				}
				if _, err := typeid.FromString(string(b)); err != nil {
					t.Fatalf("form %d: reference refuses %q: %v", i, b, err)
				}
			case id > 0 && (i < 2 || i == 3 || (i == 2 && id < 1<<53)):
				// Every positive key of the first two forms, every key of
				// js53 and every value reversed: the shard form takes only
				// values whose top bits are their hash.
				t.Fatalf("form %d: AppendText(%d): %v", i, id, err)
			}
			if v, err := form.Parse(s); err == nil {
				if back := form.Format(v); back != s {
					t.Fatalf("form %d: Parse(%q) = %d, whose TypeID is %q", i, s, v, back)
				}
			}
		}
	})
}

// A snowflake key as a TypeID whose UUIDv7 carries the key's time, and
// back.
func ExampleForm_typeID() {
	users := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(snowflake.Leaf)
	id, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), Worker: 5, Sequence: 7})
	text := users.Format(id)
	back, err := users.Parse(text)
	fmt.Println(id, text)
	fmt.Println(back == id, err)
	// Output:
	// 2006924427417112583 user_01kdyak34ee008000000000m07
	// true <nil>
}

// TestTypeIDSpread: a form bound to a spread shape writes stored (shaped)
// keys as TypeIDs of the keys before the shape, so the reference reads the
// key's real time from the UUIDv7, and reads them back to the stored key;
// a value that no key of the shape gives is refused.
func TestTypeIDSpread(t *testing.T) {
	for _, c := range []struct {
		l  snowflake.Layout
		s  shape.Shape
		sp shape.Space
	}{
		{snowflake.Leaf, shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41}},
		{snowflake.JS53, shape.Shape{Spread: shape.Shard, Bits: 6}, shape.Space{Bits: 63}},
	} {
		f, err := shape.New(c.s, c.sp)
		if err != nil {
			t.Fatal(err)
		}
		form := keyform.Form{Encoding: keyform.TypeID, Prefix: "user"}.WithLayout(c.l).WithShape(c.s, c.sp)
		if form.SortsAsKeys() {
			t.Errorf("%s %s: a TypeID form of a spread shape says its texts sort as the stored keys", c.l.Name, c.s)
		}
		for _, key := range typeIDKeys(c.l) {
			stored, err := f.Apply(key)
			if err != nil {
				t.Fatal(err)
			}
			text, err := form.AppendText(nil, stored)
			if err != nil {
				t.Fatalf("%s %s: AppendText(%d): %v", c.l.Name, c.s, stored, err)
			}
			ref, err := typeid.FromString(string(text))
			if err != nil {
				t.Fatalf("%s %s: the reference refuses %q: %v", c.l.Name, c.s, text, err)
			}
			u := ref.UUIDBytes()
			if ms, want := int64(binary.BigEndian.Uint64(u[:8])>>16), c.l.Decompose(key).Time.UnixMilli(); ms != want {
				t.Errorf("%s %s: %q: UUID time %d ms, the key's time %d ms", c.l.Name, c.s, text, ms, want)
			}
			if got, err := form.Parse(string(text)); err != nil || got != stored {
				t.Errorf("%s %s: Parse(%q) = %d, %v; want the stored key %d", c.l.Name, c.s, text, got, err, stored)
			}
		}
	}
	// A shard shape's value whose top bits are not its hash is no key.
	shard := keyform.Form{Encoding: keyform.TypeID}.WithLayout(snowflake.JS53).WithShape(shape.Shape{Spread: shape.Shard, Bits: 6}, shape.Space{Bits: 63})
	f, _ := shape.New(shape.Shape{Spread: shape.Shard, Bits: 6}, shape.Space{Bits: 63})
	stored, _ := f.Apply(12345)
	if _, err := shard.AppendText(nil, stored^1<<60); !errors.Is(err, keyform.ErrText) || !errors.Is(err, shape.ErrNotShaped) {
		t.Errorf("AppendText of a value no key shapes to: %v; want ErrText and shape.ErrNotShaped", err)
	}
}
