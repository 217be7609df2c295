package keyform_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/snowflake"
)

const (
	secretA = "Zp9xQ2vL7mN4kR8tW1yB6cD3"
	secretB = "kq3MfH5jT0sV9gX2aE7uP4nC"
)

// keyedForms are a keyed form in each encoding, keyed by IDSQL_TEST_KEY.
var keyedForms = []keyform.Form{
	{Encoding: keyform.Base62, Prefix: "ord_", KeyEnv: "IDSQL_TEST_KEY"},
	{Encoding: keyform.Base58, Prefix: "inv_", KeyEnv: "IDSQL_TEST_KEY"},
	{Encoding: keyform.Crockford32, Prefix: "T", KeyEnv: "IDSQL_TEST_KEY"},
}

// TestKeyedText: keys round-trip in every keyed encoding at a fixed
// width, consecutive keys give unrelated texts, and the same key in two
// forms (another prefix) gives unrelated blocks.
func TestKeyedText(t *testing.T) {
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	widths := map[string]int{keyform.Base62: 16, keyform.Base58: 17, keyform.Crockford32: 19}
	for _, form := range keyedForms {
		if form.SortsAsKeys() {
			t.Errorf("%v: a keyed form says its texts sort as its keys", form)
		}
		var prev string
		for _, id := range []int64{1, 2, 3, 1000, 1001, 1 << 40, 1<<40 + 1, math.MaxInt64 - 1, math.MaxInt64} {
			b, err := form.AppendText(nil, id)
			s := string(b)
			if err != nil {
				t.Fatalf("%v: AppendText(%d): %v", form, id, err)
			}
			if want := len(form.Prefix) + 1 + widths[form.Encoding]; len(s) != want || !strings.HasPrefix(s, form.Prefix+"1") {
				t.Errorf("%v: %d is %q: want %d characters, the prefix and version 1", form, id, s, want)
			}
			if got, err := form.Parse(s); err != nil || got != id {
				t.Errorf("%v: Parse(%q) = %d, %v; want %d", form, s, got, err, id)
			}
			// Neighbours share no more than a few leading characters
			// after the version: the block is a permutation, not a count.
			if prev != "" {
				common := 0
				for common < len(s) && s[common] == prev[common] {
					common++
				}
				if common > len(form.Prefix)+1+3 {
					t.Errorf("%v: %q and %q share %d leading characters", form, prev, s, common)
				}
			}
			prev = s
		}
	}
	a := keyform.Form{Encoding: keyform.Base62, Prefix: "ord_", KeyEnv: "IDSQL_TEST_KEY"}
	b := keyform.Form{Encoding: keyform.Base62, Prefix: "inv_", KeyEnv: "IDSQL_TEST_KEY"}
	if sa, sb := a.Format(42), b.Format(42); sa[4:] == sb[4:] {
		t.Errorf("key 42 is %q and %q: the prefix should tweak the permutation", sa, sb)
	}
	if _, err := b.Parse("inv_" + a.Format(42)[4:]); !errors.Is(err, keyform.ErrText) {
		t.Errorf("ord_'s block under inv_: %v; want ErrText", err)
	}
}

// TestKeyedTextMissingSecret: without its variable a keyed form fails to
// write or read, with an error naming the variable that wraps ErrTextKey
// (not ErrText: the text may be fine); Format writes a text no form reads.
func TestKeyedTextMissingSecret(t *testing.T) {
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	form := keyedForms[0]
	text := form.Format(42)
	t.Setenv("IDSQL_TEST_KEY", "")
	if _, err := form.AppendText(nil, 42); !errors.Is(err, keyform.ErrTextKey) || !strings.Contains(err.Error(), "IDSQL_TEST_KEY") {
		t.Errorf("AppendText without the variable: %v", err)
	}
	_, err := form.Parse(text)
	if !errors.Is(err, keyform.ErrTextKey) || errors.Is(err, keyform.ErrText) || !strings.Contains(err.Error(), "IDSQL_TEST_KEY is not set") {
		t.Errorf("Parse without the variable: %v", err)
	}
	s := form.Format(42)
	if !strings.HasPrefix(s, "!(") {
		t.Errorf("Format without the variable = %q; want !(...)", s)
	}
	if _, err := form.Parse(s); err == nil {
		t.Errorf("Parse(%q) succeeded", s)
	}
}

// TestKeyedTextRotation: texts of an old version still read once a newer
// secret leads the ring, new texts carry the new version, a version the
// ring lacks is ErrTextKey, and a text under another secret is refused.
func TestKeyedTextRotation(t *testing.T) {
	form := keyedForms[0]
	ids := []int64{1, 77, 1 << 50, math.MaxInt64}
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	var v1 []string
	for _, id := range ids {
		v1 = append(v1, form.Format(id))
	}
	// Staged: the new secret reads but does not write.
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA+",2:"+secretB)
	for i, id := range ids {
		if s := form.Format(id); s != v1[i] {
			t.Errorf("staged ring writes %q for %d; want the version 1 text %q", s, id, v1[i])
		}
	}
	// Rotated.
	t.Setenv("IDSQL_TEST_KEY", "2:"+secretB+",1:"+secretA)
	for i, id := range ids {
		s := form.Format(id)
		if !strings.HasPrefix(s, "ord_2") || s[5:] == v1[i][5:] {
			t.Errorf("rotated ring writes %q for %d (version 1 wrote %q)", s, id, v1[i])
		}
		for _, text := range []string{s, v1[i]} {
			if got, err := form.Parse(text); err != nil || got != id {
				t.Errorf("rotated ring: Parse(%q) = %d, %v; want %d", text, got, err, id)
			}
		}
	}
	// Version 1 dropped.
	t.Setenv("IDSQL_TEST_KEY", "2:"+secretB)
	if _, err := form.Parse(v1[0]); !errors.Is(err, keyform.ErrTextKey) || !strings.Contains(err.Error(), "version 1") {
		t.Errorf("Parse of a version 1 text without its secret: %v", err)
	}
	// Version 1 under another secret: the check bits do not match.
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretB)
	for _, s := range v1 {
		if got, err := form.Parse(s); !errors.Is(err, keyform.ErrText) {
			t.Errorf("Parse(%q) under another secret = %d, %v; want ErrText", s, got, err)
		}
	}
}

// TestKeyedTextRing: malformed rings are ErrTextKey errors naming the
// variable, never quoting a secret.
func TestKeyedTextRing(t *testing.T) {
	for _, tt := range []struct{ value, want string }{
		{secretA, "entry 1 is not"},
		{"0:" + secretA, "entry 1 is not"},
		{"10:" + secretA, "entry 1 is not"},
		{"1:" + secretA + ",x", "entry 2 is not"},
		{"1:short", "has 5 bytes; want at least 16"},
		{"1:" + secretA + ",1:" + secretB, "version 1 is given twice"},
	} {
		t.Setenv("IDSQL_TEST_KEY", tt.value)
		_, err := keyedForms[0].AppendText(nil, 1)
		if !errors.Is(err, keyform.ErrTextKey) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "IDSQL_TEST_KEY") ||
			strings.Contains(err.Error(), secretA) || strings.Contains(err.Error(), secretB) || strings.Contains(err.Error(), "short") {
			t.Errorf("ring %q: %v; want ErrTextKey saying %q", tt.value, err, tt.want)
		}
	}
}

// TestKeyedTextGarbage: random texts of the right shape do not read as
// keys. Each reads with probability below 2^-31 (the 31 check bits), so
// 20000 of them all fail but for about 1 in 100000 seeds; the seed is fixed.
func TestKeyedTextGarbage(t *testing.T) {
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	r := rand.New(rand.NewPCG(1, 2))
	const digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	form := keyedForms[0]
	refused := 0
	for range 20000 {
		b := []byte("ord_1")
		for range 16 {
			b = append(b, digits[r.IntN(62)])
		}
		if id, err := form.Parse(string(b)); err == nil {
			t.Errorf("random %q reads as %d", b, id)
		} else if errors.Is(err, keyform.ErrText) {
			refused++
		}
	}
	if refused != 20000 {
		t.Errorf("%d of 20000 refused with ErrText", refused)
	}
	// One character changed in a real text.
	s := []byte(form.Format(123456789))
	for i := 5; i < len(s); i++ {
		c := s[i]
		s[i] = digits[(strings.IndexByte(digits, c)+1)%62]
		if id, err := form.Parse(string(s)); err == nil {
			t.Errorf("%q (one character changed) reads as %d", s, id)
		}
		s[i] = c
	}
}

// FuzzKeyedText: every positive key survives Format and Parse in every
// keyed encoding, and a text Parse accepts is the one text Format writes
// for its key (up to crockford32's case and aliases): no other string,
// garbage included, reads as a key.
func FuzzKeyedText(f *testing.F) {
	f.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	for _, form := range keyedForms {
		for _, id := range []int64{1, 42, math.MaxInt64} {
			f.Add(id, form.Format(id))
		}
	}
	f.Add(int64(-1), "ord_1zzzzzzzzzzzzzzzz")
	f.Add(int64(0), "ord_2000000000000000")
	f.Add(int64(5), "T10000000000000000000")
	f.Fuzz(func(t *testing.T, id int64, s string) {
		for _, form := range keyedForms {
			if id > 0 {
				if got, err := form.Parse(form.Format(id)); err != nil || got != id {
					t.Fatalf("%v: Parse(Format(%d)) = %d, %v", form, id, got, err)
				}
			} else if _, err := form.AppendText(nil, id); !errors.Is(err, keyform.ErrText) {
				t.Fatalf("%v: AppendText(%d): %v; want ErrText", form, id, err)
			}
			v, err := form.Parse(s)
			if err != nil {
				continue
			}
			canon := s
			if form.Encoding == keyform.Crockford32 {
				canon = strings.NewReplacer("I", "1", "L", "1", "O", "0").Replace(strings.ToUpper(s))
			}
			if back := form.Format(v); v <= 0 || back != canon {
				t.Fatalf("%v: Parse(%q) = %d, whose text is %q", form, s, v, back)
			}
		}
	})
}

// BenchmarkTextForms: the cost of writing and reading one key in a plain,
// a keyed and a TypeID form, through a table's codec (which keeps a keyed
// form's parsed ring).
func BenchmarkTextForms(b *testing.B) {
	b.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	id, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Worker: 5, Sequence: 7})
	for _, f := range []keyform.Form{
		{Encoding: keyform.Base62, Prefix: "ord_"},
		keyedForms[0],
		{Encoding: keyform.TypeID, Prefix: "user"},
	} {
		form := keyform.MustCodec(keyform.Spec{Table: "t", Layout: snowflake.Leaf, Form: f}).Form()
		name := form.Encoding
		if form.Keyed() {
			name += "-keyed"
		}
		b.Run(name+"/format", func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf, _ = form.AppendText(buf[:0], id)
			}
		})
		text := form.Format(id)
		b.Run(name+"/parse", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := form.Parse(text); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestKeyedTextConcurrent: goroutines sharing a keyed form (and its pooled
// permutations) each get their own keys back; run with -race.
func TestKeyedTextConcurrent(t *testing.T) {
	t.Setenv("IDSQL_TEST_KEY", "1:"+secretA)
	done := make(chan error)
	for g := range 4 {
		go func() {
			for i := range int64(200) {
				id := int64(g)<<40 + i + 1
				form := keyedForms[int(i)%len(keyedForms)]
				if got, err := form.Parse(form.Format(id)); err != nil || got != id {
					done <- fmt.Errorf("%v: %d came back as %d, %v", form, id, got, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
