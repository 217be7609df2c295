package keyid_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// goldenID is the key type of the known answers.
type goldenID int64

// jsonGolden is testdata/json_vectors.json: for each text form of a key
// type (encoding "": decimal), keys and their JSON.
type jsonGolden struct {
	Secret string `json:"secret"`
	Forms  []struct {
		Encoding string `json:"encoding"`
		Prefix   string `json:"prefix"`
		Keyed    bool   `json:"keyed"`
		Layout   string `json:"layout"`
		Vectors  []struct {
			Key  int64  `json:"key"`
			JSON string `json:"json"`
		} `json:"vectors"`
	} `json:"forms"`
}

// readJSONGolden reads the known answers of key types' JSON. It never
// writes them: they were generated once, and the JSON of issued keys
// never changes.
func readJSONGolden(t *testing.T) jsonGolden {
	t.Helper()
	data, err := os.ReadFile("testdata/json_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var g jsonGolden
	if err := json.Unmarshal(data, &g); err != nil {
		t.Fatalf("testdata/json_vectors.json: %v", err)
	}
	if len(g.Forms) == 0 {
		t.Fatal("testdata/json_vectors.json: no forms")
	}
	return g
}

// TestJSONGolden pins the JSON that generated key types write and read:
// a decimal string (MarshalJSON, UnmarshalJSON), or a table's text form
// (MarshalJSONText, UnmarshalJSONText) in each alphabet, keyed, and as a
// TypeID.
func TestJSONGolden(t *testing.T) {
	const typ = "golden.ID"
	g := readJSONGolden(t)
	for _, c := range g.Forms {
		form := keyset.TextForm{Encoding: c.Encoding, Prefix: c.Prefix}
		if c.Keyed {
			form.KeyEnv = "IDSQL_GOLDEN_KEY"
			t.Setenv(form.KeyEnv, "1:"+g.Secret)
		}
		if c.Layout != "" {
			l, err := snowflake.Preset(c.Layout)
			if err != nil {
				t.Fatal(err)
			}
			form = form.WithLayout(l)
		}
		if len(c.Vectors) == 0 {
			t.Errorf("%s: no vectors", form)
		}
		for _, v := range c.Vectors {
			id := goldenID(v.Key)
			var b []byte
			var err error
			var back goldenID
			var uerr error
			if c.Encoding == "" {
				b, err = keyid.MarshalJSON(id)
				uerr = keyid.UnmarshalJSON(&back, typ, []byte(v.JSON))
			} else {
				b, err = keyid.MarshalJSONText(form, id)
				uerr = keyid.UnmarshalJSONText(&back, form, typ, []byte(v.JSON))
			}
			if err != nil || string(b) != v.JSON {
				t.Errorf("%s: marshal %d = %s, %v; want %s", form, v.Key, b, err, v.JSON)
			}
			if uerr != nil || back != id {
				t.Errorf("%s: unmarshal %s = %d, %v; want %d", form, v.JSON, back, uerr, v.Key)
			}
		}
	}
}
