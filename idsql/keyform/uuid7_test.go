package keyform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	gofrs "github.com/gofrs/uuid/v5"
	"github.com/google/uuid"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/snowflake"
)

// uuidLayouts are the presets whose keys map to UUIDs.
var uuidLayouts = []snowflake.Layout{snowflake.Leaf, snowflake.Sony, snowflake.SonyWidths, snowflake.JS53}

// randomKeys returns n keys of l from now on: random ticks within a day,
// workers and sequences, the extremes of worker and sequence among them.
func randomKeys(t *testing.T, l snowflake.Layout, n int) []int64 {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	now := time.Now()
	keys := make([]int64, 0, n)
	for i := range n {
		p := snowflake.Parts{Time: now.Add(time.Duration(r.Int64N(int64(24 * time.Hour)))),
			Worker: r.Int64N(l.MaxWorker() + 1), Sequence: r.Int64N(l.MaxSequence() + 1)}
		switch i {
		case 0:
			p.Worker, p.Sequence = 0, 0
		case 1:
			p.Worker, p.Sequence = l.MaxWorker(), l.MaxSequence()
		}
		k, err := l.Compose(p)
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	return keys
}

// Every key's UUID is a valid RFC 9562 UUIDv7 to google/uuid and
// gofrs/uuid, with the key's time as its time, and gives the key back.
func TestUUIDKeysAreUUIDv7(t *testing.T) {
	for _, l := range uuidLayouts {
		t.Run(l.Name, func(t *testing.T) {
			u, err := keyform.NewUUIDKeys(l)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range randomKeys(t, l, 2000) {
				b, err := u.UUID(k)
				if err != nil {
					t.Fatalf("UUID(%d): %v", k, err)
				}
				g := uuid.UUID(b)
				if g.Version() != 7 || g.Variant() != uuid.RFC4122 {
					t.Fatalf("key %d: google/uuid reads %s as version %d, variant %s", k, g, g.Version(), g.Variant())
				}
				if f := gofrs.UUID(b); f.Version() != gofrs.V7 || f.Variant() != gofrs.VariantRFC9562 {
					t.Fatalf("key %d: gofrs/uuid reads %s as version %d, variant %d", k, f, f.Version(), f.Variant())
				}
				sec, nsec := g.Time().UnixTime()
				if at := time.Unix(sec, nsec); !at.Equal(l.Decompose(k).Time) {
					t.Fatalf("key %d of time %s: its UUID %s says %s", k, l.Decompose(k).Time, g, at)
				}
				if got, err := u.Key(b); err != nil || got != k {
					t.Fatalf("Key(UUID(%d)) = %d, %v", k, got, err)
				}
				if s := keyform.FormatUUID(b); s != g.String() {
					t.Fatalf("FormatUUID = %s; google/uuid writes %s", s, g)
				}
			}
		})
	}
}

// One worker's UUIDs sort as its keys do, as bytes.
func TestUUIDKeysSortAsKeys(t *testing.T) {
	for _, l := range uuidLayouts {
		u, err := keyform.NewUUIDKeys(l)
		if err != nil {
			t.Fatal(err)
		}
		keys := randomKeys(t, l, 2000)
		for i, k := range keys {
			p := l.Decompose(k)
			p.Worker = min(3, l.MaxWorker())
			if keys[i], err = l.Compose(p); err != nil {
				t.Fatal(err)
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for i := 1; i < len(keys); i++ {
			a, _ := u.UUID(keys[i-1])
			b, _ := u.UUID(keys[i])
			if bytes.Compare(a[:], b[:]) >= 0 {
				t.Fatalf("%s: keys %d < %d, but UUIDs %s >= %s", l.Name, keys[i-1], keys[i], keyform.FormatUUID(a), keyform.FormatUUID(b))
			}
		}
	}
}

// A UUID idsql did not write for the layout is refused, never read as
// another key: other versions, other generators' UUIDv7s, a changed fill,
// time off the layout's ticks, a worker past its bits.
func TestUUIDKeysRefuseForeignUUIDs(t *testing.T) {
	u, err := keyform.NewUUIDKeys(snowflake.JS53)
	if err != nil {
		t.Fatal(err)
	}
	k := randomKeys(t, snowflake.JS53, 3)[2]
	mine, err := u.UUID(k)
	if err != nil {
		t.Fatal(err)
	}
	v7, err := uuid.NewV7()
	if err != nil {
		t.Fatal(err)
	}
	fill := mine
	fill[15] ^= 1
	offTick := mine
	offTick[5]++ // one millisecond later: js53's ticks are 10 ms
	wide := mine
	wide[8] |= 0x3f // worker bits past js53's 8
	for name, b := range map[string][16]byte{
		"v4": uuid.New(), "nil": {}, "google v7": v7, "changed fill": fill, "off the ticks": offTick, "worker past its bits": wide,
	} {
		if got, err := u.Key(b); !errors.Is(err, keyform.ErrUUID) {
			t.Errorf("%s %s: key %d, %v; want ErrUUID", name, keyform.FormatUUID(b), got, err)
		}
	}
	if _, err := u.UUID(0); !errors.Is(err, keyform.ErrUUID) {
		t.Errorf("UUID(0): %v", err)
	}
	if _, err := keyform.NewUUIDKeys(snowflake.UID32); err == nil || !strings.Contains(err.Error(), "sequence bits") {
		t.Errorf("uid32 (13 sequence bits): %v; want a refusal naming its sequence bits", err)
	}
	if _, err := (keyform.UUIDKeys{}).Key(mine); !errors.Is(err, keyform.ErrUUID) {
		t.Errorf("the zero UUIDKeys read a key: %v", err)
	}
}

// ParseUUID reads a UUID's usual text forms and refuses others.
func TestParseUUID(t *testing.T) {
	want := uuid.MustParse("0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2b")
	for _, s := range []string{
		"0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2b",
		"0190A3B2-1C4D-7E5F-8A6B-7C8D9E0F1A2B",
		"{0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2b}",
		"urn:uuid:0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2b",
		"0190a3b21c4d7e5f8a6b7c8d9e0f1a2b",
	} {
		if b, err := keyform.ParseUUID(s); err != nil || b != want {
			t.Errorf("ParseUUID(%q) = %x, %v", s, b, err)
		}
	}
	for _, s := range []string{"", "0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2", "0190a3b2_1c4d-7e5f-8a6b-7c8d9e0f1a2b",
		"0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2g", "{0190a3b2-1c4d-7e5f-8a6b-7c8d9e0f1a2b", "123"} {
		if b, err := keyform.ParseUUID(s); !errors.Is(err, keyform.ErrUUID) {
			t.Errorf("ParseUUID(%q) = %x, %v; want ErrUUID", s, b, err)
		}
	}
}

// uuidGolden is testdata/uuid7_vectors.json: for each preset, keys and
// their UUIDs. Generated once; a test never writes it.
type uuidGolden struct {
	Layouts []struct {
		Preset  string `json:"preset"`
		Vectors []struct {
			Key  int64  `json:"key"`
			UUID string `json:"uuid"`
		} `json:"vectors"`
	} `json:"layouts"`
}

// TestUUIDKeysGolden pins the UUID of keys of every preset that maps to
// UUIDs, both ways: a key form that has issued keys never changes.
func TestUUIDKeysGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/uuid7_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var g uuidGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatal(err)
	}
	if len(g.Layouts) != len(uuidLayouts) {
		t.Fatalf("%d layouts in the vectors; want %d", len(g.Layouts), len(uuidLayouts))
	}
	for _, c := range g.Layouts {
		l, err := snowflake.Preset(c.Preset)
		if err != nil {
			t.Fatal(err)
		}
		u, err := keyform.NewUUIDKeys(l)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Vectors) == 0 {
			t.Fatalf("%s: no vectors", c.Preset)
		}
		for _, v := range c.Vectors {
			b, err := u.UUID(v.Key)
			if err != nil || keyform.FormatUUID(b) != v.UUID {
				t.Errorf("%s: UUID(%d) = %s, %v; want %s", c.Preset, v.Key, keyform.FormatUUID(b), err, v.UUID)
			}
			p, err := keyform.ParseUUID(v.UUID)
			if err != nil {
				t.Fatal(err)
			}
			if k, err := u.Key(p); err != nil || k != v.Key {
				t.Errorf("%s: Key(%s) = %d, %v; want %d", c.Preset, v.UUID, k, err, v.Key)
			}
		}
	}
}
