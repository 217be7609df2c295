package keyform

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestTypeIDSpecVectors checks idsql's TypeID reading and writing against
// the spec's own examples (testdata/typeid): each valid TypeID parses to
// its prefix and UUID and is written back from them exactly, and each
// invalid one is refused.
func TestTypeIDSpecVectors(t *testing.T) {
	var valid []struct{ Name, TypeID, Prefix, UUID string }
	var invalid []struct{ Name, TypeID, Description string }
	for file, v := range map[string]any{"valid.json": &valid, "invalid.json": &invalid} {
		data, err := os.ReadFile("testdata/typeid/" + file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	if len(valid) == 0 || len(invalid) == 0 {
		t.Fatalf("%d valid and %d invalid vectors", len(valid), len(invalid))
	}
	for _, v := range valid {
		prefix, hi, lo, err := parseTypeID(v.TypeID)
		var u [16]byte
		for i := range 8 {
			u[i], u[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
		}
		got := hex.EncodeToString(u[:])
		if want := strings.ReplaceAll(v.UUID, "-", ""); err != nil || prefix != v.Prefix || got != want {
			t.Errorf("%s: parse %q = %q, %s, %v; want %q, %s", v.Name, v.TypeID, prefix, got, err, v.Prefix, want)
			continue
		}
		text := string(appendTypeIDSuffix([]byte(lead(v.Prefix)), hi, lo))
		if text != v.TypeID {
			t.Errorf("%s: write %q, %s = %q; want %q", v.Name, v.Prefix, got, text, v.TypeID)
		}
	}
	for _, v := range invalid {
		if prefix, hi, lo, err := parseTypeID(v.TypeID); err == nil {
			t.Errorf("%s (%s): %q parsed as %q, %016x%016x", v.Name, v.Description, v.TypeID, prefix, hi, lo)
		}
	}
}

func lead(prefix string) string {
	if prefix == "" {
		return ""
	}
	return prefix + "_"
}
