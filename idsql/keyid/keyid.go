package keyid

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/shape"
	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrInvalid is wrapped by every error about a value that is not a valid
// key: not a positive decimal int64, NULL, or not decodable with the key's
// layout.
var ErrInvalid = errors.New("keyid: invalid ID")

// Error describes a value that is not a valid key of a key type. It wraps
// ErrInvalid and Err.
type Error struct {
	Type  string // the key type, qualified by its package: "shop.OrderID"
	Op    string // "parse", "unmarshal", "scan" or "decode"
	Input string // the rejected value as the message shows it
	Err   error  // why it was rejected
}

func (e *Error) Error() string {
	msg := e.Type + ": " + e.Op + " " + e.Input + ": invalid ID"
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns ErrInvalid and the reason.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// Reasons an Error gives.
var (
	errNotDecimal  = errors.New("not a decimal int64")
	errNotPositive = errors.New("IDs are positive")
)

// maxShown is how much of a rejected input an error message quotes.
const maxShown = 64

// quote shows a rejected text input in an error message.
func quote(s string) string {
	if len(s) > maxShown {
		return strconv.Quote(s[:maxShown]) + "..."
	}
	return strconv.Quote(s)
}

// Parse parses a positive decimal int64 as a key of type T; typ names T in
// errors.
func Parse[T ~int64](typ, s string) (T, error) {
	return parse[T](typ, "parse", s)
}

func parse[T ~int64](typ, op, s string) (T, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return 0, &Error{Type: typ, Op: op, Input: quote(s), Err: errNotDecimal}
	case v <= 0:
		return 0, &Error{Type: typ, Op: op, Input: quote(s), Err: errNotPositive}
	}
	return T(v), nil
}

// UnmarshalText parses b as Parse does and stores the key in dst; dst is
// left unchanged on error.
func UnmarshalText[T ~int64](dst *T, typ string, b []byte) error {
	v, err := parse[T](typ, "unmarshal", string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// MarshalJSON returns id as a JSON string of its decimal digits, since
// JavaScript numbers lose precision above 2^53.
func MarshalJSON[T ~int64](id T) ([]byte, error) {
	b := make([]byte, 0, 22)
	b = append(b, '"')
	b = strconv.AppendInt(b, int64(id), 10)
	return append(b, '"'), nil
}

// UnmarshalJSON reads a JSON string of decimal digits or a JSON integer
// into dst. null leaves dst unchanged, as encoding/json does for other
// types; so does an error.
func UnmarshalJSON[T ~int64](dst *T, typ string, b []byte) error {
	s := string(b)
	switch {
	case s == "null":
		return nil
	case len(s) > 0 && s[0] == '"':
		if err := json.Unmarshal(b, &s); err != nil {
			return &Error{Type: typ, Op: "unmarshal", Input: show(b), Err: err}
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	switch {
	case err != nil:
		return &Error{Type: typ, Op: "unmarshal", Input: show(b), Err: errNotDecimal}
	case v <= 0:
		return &Error{Type: typ, Op: "unmarshal", Input: show(b), Err: errNotPositive}
	}
	*dst = T(v)
	return nil
}

// show shows rejected JSON in an error message as it was written.
func show(b []byte) string {
	if len(b) > maxShown {
		return string(b[:maxShown]) + "..."
	}
	return string(b)
}

// Scan implements sql.Scanner for a key type: it reads an integer column
// or its decimal text into dst. NULL is an error: scan a nullable column
// into a *T or an sql.Null[T]. dst is left unchanged on error.
func Scan[T ~int64](dst *T, typ string, src any) error {
	var s string
	switch v := src.(type) {
	case int64:
		if v <= 0 {
			return &Error{Type: typ, Op: "scan", Input: strconv.FormatInt(v, 10), Err: errNotPositive}
		}
		*dst = T(v)
		return nil
	case []byte:
		s = string(v)
	case string:
		s = v
	case nil:
		return &Error{Type: typ, Op: "scan", Input: "NULL",
			Err: fmt.Errorf("use *%[1]s or sql.Null[%[1]s] for a nullable column", typ)}
	default:
		return &Error{Type: typ, Op: "scan", Input: fmt.Sprintf("%T", src),
			Err: errors.New("not an integer or decimal text")}
	}
	v, err := parse[T](typ, "scan", s)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// decodeTolerance is how far past the time now a decoded key's time may be.
const decodeTolerance = time.Minute

// Decode takes a snowflake key apart with layout, the layout its type was
// generated for. It fails for a value the layout could not have produced by
// now: not positive, or with a time more than a minute ahead.
func Decode(layout snowflake.Layout, typ string, id int64) (snowflake.Parts, error) {
	p, err := layout.Decode(id, time.Now(), decodeTolerance)
	if err != nil {
		return snowflake.Parts{}, &Error{Type: typ, Op: "decode", Input: strconv.FormatInt(id, 10), Err: err}
	}
	return p, nil
}

// UnshapeBy returns the key a table made, before its shape, of id as the
// table stores it, by the table's codec c (the one the generated code
// keeps). It fails for a value no key of the shape gives.
func UnshapeBy(c *keyform.Codec, typ string, id int64) (int64, error) {
	key, err := c.Unshape(id)
	if err != nil {
		return 0, &Error{Type: typ, Op: "decode", Input: strconv.FormatInt(id, 10), Err: err}
	}
	return key, nil
}

// Unshape returns the key a table made, before its shape s in space sp,
// of id as the table stores it, by a codec made for the call.
//
// Deprecated: code generated before the generated files kept a codec per
// table calls it; regenerate, and the code calls UnshapeBy.
func Unshape(typ string, s shape.Shape, sp shape.Space, id int64) (int64, error) {
	c, err := keyform.NewCodec(keyform.Spec{Table: typ, Shape: s, Space: sp})
	if err != nil {
		return 0, &Error{Type: typ, Op: "decode", Input: strconv.FormatInt(id, 10), Err: err}
	}
	return UnshapeBy(c, typ, id)
}

// DecodeSegment checks a segment key, which carries nothing but its value:
// it fails for a value that is not positive.
func DecodeSegment[T ~int64](typ string, id int64) (T, error) {
	if id <= 0 {
		return 0, &Error{Type: typ, Op: "decode", Input: strconv.FormatInt(id, 10), Err: errNotPositive}
	}
	return T(id), nil
}

// DecodeGene takes apart a key of a segment table with shard or app bits
// (see keyset.Gene). It fails for a value such a table could not have
// issued: not positive, app bits other than the table's, or index 0.
func DecodeGene(typ string, g keyset.Gene, id int64) (keyset.GeneParts, error) {
	in := strconv.FormatInt(id, 10)
	if id <= 0 {
		return keyset.GeneParts{}, &Error{Type: typ, Op: "decode", Input: in, Err: errNotPositive}
	}
	p := g.Decompose(id)
	if p.App != g.App || p.Index < 1 {
		return keyset.GeneParts{}, &Error{Type: typ, Op: "decode", Input: in,
			Err: fmt.Errorf("app bits %d (want %d), index %d: not a key of this table", p.App, g.App, p.Index)}
	}
	return p, nil
}

// NewFor returns a new key of a sharded table, in the shard of value (the
// row's value of the table's shard column; see keyset.ShardOf), for code
// that needs the key before inserting the row.
func NewFor[T ~int64](ctx context.Context, keys *keyset.Keys, table string, value any) (T, error) {
	s, err := keys.Config().ShardOf(table, value)
	if err != nil {
		return 0, err
	}
	ids, err := keys.AppendShardIDs(ctx, make([]int64, 0, 1), table, []int{s})
	if err != nil {
		return 0, err
	}
	return T(ids[0]), nil
}

// Source issues new keys by table name, from the generators the idsql
// wrapper fills INSERTs with: *keyset.Keys and *idsql.DB satisfy it. A
// Source that also has NextIDs(ctx, table, n) serves NewN in one call.
type Source interface {
	NextID(ctx context.Context, table string) (int64, error)
}

// batchSource is the optional batch method of a Source.
type batchSource interface {
	NextIDs(ctx context.Context, table string, n int) ([]int64, error)
}

// New returns a new key for table from src, for code that needs the key
// before inserting the row.
func New[T ~int64](ctx context.Context, src Source, table string) (T, error) {
	id, err := src.NextID(ctx, table)
	if err != nil {
		return 0, err
	}
	return T(id), nil
}

// NewN returns n new keys for table from src, in the order src issued them.
func NewN[T ~int64](ctx context.Context, src Source, table string, n int) ([]T, error) {
	if n < 0 {
		return nil, fmt.Errorf("keyid: %d keys for %s: n is negative", n, table)
	}
	out := make([]T, 0, n)
	if b, ok := src.(batchSource); ok {
		ids, err := b.NextIDs(ctx, table, n)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			out = append(out, T(id))
		}
		return out, nil
	}
	for range n {
		id, err := src.NextID(ctx, table)
		if err != nil {
			return nil, err
		}
		out = append(out, T(id))
	}
	return out, nil
}
