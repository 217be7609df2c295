package keyid_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// orderID is a key type as idsqlgen declares one.
type orderID int64

func (id *orderID) UnmarshalJSON(b []byte) error { return keyid.UnmarshalJSON(id, "app.orderID", b) }
func (id *orderID) Scan(src any) error           { return keyid.Scan(id, "app.orderID", src) }

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want orderID
		err  string // the whole message; "" for no error
	}{
		{"42", 42, ""},
		{"9223372036854775807", 1<<63 - 1, ""},
		{"0", 0, `app.orderID: parse "0": invalid ID: IDs are positive`},
		{"-5", 0, `app.orderID: parse "-5": invalid ID: IDs are positive`},
		{"x", 0, `app.orderID: parse "x": invalid ID: not a decimal int64`},
		{"", 0, `app.orderID: parse "": invalid ID: not a decimal int64`},
		{"9223372036854775808", 0, `app.orderID: parse "9223372036854775808": invalid ID: not a decimal int64`},
	} {
		got, err := keyid.Parse[orderID]("app.orderID", tc.in)
		if got != tc.want || errText(err) != tc.err {
			t.Errorf("Parse(%q) = %d, %v; want %d, %q", tc.in, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, keyid.ErrInvalid) {
			t.Errorf("Parse(%q): %v does not wrap ErrInvalid", tc.in, err)
		}
	}
}

func TestScan(t *testing.T) {
	for _, tc := range []struct {
		src any
		err string
	}{
		{int64(42), ""},
		{[]byte("42"), ""},
		{"42", ""},
		{nil, "app.orderID: scan NULL: invalid ID: use *app.orderID or sql.Null[app.orderID] for a nullable column"},
		{int64(0), "app.orderID: scan 0: invalid ID: IDs are positive"},
		{int64(-1), "app.orderID: scan -1: invalid ID: IDs are positive"},
		{"4x", `app.orderID: scan "4x": invalid ID: not a decimal int64`},
		{4.2, "app.orderID: scan float64: invalid ID: not an integer or decimal text"},
	} {
		id := orderID(7)
		err := id.Scan(tc.src)
		if errText(err) != tc.err {
			t.Errorf("Scan(%#v) = %v, want %q", tc.src, err, tc.err)
		}
		switch {
		case err == nil && id != 42:
			t.Errorf("Scan(%#v) stored %d", tc.src, id)
		case err != nil && id != 7:
			t.Errorf("Scan(%#v) failed but changed the key to %d", tc.src, id)
		case err != nil && !errors.Is(err, keyid.ErrInvalid):
			t.Errorf("Scan(%#v): %v does not wrap ErrInvalid", tc.src, err)
		}
	}
	var n sql.Null[orderID]
	if err := n.Scan(nil); err != nil || n.Valid {
		t.Errorf("sql.Null Scan(nil) = %+v, %v", n, err)
	}
}

func TestJSON(t *testing.T) {
	b, err := keyid.MarshalJSON(orderID(2006924430235693098))
	if string(b) != `"2006924430235693098"` || err != nil {
		t.Errorf("MarshalJSON = %s, %v", b, err)
	}
	for in, want := range map[string]orderID{`"5"`: 5, `5`: 5, `"\u0035"`: 5, `null`: 3} {
		id := orderID(3)
		if err := json.Unmarshal([]byte(in), &id); err != nil || id != want {
			t.Errorf("unmarshal %s = %d, %v; want %d", in, id, err, want)
		}
	}
	for in, msg := range map[string]string{
		`""`:                    `app.orderID: unmarshal "": invalid ID: not a decimal int64`,
		`"0"`:                   `app.orderID: unmarshal "0": invalid ID: IDs are positive`,
		`-5`:                    `app.orderID: unmarshal -5: invalid ID: IDs are positive`,
		`5.0`:                   `app.orderID: unmarshal 5.0: invalid ID: not a decimal int64`,
		`1e3`:                   `app.orderID: unmarshal 1e3: invalid ID: not a decimal int64`,
		`"9223372036854775808"`: `app.orderID: unmarshal "9223372036854775808": invalid ID: not a decimal int64`,
		`true`:                  `app.orderID: unmarshal true: invalid ID: not a decimal int64`,
		`"5 "`:                  `app.orderID: unmarshal "5 ": invalid ID: not a decimal int64`,
	} {
		id := orderID(3)
		err := id.UnmarshalJSON([]byte(in))
		if errText(err) != msg || !errors.Is(err, keyid.ErrInvalid) || id != 3 {
			t.Errorf("unmarshal %s = %d, %v; want 3, %q", in, id, err, msg)
		}
	}
	// A broken JSON string (encoding/json never passes one; a direct call may).
	var id orderID
	if err := id.UnmarshalJSON([]byte(`"12`)); !errors.Is(err, keyid.ErrInvalid) {
		t.Errorf(`unmarshal "12: %v`, err)
	}
}

func TestUnmarshalText(t *testing.T) {
	id := orderID(3)
	if err := keyid.UnmarshalText(&id, "app.orderID", []byte("12")); err != nil || id != 12 {
		t.Errorf("UnmarshalText(12) = %d, %v", id, err)
	}
	err := keyid.UnmarshalText(&id, "app.orderID", []byte("-1"))
	if errText(err) != `app.orderID: unmarshal "-1": invalid ID: IDs are positive` || id != 12 {
		t.Errorf("UnmarshalText(-1) = %d, %v", id, err)
	}
}

func TestDecode(t *testing.T) {
	l := snowflake.Leaf
	at := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	id, err := l.Compose(snowflake.Parts{Time: at, Worker: 7, Sequence: 42})
	if err != nil {
		t.Fatal(err)
	}
	p, err := keyid.Decode(l, "app.orderID", id)
	if err != nil || !p.Time.Equal(at) || p.Worker != 7 || p.Sequence != 42 {
		t.Errorf("Decode = %+v, %v", p, err)
	}
	future, _ := l.Compose(snowflake.Parts{Time: time.Now().Add(time.Hour), Worker: 1})
	for _, bad := range []int64{0, -1, future} {
		_, err := keyid.Decode(l, "app.orderID", bad)
		if !errors.Is(err, keyid.ErrInvalid) || !errors.Is(err, snowflake.ErrDecode) {
			t.Errorf("Decode(%d) = %v, want ErrInvalid and snowflake.ErrDecode", bad, err)
		}
		if e, ok := errors.AsType[*keyid.Error](err); !ok || e.Op != "decode" || e.Input != strconv.FormatInt(bad, 10) {
			t.Errorf("Decode(%d) error %#v", bad, err)
		}
	}
	if v, err := keyid.DecodeSegment[orderID]("app.orderID", 12); v != 12 || err != nil {
		t.Errorf("DecodeSegment(12) = %d, %v", v, err)
	}
	if _, err := keyid.DecodeSegment[orderID]("app.orderID", 0); errText(err) != "app.orderID: decode 0: invalid ID: IDs are positive" {
		t.Errorf("DecodeSegment(0): %v", err)
	}
}

// counter is a Source; with batch set it also serves NextIDs.
type counter struct {
	next, calls, batches int64
	fail                 error
}

func (c *counter) NextID(_ context.Context, table string) (int64, error) {
	c.calls++
	if c.fail != nil {
		return 0, c.fail
	}
	c.next++
	return c.next, nil
}

type batchCounter struct{ counter }

func (c *batchCounter) NextIDs(_ context.Context, table string, n int) ([]int64, error) {
	c.batches++
	out := make([]int64, n)
	for i := range out {
		c.next++
		out[i] = c.next
	}
	return out, nil
}

func TestNew(t *testing.T) {
	ctx := context.Background()
	single := &counter{}
	if id, err := keyid.New[orderID](ctx, single, "orders"); id != 1 || err != nil {
		t.Errorf("New = %d, %v", id, err)
	}
	ids, err := keyid.NewN[orderID](ctx, single, "orders", 3)
	if err != nil || len(ids) != 3 || ids[0] != 2 || ids[2] != 4 || single.calls != 4 {
		t.Errorf("NewN without NextIDs = %v, %v after %d calls", ids, err, single.calls)
	}
	batch := &batchCounter{}
	ids, err = keyid.NewN[orderID](ctx, batch, "orders", 3)
	if err != nil || len(ids) != 3 || ids[2] != 3 || batch.batches != 1 || batch.calls != 0 {
		t.Errorf("NewN with NextIDs = %v, %v after %d batches, %d calls", ids, err, batch.batches, batch.calls)
	}
	if ids, err := keyid.NewN[orderID](ctx, batch, "orders", 0); err != nil || len(ids) != 0 {
		t.Errorf("NewN(0) = %v, %v", ids, err)
	}
	if _, err := keyid.NewN[orderID](ctx, batch, "orders", -1); err == nil {
		t.Error("NewN(-1) accepted")
	}
	boom := errors.New("boom")
	if _, err := keyid.New[orderID](ctx, &counter{fail: boom}, "orders"); !errors.Is(err, boom) {
		t.Errorf("New with a failing source: %v", err)
	}
	if _, err := keyid.NewN[orderID](ctx, &counter{fail: boom}, "orders", 2); !errors.Is(err, boom) {
		t.Errorf("NewN with a failing source: %v", err)
	}
}

// FuzzParse: Parse, UnmarshalText, Scan of text and of bytes, and
// UnmarshalJSON of a JSON string agree on every input, and what they
// accept is positive and prints back to a value that parses the same.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"2006924430235693098", "1", "0", "-5", "x", "", "+3", "0009", "9223372036854775808", " 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := keyid.Parse[orderID]("t", s)
		var txt, str, byt, js orderID
		results := []error{
			keyid.UnmarshalText(&txt, "t", []byte(s)),
			keyid.Scan(&str, "t", s),
			keyid.Scan(&byt, "t", []byte(s)),
		}
		quoted, _ := json.Marshal(s)
		results = append(results, keyid.UnmarshalJSON(&js, "t", quoted))
		for i, r := range results {
			if (r == nil) != (err == nil) {
				t.Fatalf("%q: Parse %v, but reader %d: %v", s, err, i, r)
			}
			if r != nil && !errors.Is(r, keyid.ErrInvalid) {
				t.Fatalf("%q: %v does not wrap ErrInvalid", s, r)
			}
		}
		if err != nil {
			return
		}
		if id <= 0 || txt != id || str != id || byt != id || js != id {
			t.Fatalf("%q: Parse %d, UnmarshalText %d, Scan %d and %d, UnmarshalJSON %d", s, id, txt, str, byt, js)
		}
		b, _ := keyid.MarshalJSON(id)
		var back orderID
		if err := json.Unmarshal(b, &back); err != nil || back != id {
			t.Fatalf("%d: JSON %s reads back as %d, %v", id, b, back, err)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestDecodeGene(t *testing.T) {
	g := keyset.Gene{ShardBits: 6, AppBits: 8, App: 3}
	key, err := g.Compose(77, 42)
	if err != nil {
		t.Fatal(err)
	}
	p, err := keyid.DecodeGene("app.OrderID", g, key)
	if err != nil || p != (keyset.GeneParts{Index: 77, Shard: 42, App: 3}) {
		t.Fatalf("DecodeGene(%d) = %+v, %v", key, p, err)
	}
	for _, bad := range []int64{0, -key, key + 1, 3} {
		if _, err := keyid.DecodeGene("app.OrderID", g, bad); !errors.Is(err, keyid.ErrInvalid) || !strings.Contains(err.Error(), "app.OrderID") {
			t.Errorf("DecodeGene(%d): %v, want ErrInvalid naming the type", bad, err)
		}
	}
}
