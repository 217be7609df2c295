package keyform

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/idsql/idsql/idsql/shape"
)

// The encodings of a table's text form (TableConfig.Text).
const (
	// Base62 writes a key in 11 characters of 0-9A-Za-z.
	Base62 = "base62"
	// Base58 writes a key in 11 characters of Bitcoin's alphabet (base62
	// without 0, O, I and l, which are easily confused).
	Base58 = "base58"
	// Crockford32 writes a key in 13 characters of Douglas Crockford's
	// base 32 (0-9 and A-Z without I, L, O and U); parsing ignores case
	// and reads I and L as 1, O as 0.
	Crockford32 = "crockford32"
)

// ErrText is wrapped by every error about a text that is not a key in a
// table's text form.
var ErrText = errors.New("idsql: not a key in its text form")

// ErrAmbiguousKey is wrapped (with ErrText) by the error of ParseKey for
// a text that reads as two different keys: a decimal number that is also
// a key in the text form of a table without prefix (an alphabet with
// digits, as crockford32's, writes some keys with digits alone).
var ErrAmbiguousKey = errors.New("idsql: ambiguous key text")

// Form is how a table's keys are written as text (tables.T.text in
// the configuration), for the generated key types' String, MarshalText,
// MarshalJSON and Parse, and for decoding by the CLI and the ID server.
// The zero value is decimal, without prefix. In YAML:
//
//	orders: {strategy: snowflake, text: {encoding: base62, prefix: "ord_"}}
//	invoices: {strategy: segment, text: {encoding: base62, prefix: "inv_", key_env: IDSQL_INV_KEY}}
//	users: {strategy: snowflake, text: {encoding: typeid, prefix: "user"}}
//
// With an encoding every key is written at its full width (leading zero
// digits kept), and each alphabet is in ASCII order, so the texts of one
// table sort byte by byte (C collation) exactly as its keys do. A
// database's locale-aware collation may not keep that order (base62 and
// base58 mix upper and lower case; a case-insensitive collation ties them),
// and decimal text, of varying width, never sorts like the numbers.
//
// A prefix is written before the encoded key and required when parsing, so
// a key of one table does not parse as a key of another.
//
// With KeyEnv the form is keyed: the text is a keyed permutation of the key
// under a secret from that environment variable, so texts do not sort like
// keys, do not tell how many keys were issued, and read back only with the
// secret. The variable holds a key ring, "<version>:<secret>" entries
// (version 1 to 9, a secret of at least 16 bytes) separated by commas; the
// first writes, every entry reads texts of its version, which is the digit
// after the prefix (so "2:new,1:old" rotates without breaking old texts).
// The text is the prefix, the version and a 94-bit block (16 base62, 17
// base58 or 19 crockford32 characters): the key's 63 bits and 31 zero bits
// through an 8-round Feistel network with HMAC-SHA256 round functions.
// Reading checks the 31 bits, so a string that is not such a text reads as
// a key with probability below 2^-31. The variable is read when a text is
// written or read, never at configuration load; its absence is an error
// wrapping ErrTextKey that names it.
//
// The encoding typeid writes a snowflake key as a TypeID whose UUID is a
// UUIDv7 of the key's time, worker and sequence (see TypeID); such a form
// needs the layout, which keyset.Config.TextForm and the generated code bind with
// WithLayout, and, for a table with a spread shape, the shape, bound with
// WithShape.
type Form struct {
	// Encoding is base62, base58, crockford32 or typeid; empty means
	// decimal.
	Encoding string `yaml:"encoding"`
	// Prefix is written before every key: 1 to 16 letters, digits and _,
	// as "ord_". For typeid it is the TypeID's type prefix, up to 63 of
	// a-z and _ (not at either end), and the separator '_' is written
	// after it: "user" gives user_01jq....
	Prefix string `yaml:"prefix"`
	// KeyEnv names the environment variable holding the secrets of a keyed
	// form (base62, base58 or crockford32, with a prefix). The secrets
	// never sit in the configuration; the variable is read when a key is
	// written or read, not when the configuration is loaded.
	KeyEnv string `yaml:"key_env"`

	tid   tidLayout  // a typeid form's layout, set by WithLayout
	shape shape.Func // a typeid form's key shape, set by WithShape (zero: ordered)
	rings *ringSlot  // a keyed form's parsed ring, kept by its Codec
}

var prefixRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,16}$`)

// alphabet describes one encoding.
type alphabet struct {
	digits string
	width  int // characters of the largest int64
	value  [256]int8
}

// newAlphabet returns the encoding with digits, in ASCII order, and width.
// With fold, lower-case letters read as upper case; aliases are pairs of
// (alias, digit) read as that digit.
func newAlphabet(digits string, width int, fold bool, aliases string) *alphabet {
	a := &alphabet{digits: digits, width: width}
	for i := range a.value {
		a.value[i] = -1
	}
	for i := range len(digits) {
		a.value[digits[i]] = int8(i)
	}
	for i := 0; i+1 < len(aliases); i += 2 {
		a.value[aliases[i]] = a.value[aliases[i+1]]
	}
	if fold {
		for c := 'a'; c <= 'z'; c++ {
			a.value[c] = a.value[c-'a'+'A']
		}
	}
	return a
}

var alphabets = map[string]*alphabet{
	Base62:      newAlphabet("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 11, false, ""),
	Base58:      newAlphabet("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 11, false, ""),
	Crockford32: newAlphabet("0123456789ABCDEFGHJKMNPQRSTVWXYZ", 13, true, "I1L1O0"),
}

// Validate checks the form, returning an error for the field it names
// ("encoding", "prefix" or "key_env"). It does not read KeyEnv's variable,
// nor check a typeid form's layout (Config.Validate does).
func (f Form) Validate() (field string, err error) {
	if _, ok := alphabets[f.Encoding]; f.Encoding != "" && f.Encoding != TypeID && !ok {
		return "encoding", fmt.Errorf("unknown encoding %q (want %s, %s, %s or %s; leave it out for decimal)", f.Encoding, Base62, Base58, Crockford32, TypeID)
	}
	if f.Encoding == TypeID {
		if !validTypeIDPrefix(f.Prefix) {
			return "prefix", fmt.Errorf("%q is not a TypeID prefix: up to 63 lowercase letters a-z and _, not at either end (the separator _ is added)", f.Prefix)
		}
		if f.KeyEnv != "" {
			return "key_env", errors.New("a TypeID cannot be keyed: its UUIDv7 shows the key's time by design (use base62, base58 or crockford32 for a keyed form)")
		}
		return "", nil
	}
	if f.Prefix != "" && !prefixRE.MatchString(f.Prefix) {
		return "prefix", fmt.Errorf("%q is not a prefix: 1 to 16 letters, digits and _", f.Prefix)
	}
	if f.KeyEnv != "" {
		switch {
		case !envNameRE.MatchString(f.KeyEnv):
			return "key_env", fmt.Errorf("%q is not an environment variable name (letters, digits and _, not starting with a digit); "+
				"key_env names the variable that holds the secret, never the secret itself", f.KeyEnv)
		case f.Encoding == "":
			return "key_env", errors.New("a keyed form needs an encoding: base62, base58 or crockford32")
		case f.Prefix == "":
			return "key_env", errors.New("a keyed form needs a prefix, so that its texts are told from decimal keys and other tables' without the secret")
		}
	}
	return "", nil
}

// Decimal reports whether the form writes decimal digits without prefix,
// as keys are written by default.
func (f Form) Decimal() bool { return f.Encoding == "" && f.Prefix == "" && f.KeyEnv == "" }

// Keyed reports whether the form is keyed by a secret (KeyEnv).
func (f Form) Keyed() bool { return f.KeyEnv != "" }

// SortsAsKeys reports whether the texts of the form sort byte by byte (C
// collation) as the keys they write do: an encoding at full width, not
// keyed (a keyed text is a permutation), and for TypeID not bound to a
// spread shape (its texts then follow the keys before the shape). Decimal
// texts, of varying width, do not.
func (f Form) SortsAsKeys() bool {
	return f.Encoding != "" && !f.Keyed() && (f.Encoding != TypeID || f.shape.Shape().IsOrdered())
}

// Lead is what every text of the form starts with: the prefix, and for a
// TypeID with a prefix the separator.
func (f Form) Lead() string {
	if f.Encoding == TypeID && f.Prefix != "" {
		return f.Prefix + "_"
	}
	return f.Prefix
}

// String describes the form: "base62, prefix ord_", "base62, prefix ord_,
// keyed by $IDSQL_ORD_KEY", or "decimal".
func (f Form) String() string {
	enc := f.Encoding
	if enc == "" {
		enc = "decimal"
	}
	if f.Prefix != "" {
		enc += ", prefix " + f.Prefix
	}
	if f.KeyEnv != "" {
		enc += ", keyed by $" + f.KeyEnv
	}
	return enc
}

// Format returns id in the form. id must be positive, as every key is.
// When the form cannot write id (a keyed form whose variable is unset, a
// typeid form without its layout, or an id that is no key) it returns
// "!(" + the error + ")", which no form parses; use AppendText for the
// error.
func (f Form) Format(id int64) string { return string(f.Append(nil, id)) }

// Append appends id in the form to dst; on error it appends what Format
// returns then.
func (f Form) Append(dst []byte, id int64) []byte {
	out, err := f.AppendText(dst, id)
	if err != nil {
		out = append(append(append(dst, "!("...), err.Error()...), ')')
	}
	return out
}

// AppendText appends id in the form to dst, or returns dst and an error:
// for a keyed form, one wrapping ErrTextKey when its variable is unset or
// malformed; for a typeid form, one wrapping ErrText when it has no layout
// or id is not a key of it; for a keyed or typeid form, one wrapping
// ErrText for an id that is not positive. Other forms never fail.
func (f Form) AppendText(dst []byte, id int64) ([]byte, error) {
	if f.Encoding == TypeID {
		return f.appendTypeID(dst, id)
	}
	a := alphabets[f.Encoding]
	if a != nil && f.KeyEnv != "" {
		return f.appendKeyed(dst, a, id)
	}
	dst = append(dst, f.Prefix...)
	if a == nil {
		return strconv.AppendInt(dst, id, 10), nil
	}
	n, base := uint64(id), uint64(len(a.digits))
	start := len(dst)
	for range a.width {
		dst = append(dst, 0)
	}
	for i := len(dst) - 1; i >= start; i-- {
		dst[i] = a.digits[n%base]
		n /= base
	}
	return dst, nil
}

// Parse reads a key written in the form: the prefix, then the encoded key
// at its full width (decimal: any width). It fails, wrapping ErrText, for
// anything else, and for zero, negative and out-of-range values. A keyed
// form's text is the prefix, a version digit and its block; its errors
// wrap ErrTextKey instead when its variable is unset or malformed or has
// no secret of the text's version. A typeid form reads a TypeID of its
// prefix whose UUIDv7 it could have written.
func (f Form) Parse(s string) (int64, error) {
	if f.Encoding == TypeID {
		return f.parseTypeIDKey(s)
	}
	rest, ok := strings.CutPrefix(s, f.Prefix)
	if !ok {
		return 0, fmt.Errorf("%w: want the prefix %q (%s)", ErrText, f.Prefix, f)
	}
	a := alphabets[f.Encoding]
	if a != nil && f.KeyEnv != "" {
		return f.parseKeyed(a, rest)
	}
	if a == nil {
		v, err := strconv.ParseInt(rest, 10, 64)
		if err != nil || v <= 0 {
			return 0, fmt.Errorf("%w: want a positive decimal integer (%s)", ErrText, f)
		}
		return v, nil
	}
	if len(rest) != a.width {
		return 0, fmt.Errorf("%w: want %d characters after the prefix, not %d (%s)", ErrText, a.width, len(rest), f)
	}
	var n uint64
	base := uint64(len(a.digits))
	for i := range len(rest) {
		d := a.value[rest[i]]
		if d < 0 {
			return 0, fmt.Errorf("%w: %q is not a %s digit", ErrText, rest[i], f.Encoding)
		}
		hi := n * base
		if hi/base != n || hi+uint64(d) < hi || hi+uint64(d) > 1<<63-1 {
			return 0, fmt.Errorf("%w: beyond the largest 64-bit key (%s)", ErrText, f)
		}
		n = hi + uint64(d)
	}
	if n == 0 {
		return 0, fmt.Errorf("%w: zero is never a key (%s)", ErrText, f)
	}
	return int64(n), nil
}
