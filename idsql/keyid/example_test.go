package keyid_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/snowflake"
)

// userID is a hand-written key type: its methods are one-line calls.
type userID int64

func (id userID) MarshalJSON() ([]byte, error)  { return keyid.MarshalJSON(id) }
func (id *userID) UnmarshalJSON(b []byte) error { return keyid.UnmarshalJSON(id, "app.userID", b) }

// A key travels in JSON as a string, so JavaScript keeps every digit; a
// number is accepted on input.
func ExampleMarshalJSON() {
	b, _ := json.Marshal(map[string]userID{"user": 2006924430235693098})
	fmt.Println(string(b))

	var in struct{ User userID }
	err := json.Unmarshal([]byte(`{"User": 2006924430235693098}`), &in)
	fmt.Println(in.User, err)

	err = json.Unmarshal([]byte(`{"User": "-1"}`), &in)
	fmt.Println(err)
	fmt.Println(errors.Is(err, keyid.ErrInvalid))
	// Output:
	// {"user":"2006924430235693098"}
	// 2006924430235693098 <nil>
	// app.userID: unmarshal "-1": invalid ID: IDs are positive
	// true
}

func ExampleParse() {
	id, err := keyid.Parse[userID]("app.userID", "1001")
	fmt.Println(id, err)
	_, err = keyid.Parse[userID]("app.userID", "0")
	fmt.Println(err)
	// Output:
	// 1001 <nil>
	// app.userID: parse "0": invalid ID: IDs are positive
}

// Decode takes a snowflake key apart with the layout its type was
// generated for.
func ExampleDecode() {
	p, err := keyid.Decode(snowflake.Leaf, "app.orderID", 2006924430235693098)
	if err != nil {
		panic(err)
	}
	fmt.Println(p.Time.UTC().Format(time.RFC3339Nano), p.Worker, p.Sequence)
	// Output: 2026-01-02T03:04:05.678Z 7 42
}
