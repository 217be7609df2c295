package engine

import "unsafe"

// boxBlock is how many keys a Boxer allocates at once.
const boxBlock = 64

// Boxer makes the interface values that carry keys in a front door's
// arguments without an allocation per key: Go's conversion of an int64
// to an interface allocates 8 bytes for every value above 255, which was
// the largest single cost idsql added to a one-row INSERT. A Boxer writes
// each key once into a block of keys it allocates at once and points the
// interface value there. A slot is never written again (a full block is
// replaced, not reused), so a value the inner driver or the caller keeps
// stays what it was; a kept value keeps its block alive. The zero value is
// ready; a Boxer is not safe for concurrent use (one per connection).
type Boxer struct {
	block *[boxBlock]int64
	n     int
}

// eface is the layout of an empty interface value: its type and a
// pointer to its data (the layout the Go runtime gives every `any`).
type eface struct {
	typ  unsafe.Pointer
	data unsafe.Pointer
}

// int64Type is the runtime type word of int64, read from an int64 in an
// interface.
var int64Type = func() unsafe.Pointer {
	var v any = int64(1 << 40)
	return (*eface)(unsafe.Pointer(&v)).typ
}()

// Box returns id as an interface value holding an int64, as any(id)
// would.
func (b *Boxer) Box(id int64) any {
	if b.block == nil || b.n == boxBlock {
		b.block, b.n = new([boxBlock]int64), 0
	}
	p := &b.block[b.n]
	b.n++
	*p = id
	var v any
	e := (*eface)(unsafe.Pointer(&v))
	e.typ, e.data = int64Type, unsafe.Pointer(p)
	return v
}
