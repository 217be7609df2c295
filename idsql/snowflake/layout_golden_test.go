package snowflake_test

import (
	"encoding/json"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/snowflake"
)

// layoutGolden is testdata/layout_vectors.json: for each preset, parts and
// the ID they compose to; and the preset names that are retired.
type layoutGolden struct {
	Retired []string `json:"retired"`
	Layouts []struct {
		Preset  string `json:"preset"`
		Vectors []struct {
			Time     string `json:"time"`
			Worker   int64  `json:"worker"`
			Sequence int64  `json:"sequence"`
			ID       int64  `json:"id"`
		} `json:"vectors"`
	} `json:"layouts"`
}

// readLayoutGolden reads the known answers of the presets. It never writes
// them: they were generated once, and a preset that has issued keys never
// changes.
func readLayoutGolden(t *testing.T) layoutGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/layout_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var g layoutGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("testdata/layout_vectors.json: %v", err)
	}
	if len(g.Layouts) == 0 || len(g.Retired) == 0 {
		t.Fatalf("testdata/layout_vectors.json: %d layouts, %d retired names", len(g.Layouts), len(g.Retired))
	}
	return g
}

// TestLayoutGolden pins every preset's bits: each vector's parts compose
// to its ID, and the ID decomposes and decodes to the parts. A retired
// preset name stays refused, so that it never names another layout.
func TestLayoutGolden(t *testing.T) {
	g := readLayoutGolden(t)
	far := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range g.Layouts {
		t.Run(c.Preset, func(t *testing.T) {
			l, err := snowflake.Preset(c.Preset)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Vectors) == 0 {
				t.Fatal("no vectors")
			}
			for _, v := range c.Vectors {
				at, err := time.Parse(time.RFC3339Nano, v.Time)
				if err != nil {
					t.Fatal(err)
				}
				want := snowflake.Parts{Time: at, Worker: v.Worker, Sequence: v.Sequence}
				if id, err := l.Compose(want); err != nil || id != v.ID {
					t.Errorf("Compose(%s, worker %d, sequence %d) = %d, %v; want %d", v.Time, v.Worker, v.Sequence, id, err, v.ID)
				}
				if p := l.Decompose(v.ID); !p.Time.Equal(at) || p.Worker != v.Worker || p.Sequence != v.Sequence {
					t.Errorf("Decompose(%d) = %s, worker %d, sequence %d; want %s, %d, %d",
						v.ID, p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence, v.Time, v.Worker, v.Sequence)
				}
				if p, err := l.Decode(v.ID, far, 0); err != nil || !p.Time.Equal(at) || p.Worker != v.Worker || p.Sequence != v.Sequence {
					t.Errorf("Decode(%d) = %+v, %v; want %s, %d, %d", v.ID, p, err, v.Time, v.Worker, v.Sequence)
				}
			}
		})
	}
	for _, name := range g.Retired {
		if l, err := snowflake.Preset(name); !errors.Is(err, snowflake.ErrLayout) {
			t.Errorf("retired preset %q: %v, %v; want an error wrapping ErrLayout", name, l, err)
		}
	}
}
