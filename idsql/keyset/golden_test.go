package keyset_test

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// The known answers of idsql's stored and public formats, in
// testdata/vectors. They were generated once, by hand, by a program that
// computed each value twice (with idsql and independently); these tests
// only read them. A format that has issued keys never changes: a test
// here failing means a change would break stored keys or issued texts.

// readGolden reads testdata/vectors/name into v and fails the test when it
// cannot. It never writes the file.
func readGolden(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile("testdata/vectors/" + name)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("testdata/vectors/%s: %v", name, err)
	}
}

// goldenText is a key and its text.
type goldenText struct {
	Key  int64  `json:"key"`
	Text string `json:"text"`
}

// checkText checks that form writes each vector's key as its text and
// reads the text back as the key; what names the form in errors.
func checkText(t *testing.T, what string, form keyset.TextForm, vectors []goldenText) {
	t.Helper()
	if len(vectors) == 0 {
		t.Fatalf("%s: no vectors", what)
	}
	for _, v := range vectors {
		if got, err := form.AppendText(nil, v.Key); err != nil || string(got) != v.Text {
			t.Errorf("%s: AppendText(%d) = %q, %v; want %q", what, v.Key, got, err, v.Text)
		}
		if got, err := form.Parse(v.Text); err != nil || got != v.Key {
			t.Errorf("%s: Parse(%q) = %d, %v; want %d", what, v.Text, got, err, v.Key)
		}
	}
}

// TestShapeConfigGolden pins what key space Config.Codec gives each
// kind of table (layout, strategy, max_id, shape) and the stored keys of
// known keys there, both ways.
func TestShapeConfigGolden(t *testing.T) {
	var g struct {
		Cases []struct {
			Layout   string `json:"layout"`
			Strategy string `json:"strategy"`
			MaxID    int64  `json:"max_id"`
			Shape    string `json:"shape"`
			Space    struct {
				Bits  int `json:"bits"`
				Low   int `json:"low"`
				Width int `json:"width"`
			} `json:"space"`
			Vectors []struct {
				Key    int64 `json:"key"`
				Stored int64 `json:"stored"`
			} `json:"vectors"`
		} `json:"cases"`
	}
	readGolden(t, "shape_config_vectors.json", &g)
	if len(g.Cases) == 0 {
		t.Fatal("no cases")
	}
	now := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, c := range g.Cases {
		table := "{strategy: " + c.Strategy + ", shape: " + c.Shape
		if c.MaxID > 0 {
			table += ", max_id: " + strconv.FormatInt(c.MaxID, 10)
		}
		table += "}"
		name := c.Layout + " " + table
		cfg, err := keyset.Parse("golden.yaml", []byte("namespace: golden\nlayout: "+c.Layout+"\ntables:\n  t: "+table+"\n"), now)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		codec, err := cfg.Codec("t")
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		f := codec.ShapeFunc()
		if sp := f.Space(); sp.Bits != c.Space.Bits || sp.Low != c.Space.Low || sp.Width != c.Space.Width {
			t.Errorf("%s: space %+v; want %+v", name, sp, c.Space)
		}
		if len(c.Vectors) == 0 {
			t.Errorf("%s: no vectors", name)
		}
		for _, v := range c.Vectors {
			if got, err := f.Apply(v.Key); err != nil || got != v.Stored {
				t.Errorf("%s: Apply(%d) = %d, %v; want %d", name, v.Key, got, err, v.Stored)
			}
			if got, err := codec.Unshape(v.Stored); err != nil || got != v.Key {
				t.Errorf("%s: Unshape(%d) = %d, %v; want %d", name, v.Stored, got, err, v.Key)
			}
		}
	}
}

// goldenShardValue returns the Go value of a shard vector: typ is a Go
// type name (int64, int, int32, uint64, uint8, string) or bytes, whose
// value is hex.
func goldenShardValue(t *testing.T, typ, value string) any {
	t.Helper()
	parse := func(bits int) int64 {
		n, err := strconv.ParseInt(value, 10, bits)
		if err != nil {
			t.Fatalf("%s %q: %v", typ, value, err)
		}
		return n
	}
	parseU := func(bits int) uint64 {
		n, err := strconv.ParseUint(value, 10, bits)
		if err != nil {
			t.Fatalf("%s %q: %v", typ, value, err)
		}
		return n
	}
	switch typ {
	case "int64":
		return parse(64)
	case "int":
		return int(parse(64))
	case "int32":
		return int32(parse(32))
	case "uint64":
		return parseU(64)
	case "uint8":
		return uint8(parseU(8))
	case "string":
		return value
	case "bytes":
		b, err := hex.DecodeString(value)
		if err != nil {
			t.Fatalf("bytes %q: %v", value, err)
		}
		return b
	}
	t.Fatalf("unknown type %q", typ)
	return nil
}

// TestShardOfGolden pins the shard hash every front door applies to a
// shard column's value: integers by their low bits, strings and bytes by
// FNV-1a 64.
func TestShardOfGolden(t *testing.T) {
	var g struct {
		Shards []struct {
			Type  string `json:"type"`
			Value string `json:"value"`
			Bits  int    `json:"bits"`
			Shard int    `json:"shard"`
		} `json:"shards"`
	}
	readGolden(t, "shard_vectors.json", &g)
	if len(g.Shards) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range g.Shards {
		value := goldenShardValue(t, v.Type, v.Value)
		if got, err := keyset.ShardOf(value, v.Bits); err != nil || got != v.Shard {
			t.Errorf("ShardOf(%s %q, %d) = %d, %v; want %d", v.Type, v.Value, v.Bits, got, err, v.Shard)
		}
	}
}

// TestGeneGolden pins the key of a segment table with shard and app bits,
// both ways, and the segment key (store row) of each shard.
func TestGeneGolden(t *testing.T) {
	var g struct {
		Genes []struct {
			ShardBits int   `json:"shard_bits"`
			AppBits   int   `json:"app_bits"`
			App       int64 `json:"app"`
			Index     int64 `json:"index"`
			Shard     int   `json:"shard"`
			Key       int64 `json:"key"`
		} `json:"genes"`
		ShardKeys []struct {
			Key       string `json:"key"`
			ShardBits int    `json:"shard_bits"`
			Shard     int    `json:"shard"`
			Segment   string `json:"segment_key"`
		} `json:"shard_keys"`
	}
	readGolden(t, "gene_vectors.json", &g)
	if len(g.Genes) == 0 || len(g.ShardKeys) == 0 {
		t.Fatalf("%d genes, %d shard keys", len(g.Genes), len(g.ShardKeys))
	}
	for _, v := range g.Genes {
		gene := keyset.Gene{ShardBits: v.ShardBits, AppBits: v.AppBits, App: v.App}
		if got, err := gene.Compose(v.Index, v.Shard); err != nil || got != v.Key {
			t.Errorf("%+v.Compose(%d, %d) = %d, %v; want %d", gene, v.Index, v.Shard, got, err, v.Key)
		}
		want := keyset.GeneParts{Index: v.Index, Shard: v.Shard, App: v.App}
		if got := gene.Decompose(v.Key); got != want {
			t.Errorf("%+v.Decompose(%d) = %+v; want %+v", gene, v.Key, got, want)
		}
	}
	for _, v := range g.ShardKeys {
		if got := (keyset.Gene{ShardBits: v.ShardBits}).ShardKey(v.Key, v.Shard); got != v.Segment {
			t.Errorf("ShardKey(%q, %d) with %d shard bits = %q; want %q", v.Key, v.Shard, v.ShardBits, got, v.Segment)
		}
	}
}

// TestTextGolden pins decimal and each alphabet (base62, base58,
// crockford32), with and without prefix, both ways, and the other
// spellings crockford32 reads.
func TestTextGolden(t *testing.T) {
	var g struct {
		Forms []struct {
			Encoding  string       `json:"encoding"`
			Prefix    string       `json:"prefix"`
			Vectors   []goldenText `json:"vectors"`
			AlsoReads []goldenText `json:"also_reads"`
		} `json:"forms"`
	}
	readGolden(t, "text_vectors.json", &g)
	encodings := map[string]bool{}
	for _, c := range g.Forms {
		form := keyset.TextForm{Encoding: c.Encoding, Prefix: c.Prefix}
		checkText(t, form.String(), form, c.Vectors)
		for _, v := range c.AlsoReads {
			if got, err := form.Parse(v.Text); err != nil || got != v.Key {
				t.Errorf("%s: Parse(%q) = %d, %v; want %d", form, v.Text, got, err, v.Key)
			}
		}
		encodings[c.Encoding] = true
	}
	for _, enc := range []string{"", keyset.Base62, keyset.Base58, keyset.Crockford32} {
		if !encodings[enc] {
			t.Errorf("no vectors for encoding %q", enc)
		}
	}
}

// goldenKeyEnv is the variable the keyed forms of the known answers read.
const goldenKeyEnv = "IDSQL_GOLDEN_KEY"

// TestKeyedGolden pins each keyed form (encoding, prefix, key version):
// under its version's secret alone it writes each key as the known text,
// and with every version in the ring (another one current) it reads the
// text back as the key.
func TestKeyedGolden(t *testing.T) {
	var g struct {
		Secrets map[string]string `json:"secrets"`
		Forms   []struct {
			Encoding string       `json:"encoding"`
			Prefix   string       `json:"prefix"`
			Version  string       `json:"version"`
			Vectors  []goldenText `json:"vectors"`
		} `json:"forms"`
	}
	readGolden(t, "keyed_vectors.json", &g)
	if len(g.Forms) == 0 {
		t.Fatal("no forms")
	}
	for _, c := range g.Forms {
		form := keyset.TextForm{Encoding: c.Encoding, Prefix: c.Prefix, KeyEnv: goldenKeyEnv}
		what := form.String() + " version " + c.Version
		secret, ok := g.Secrets[c.Version]
		if !ok {
			t.Fatalf("%s: no secret", what)
		}
		t.Setenv(goldenKeyEnv, c.Version+":"+secret)
		for _, v := range c.Vectors {
			if got, err := form.AppendText(nil, v.Key); err != nil || string(got) != v.Text {
				t.Errorf("%s: AppendText(%d) = %q, %v; want %q", what, v.Key, got, err, v.Text)
			}
		}
		// Read with the whole ring, the text's version not the first.
		var ring []string
		for version, s := range g.Secrets {
			if version != c.Version {
				ring = append(ring, version+":"+s)
			}
		}
		t.Setenv(goldenKeyEnv, strings.Join(append(ring, c.Version+":"+secret), ","))
		if len(c.Vectors) == 0 {
			t.Errorf("%s: no vectors", what)
		}
		for _, v := range c.Vectors {
			if got, err := form.Parse(v.Text); err != nil || got != v.Key {
				t.Errorf("%s: Parse(%q) = %d, %v; want %d", what, v.Text, got, err, v.Key)
			}
		}
	}
}

// TestTypeIDGolden pins the TypeID of each preset's keys, with and without
// prefix, and of spread tables' stored keys (the TypeID of the key before
// its shape), both ways.
func TestTypeIDGolden(t *testing.T) {
	var g struct {
		Forms []struct {
			Layout string `json:"layout"`
			Prefix string `json:"prefix"`
			Shape  string `json:"shape"`
			Bits   int    `json:"bits"`
			Space  struct {
				Bits  int `json:"bits"`
				Low   int `json:"low"`
				Width int `json:"width"`
			} `json:"space"`
			Vectors []goldenText `json:"vectors"`
		} `json:"forms"`
	}
	readGolden(t, "typeid_vectors.json", &g)
	presets := map[string]bool{}
	for _, c := range g.Forms {
		l, err := snowflake.Preset(c.Layout)
		if err != nil {
			t.Fatal(err)
		}
		form := keyset.TextForm{Encoding: keyset.TypeID, Prefix: c.Prefix}.WithLayout(l)
		s := shape.Shape{Spread: shape.Spread(c.Shape), Bits: c.Bits}
		if !s.IsOrdered() {
			form = form.WithShape(s, shape.Space{Bits: c.Space.Bits, Low: c.Space.Low, Width: c.Space.Width})
		}
		checkText(t, c.Layout+" "+form.String()+" "+s.String(), form, c.Vectors)
		presets[c.Layout] = true
	}
	for _, name := range []string{"leaf", "uid32", "sony", "sony-widths", "js53"} {
		if !presets[name] {
			t.Errorf("no TypeID vectors for preset %s", name)
		}
	}
}
