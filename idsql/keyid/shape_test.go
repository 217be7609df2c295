package keyid_test

import (
	"errors"
	"testing"

	"github.com/idsql/idsql/idsql/keyid"
	"github.com/idsql/idsql/idsql/shape"
)

func TestUnshape(t *testing.T) {
	s, sp := shape.Shape{Spread: shape.Reverse}, shape.Space{Bits: 63, Low: 22, Width: 41}
	f, err := shape.New(s, sp)
	if err != nil {
		t.Fatal(err)
	}
	const made = 7139826715123912704
	k, _ := f.Apply(made)
	if got, err := keyid.Unshape("app.OrderID", s, sp, k); err != nil || got != made {
		t.Fatalf("Unshape(%d) = %d, %v; want %d", k, got, err, made)
	}
	var ke *keyid.Error
	if _, err := keyid.Unshape("app.OrderID", s, sp, -1); !errors.As(err, &ke) || !errors.Is(err, shape.ErrNotShaped) {
		t.Fatalf("Unshape(-1) = %v; want a *keyid.Error wrapping shape.ErrNotShaped", err)
	}
}
