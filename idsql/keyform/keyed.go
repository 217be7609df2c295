package keyform

// Keyed text forms (Form.KeyEnv): the text of a key is a keyed
// permutation of it, so consecutive keys give unrelated texts and only a
// holder of the secret can read a text back, or make one that reads.
//
// Text: the prefix, one version digit ('1'..'9', naming the secret), then a
// 94-bit block at a fixed width of the form's alphabet (16 base62, 17
// base58 or 19 crockford32 characters; 62^16, 58^17 and 32^19 all exceed
// 2^94). The block is the key's 63 bits followed by 31 zero bits, put
// through an 8-round balanced Feistel network on two 47-bit halves whose
// round function is HMAC-SHA256 under the version's secret, of the round
// number, the form (encoding and prefix) and the half. Parsing runs the
// network backwards and requires the 31 low bits to come back zero and the
// key to be non-zero: that is what refuses garbage. A text that is not a
// valid one (a typo, another secret, a guess) reads as a key only when its
// block, put through the inverse permutation, happens to end in 31 zero
// bits: for a random block that is (2^63-1)/2^94, less than 2^-31 (about
// one in 2.1 billion); a random 16-character base62 string is a block at
// all (below 2^94) with probability 2^94/62^16, about 0.42, so reads with
// probability under 2^-32.
//
// Secrets: the environment variable named by KeyEnv holds a key ring,
// entries "<version>:<secret>" separated by commas, the first one current:
//
//	IDSQL_ORD_KEY="2:kq3M...new...,1:Zp9x...old..."
//
// Texts are written with the first entry's secret and version; every entry
// reads the texts of its version. A version is 1 to 9; a secret is at least
// 16 bytes (use e.g. `openssl rand -base64 32`) and holds no comma. To
// rotate: add the new secret as a second entry everywhere (it then reads but
// does not write), then move it first; drop an old entry once no text of
// its version needs to be read. The variable is read when a keyed form
// writes or reads a text, never at configuration load, so a program that
// never writes or reads keyed texts does not need it; a missing or
// malformed variable is then an error wrapping ErrTextKey that names it.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math/bits"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// ErrTextKey is wrapped by the error of a keyed text form (Form.KeyEnv)
// whose environment variable is not set or holds no valid key ring, and of
// a text whose version has no secret in it. Such an error is about the
// process's environment, not about the text: it does not wrap ErrText.
var ErrTextKey = errors.New("idsql: keyed text form's secret")

const (
	keyedHalf   = 47                   // bits of each Feistel half
	keyedCheck  = 2*keyedHalf - 63     // zero bits under the key: 31
	keyedRounds = 8                    // Feistel rounds
	keyedMask   = 1<<keyedHalf - 1     // a half's bits
	minSecret   = 16                   // bytes of the shortest secret
	keyedDomain = "idsql keyed text 1" // HMAC domain separation
)

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// keyedWidth returns the characters of a keyed text's block in alphabet a:
// the fewest that hold every value below 2^94.
func keyedWidth(a *alphabet) int {
	base := uint64(len(a.digits))
	var hi, lo uint64 = 0, 1 // base^w as 128 bits
	for w := 1; ; w++ {
		h1, l1 := bits.Mul64(lo, base)
		hi, lo = hi*base+h1, l1
		if hi >= 1<<(2*keyedHalf-64) {
			return w
		}
	}
}

// keyRing is the parsed value of a keyed form's variable.
type keyRing struct {
	current byte            // the version texts are written with
	secrets map[byte][]byte // version digit → secret
	order   []byte          // versions as listed, for errors
	pools   sync.Map        // form and version → *sync.Pool of *feistel
}

// feistel returns a permutation of form f under version v (whose secret
// the ring holds) from a pool; put it back with done.
func (r *keyRing) feistel(f Form, v byte) (p *feistel, done func()) {
	key := f.Encoding + "\x00" + f.Prefix + "\x00" + string(v)
	pool, ok := r.pools.Load(key)
	if !ok {
		secret := r.secrets[v]
		pool, _ = r.pools.LoadOrStore(key, &sync.Pool{New: func() any { return f.newFeistel(secret, v) }})
	}
	p = pool.(*sync.Pool).Get().(*feistel)
	return p, func() { pool.(*sync.Pool).Put(p) }
}

// ringSlot keeps the last parsed ring of a codec's keyed form (see
// Codec), with the variable's value it was parsed from; the ring is parsed
// again when the value changes.
type ringSlot struct {
	last atomic.Pointer[ringEntry]
}

type ringEntry struct {
	value string
	ring  *keyRing
	err   error
}

// ring returns the key ring of the form's variable: the one its codec
// keeps while the variable holds the same value; a form outside a codec
// parses it on every call.
func (f Form) ring() (*keyRing, error) {
	value, ok := os.LookupEnv(f.KeyEnv)
	if !ok || value == "" {
		return nil, fmt.Errorf("%w: the environment variable %s is not set (the text form %s needs it: "+
			"set it to \"1:<secret>\", a secret of at least %d bytes such as `openssl rand -base64 32` prints)",
			ErrTextKey, f.KeyEnv, f, minSecret)
	}
	if f.rings != nil {
		if e := f.rings.last.Load(); e != nil && e.value == value {
			return e.ring, e.err
		}
	}
	r, err := parseRing(value)
	if err != nil {
		err = fmt.Errorf("%w: the environment variable %s (for the text form %s): %v", ErrTextKey, f.KeyEnv, f, err)
	}
	if f.rings != nil {
		f.rings.last.Store(&ringEntry{value: value, ring: r, err: err})
	}
	return r, err
}

// parseRing reads "<version>:<secret>,...". Its errors never quote a
// secret.
func parseRing(value string) (*keyRing, error) {
	r := &keyRing{secrets: map[byte][]byte{}}
	for i, entry := range strings.Split(value, ",") {
		v, secret, ok := strings.Cut(entry, ":")
		switch {
		case !ok || len(v) != 1 || v[0] < '1' || v[0] > '9':
			return nil, fmt.Errorf("entry %d is not \"<version>:<secret>\" with a version 1 to 9", i+1)
		case r.secrets[v[0]] != nil:
			return nil, fmt.Errorf("version %s is given twice", v)
		case len(secret) < minSecret:
			return nil, fmt.Errorf("the secret of version %s has %d bytes; want at least %d", v, len(secret), minSecret)
		}
		if i == 0 {
			r.current = v[0]
		}
		r.secrets[v[0]] = []byte(secret)
		r.order = append(r.order, v[0])
	}
	return r, nil
}

// feistel is the keyed permutation of one version of one form.
type feistel struct {
	h     hash.Hash
	tweak []byte
	sum   []byte
}

func (f Form) newFeistel(secret []byte, version byte) *feistel {
	h := hmac.New(sha256.New, secret)
	var tweak []byte
	tweak = append(tweak, keyedDomain...)
	tweak = append(tweak, 0)
	tweak = append(tweak, f.Encoding...)
	tweak = append(tweak, 0)
	tweak = append(tweak, f.Prefix...)
	tweak = append(tweak, 0, version, 0)
	tweak = slices.Grow(tweak, 9) // room for the round number and the half
	return &feistel{h: h, tweak: tweak, sum: make([]byte, 0, sha256.Size)}
}

// round is the round function: 47 bits of HMAC(secret, tweak, round, x).
func (p *feistel) round(i int, x uint64) uint64 {
	p.h.Reset()
	msg := append(p.tweak, byte(i)) // into its spare capacity
	msg = binary.BigEndian.AppendUint64(msg, x)
	p.h.Write(msg)
	p.sum = p.h.Sum(p.sum[:0])
	return binary.BigEndian.Uint64(p.sum) & keyedMask
}

// encrypt maps the key's block to the text's block (both as two halves).
func (p *feistel) encrypt(l, r uint64) (uint64, uint64) {
	for i := range keyedRounds {
		l, r = r, l^p.round(i, r)
	}
	return l, r
}

// decrypt undoes encrypt.
func (p *feistel) decrypt(l, r uint64) (uint64, uint64) {
	for i := keyedRounds - 1; i >= 0; i-- {
		l, r = r^p.round(i, l), l
	}
	return l, r
}

// appendKeyed appends id in the keyed form f (alphabet a) to dst.
func (f Form) appendKeyed(dst []byte, a *alphabet, id int64) ([]byte, error) {
	if id <= 0 {
		return dst, fmt.Errorf("%w: %d is not a key: keys are positive (%s)", ErrText, id, f)
	}
	ring, err := f.ring()
	if err != nil {
		return dst, err
	}
	p, done := ring.feistel(f, ring.current)
	k := uint64(id)
	l, r := p.encrypt(k>>(63-keyedHalf), (k<<keyedCheck)&keyedMask)
	done()
	// The block l·2^47 + r as 128 bits, written in base len(a.digits).
	hi, lo := l>>(64-keyedHalf), l<<keyedHalf|r
	dst = append(dst, f.Prefix...)
	dst = append(dst, ring.current)
	w, base := keyedWidth(a), uint64(len(a.digits))
	start := len(dst)
	for range w {
		dst = append(dst, 0)
	}
	for i := start + w - 1; i >= start; i-- {
		var rem uint64
		hi, rem = hi/base, hi%base
		lo, rem = bits.Div64(rem, lo, base)
		dst[i] = a.digits[rem]
	}
	return dst, nil
}

// parseKeyed reads rest, a text of the keyed form f after its prefix.
func (f Form) parseKeyed(a *alphabet, rest string) (int64, error) {
	w := keyedWidth(a)
	if len(rest) != 1+w {
		return 0, fmt.Errorf("%w: want a version digit and %d characters after the prefix, not %d characters (%s)", ErrText, w, len(rest), f)
	}
	v := rest[0]
	if v < '1' || v > '9' {
		return 0, fmt.Errorf("%w: %q is not a version digit 1 to 9 (%s)", ErrText, v, f)
	}
	var hi, lo uint64
	base := uint64(len(a.digits))
	for i := 1; i < len(rest); i++ {
		d := a.value[rest[i]]
		if d < 0 {
			return 0, fmt.Errorf("%w: %q is not a %s digit", ErrText, rest[i], f.Encoding)
		}
		h1, l1 := bits.Mul64(lo, base)
		l2, carry := bits.Add64(l1, uint64(d), 0)
		hi, lo = hi*base+h1+carry, l2
		if hi >= 1<<(2*keyedHalf-64) {
			return 0, fmt.Errorf("%w: not a text of this keyed form: beyond its %d bits (%s)", ErrText, 2*keyedHalf, f)
		}
	}
	ring, err := f.ring()
	if err != nil {
		return 0, err
	}
	secret := ring.secrets[v]
	if secret == nil {
		return 0, fmt.Errorf("%w: the text has version %c, which the environment variable %s has no secret for (it holds version %s)",
			ErrTextKey, v, f.KeyEnv, strings.Join(strings.Split(string(ring.order), ""), ", "))
	}
	p, done := ring.feistel(f, v)
	l, r := p.decrypt(hi<<(64-keyedHalf)|lo>>keyedHalf, lo&keyedMask)
	done()
	if r&(1<<keyedCheck-1) != 0 {
		return 0, fmt.Errorf("%w: not a text of this keyed form under secret version %c: its check bits do not match (%s)", ErrText, v, f)
	}
	k := l<<(63-keyedHalf) | r>>keyedCheck
	if k == 0 {
		return 0, fmt.Errorf("%w: zero is never a key (%s)", ErrText, f)
	}
	return int64(k), nil
}
