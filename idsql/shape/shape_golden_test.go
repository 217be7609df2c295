package shape_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/idsql/idsql/idsql/shape"
)

// shapeGolden is testdata/shape_vectors.json: for shapes in spaces, keys
// and their shaped keys; and values of the shard hash.
type shapeGolden struct {
	Shapes []struct {
		Note   string `json:"note"`
		Spread string `json:"spread"`
		Bits   int    `json:"bits"`
		Space  struct {
			Bits  int `json:"bits"`
			Low   int `json:"low"`
			Width int `json:"width"`
		} `json:"space"`
		Vectors []struct {
			Key    int64 `json:"key"`
			Shaped int64 `json:"shaped"`
		} `json:"vectors"`
	} `json:"shapes"`
	Hash []struct {
		Key  int64  `json:"key"`
		Bits int    `json:"bits"`
		Hash uint64 `json:"hash"`
	} `json:"hash"`
}

// readShapeGolden reads the known answers of the shapes. It never writes
// them: they were generated once, and a shape that has issued keys never
// changes.
func readShapeGolden(t *testing.T) shapeGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/shape_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var g shapeGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("testdata/shape_vectors.json: %v", err)
	}
	if len(g.Shapes) == 0 || len(g.Hash) == 0 {
		t.Fatalf("testdata/shape_vectors.json: %d shapes, %d hashes", len(g.Shapes), len(g.Hash))
	}
	return g
}

// TestShapeGolden pins each spread: in each space, Apply maps every key
// to its shaped key and Undo maps it back; Hash, the shard shape's top
// bits, gives each known value.
func TestShapeGolden(t *testing.T) {
	g := readShapeGolden(t)
	for _, c := range g.Shapes {
		t.Run(c.Note, func(t *testing.T) {
			s := shape.Shape{Spread: shape.Spread(c.Spread), Bits: c.Bits}
			f, err := shape.New(s, shape.Space{Bits: c.Space.Bits, Low: c.Space.Low, Width: c.Space.Width})
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Vectors) == 0 {
				t.Fatal("no vectors")
			}
			for _, v := range c.Vectors {
				if got, err := f.Apply(v.Key); err != nil || got != v.Shaped {
					t.Errorf("%s: Apply(%d) = %d, %v; want %d", s, v.Key, got, err, v.Shaped)
				}
				if got, err := f.Undo(v.Shaped); err != nil || got != v.Key {
					t.Errorf("%s: Undo(%d) = %d, %v; want %d", s, v.Shaped, got, err, v.Key)
				}
			}
		})
	}
	for _, v := range g.Hash {
		if got := shape.Hash(v.Key, v.Bits); got != v.Hash {
			t.Errorf("Hash(%d, %d) = %d; want %d", v.Key, v.Bits, got, v.Hash)
		}
	}
}
