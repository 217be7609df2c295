package keyform

import "testing"

// TestRingKeptByCodecOnly: a codec's keyed form parses its ring once per
// value of the variable and keeps it; a form outside a codec keeps
// nothing (there is no process-wide cache), so it parses on every call.
func TestRingKeptByCodecOnly(t *testing.T) {
	t.Setenv("IDSQL_RING_TEST", "1:Zp9xQ2vL7mN4kR8tW1yB6cD3")
	f := Form{Encoding: Base62, Prefix: "ord_", KeyEnv: "IDSQL_RING_TEST"}
	c := MustCodec(Spec{Table: "orders", Form: f})
	r1, err1 := c.Form().ring()
	r2, err2 := c.Form().ring()
	if err1 != nil || err2 != nil || r1 != r2 {
		t.Errorf("a codec's form parsed its ring twice (%p, %p; %v, %v); want it kept", r1, r2, err1, err2)
	}
	b1, _ := f.ring()
	b2, _ := f.ring()
	if b1 == nil || b1 == b2 || b1 == r1 {
		t.Errorf("a bare form's rings %p, %p (the codec's %p): want a fresh parse each call, shared with no one", b1, b2, r1)
	}
	t.Setenv("IDSQL_RING_TEST", "2:kq3MfH5jT0sV9gX2aE7uP4nC")
	r3, err := c.Form().ring()
	if err != nil {
		t.Fatal(err)
	}
	if r3 == r1 || r3.current != '2' {
		t.Errorf("after the variable changed the codec's ring is %p (version %c); want a new one of version 2", r3, r3.current)
	}
}
