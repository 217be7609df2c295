package keyform_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// TestCodecSpreadSnowflake: a spread snowflake table's codec shapes a key,
// undoes the shape, decodes the stored key to the time it was made at,
// writes a TypeID that carries that time and reads back the stored key,
// and refuses time bounds.
func TestCodecSpreadSnowflake(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	key, err := snowflake.Leaf.Compose(snowflake.Parts{Time: at, Worker: 9, Sequence: 3})
	if err != nil {
		t.Fatal(err)
	}
	c, err := keyform.NewCodec(keyform.Spec{
		Table:  "orders",
		Layout: snowflake.Leaf,
		Shape:  shape.Shape{Spread: shape.Reverse},
		Space:  shape.Space{Bits: 63, Low: snowflake.Leaf.WorkerBits + snowflake.Leaf.SequenceBits, Width: snowflake.Leaf.TimeBits},
		Form:   keyform.Form{Encoding: keyform.TypeID, Prefix: "order"},
	})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := c.Shape(key)
	if err != nil || stored == key {
		t.Fatalf("Shape(%d) = %d, %v; want another key", key, stored, err)
	}
	if back, err := c.Unshape(stored); err != nil || back != key {
		t.Fatalf("Unshape(%d) = %d, %v; want %d", stored, back, err, key)
	}
	p, err := c.Decode(stored, at, time.Minute)
	if err != nil || !p.Time.Equal(at) || p.Worker != 9 || p.Sequence != 3 {
		t.Fatalf("Decode(%d) = %+v, %v", stored, p, err)
	}
	text := c.Format(stored)
	if got, err := c.Parse(text); err != nil || got != stored {
		t.Fatalf("Parse(%q) = %d, %v; want the stored key %d", text, got, err, stored)
	}
	if c.SortsAsKeys() {
		t.Error("a spread table's TypeIDs follow the keys before the shape, so they do not sort as the stored keys")
	}
	if _, _, err := c.Bounds(at, at.Add(time.Hour)); !errors.Is(err, keyform.ErrNoTimeOrder) || !strings.Contains(err.Error(), "orders") {
		t.Errorf("Bounds of a spread table: %v; want ErrNoTimeOrder naming the table", err)
	}
}

// TestCodecSegment: a segment table's codec has no time: Decode and Bounds
// refuse, naming the table (and Bounds its counter), and a typeid form is
// refused when the codec is made.
func TestCodecSegment(t *testing.T) {
	c, err := keyform.NewCodec(keyform.Spec{Table: "users", SegmentKey: "shop.users", Form: keyform.Form{Encoding: keyform.Base62}})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := c.Shape(42); err != nil || got != 42 {
		t.Errorf("an ordered table's Shape(42) = %d, %v", got, err)
	}
	if _, err := c.Decode(42, time.Now(), 0); err == nil || !strings.Contains(err.Error(), "users") {
		t.Errorf("Decode of a segment key: %v; want an error naming the table", err)
	}
	if _, _, err := c.Bounds(time.Now(), time.Now().Add(time.Hour)); !errors.Is(err, keyform.ErrNoTimeOrder) || !strings.Contains(err.Error(), `"shop.users"`) {
		t.Errorf("Bounds of a segment table: %v; want ErrNoTimeOrder naming its counter", err)
	}
	if !c.SortsAsKeys() {
		t.Error("base62 at full width sorts as the keys")
	}
	_, err = keyform.NewCodec(keyform.Spec{Table: "users", Form: keyform.Form{Encoding: keyform.TypeID}})
	if err == nil || !strings.Contains(err.Error(), "snowflake tables only") {
		t.Errorf("a typeid form on a table without a layout: %v; want a refusal", err)
	}
}

// TestCodecBoundsCapped: an ordered snowflake table's bounds are the
// layout's, capped at max_id, and a range wholly above max_id is refused.
func TestCodecBoundsCapped(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.AddDate(0, 1, 0)
	lo, hi, err := snowflake.Leaf.Bounds(from, to)
	if err != nil {
		t.Fatal(err)
	}
	c := keyform.MustCodec(keyform.Spec{Table: "orders", Layout: snowflake.Leaf, MaxID: hi - 1})
	if gotLo, gotHi, err := c.Bounds(from, to); err != nil || gotLo != lo || gotHi != hi-1 {
		t.Errorf("Bounds = [%d, %d], %v; want [%d, %d]", gotLo, gotHi, err, lo, hi-1)
	}
	c = keyform.MustCodec(keyform.Spec{Table: "orders", Layout: snowflake.Leaf, MaxID: lo - 1})
	if _, _, err := c.Bounds(from, to); !errors.Is(err, snowflake.ErrRange) {
		t.Errorf("Bounds above max_id: %v; want snowflake.ErrRange", err)
	}
}

// TestCodecKeepsItsRing: two codecs of keyed forms on one variable each
// read the variable's current value: after it changes, texts of the new
// secret read and those of the old one no longer do, in both (no codec
// answers from a ring another parsed, and none from a stale one).
func TestCodecKeepsItsRing(t *testing.T) {
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	a := keyform.MustCodec(keyform.Spec{Table: "a", Form: keyedForms[0]})
	b := keyform.MustCodec(keyform.Spec{Table: "b", Form: keyedForms[0]})
	old := a.Format(77)
	if got, err := b.Parse(old); err != nil || got != 77 {
		t.Fatalf("b.Parse(%q) = %d, %v", old, got, err)
	}
	t.Setenv("IDSQL_TEST_KEY", "2:"+secretB)
	for _, c := range []*keyform.Codec{a, b} {
		if _, err := c.Parse(old); !errors.Is(err, keyform.ErrTextKey) {
			t.Errorf("%s: a text of version 1 after the ring became version 2 only: %v; want ErrTextKey", c.Table(), err)
		}
		text := c.Format(77)
		if !strings.HasPrefix(text, "ord_2") {
			t.Errorf("%s wrote %q after the ring changed; want version 2", c.Table(), text)
		}
		if got, err := c.Parse(text); err != nil || got != 77 {
			t.Errorf("%s: Parse(%q) = %d, %v", c.Table(), text, got, err)
		}
	}
}

// TestMustCodecPanics: MustCodec refuses a spec NewCodec refuses.
func TestMustCodecPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "key space") {
			t.Errorf("MustCodec of a 1-bit space: recovered %v; want a panic about the key space", r)
		}
	}()
	keyform.MustCodec(keyform.Spec{Table: "t", Shape: shape.Shape{Spread: shape.Reverse}, Space: shape.Space{Bits: 1}})
}
