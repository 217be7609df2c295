package keyform

// UUID keys: a snowflake key, issued under the table's worker lease with
// all of snowflake's fencing, written as an RFC 9562 UUIDv7:
//
//	bits 127..80  unix_ts_ms  the key's time: epoch + tick × unit, in Unix ms
//	bits  79..76  ver         7
//	bits  75..64  rand_a      the key's sequence: a dedicated counter
//	                          (RFC 9562 §6.2, method 1) of at most 12 bits,
//	                          right-aligned
//	bits  63..62  var         10
//	bits  61..31  rand_b      the key's worker ID (31 bits, the widest a
//	                          layout may have)
//	bits  30..0   rand_b      fill: 31 bits mixed from the key (a fixed
//	                          function, not a secret)
//
// One worker's UUIDs strictly increase as its keys do (time, then
// sequence), so they sort by time and stay unique by lease, as the keys
// do: the mapping is one to one, and the exact key comes back from the
// UUID. The fill makes UUIDs of neighbouring keys differ in their last
// bits as random UUIDv7s do; it hides nothing (the time, worker and
// sequence are plain in the UUID).
//
// Reading a UUID back accepts exactly the UUIDs UUIDFromKey writes:
// version 7, variant 10, a time on a tick of the layout, a sequence and a
// worker within its bits, and the fill of that key. A UUIDv7 made by
// another generator (random rand_a and rand_b) is refused, never read as
// some other key.
//
// A layout maps to UUIDs when it maps to a TypeID's UUIDv7 (its unit a
// whole number of milliseconds, its epoch on a whole millisecond at or
// after 1970) and its sequence has at most 12 bits: the leaf, sony,
// sony-widths and js53 presets. At the leaf layout's 12 sequence bits of
// one millisecond a worker issues up to 4,096,000 UUIDs a second.

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/idsql/idsql/idsql/snowflake"
)

// ErrUUID is wrapped by every error about a UUID that is not a key of the
// codec's layout, or a text that is not a UUID.
var ErrUUID = errors.New("keyform: not a UUID key")

// uuidSeqBits is the most sequence bits a UUID's rand_a holds;
// uuidWorkerBits the bits of rand_b that hold the worker ID.
const (
	uuidSeqBits    = 12
	uuidWorkerBits = 31
	uuidFillBits   = 62 - uuidWorkerBits
)

// UUIDKeys writes the keys of one snowflake layout as UUIDv7s and reads
// them back. The zero value refuses every key.
type UUIDKeys struct {
	t          tidLayout
	seqBits    uint8
	workerBits uint8
	workerLow  bool // the layout puts the worker under the sequence (snowflake.Layout.WorkerLow)
}

// NewUUIDKeys returns the UUID codec of the keys of layout l, or why l
// does not map to UUIDv7s (see the package's UUID keys).
func NewUUIDKeys(l snowflake.Layout) (UUIDKeys, error) {
	t, err := typeIDLayout(l)
	if err != nil {
		return UUIDKeys{}, fmt.Errorf("keyform: layout %s cannot key UUIDs: %w", l.Name, err)
	}
	if l.SequenceBits > uuidSeqBits {
		return UUIDKeys{}, fmt.Errorf("keyform: layout %s cannot key UUIDs: its %d sequence bits do not fit a UUIDv7's %d-bit counter (rand_a); "+
			"use a layout of at most %d sequence bits, such as leaf", l.Name, l.SequenceBits, uuidSeqBits, uuidSeqBits)
	}
	return UUIDKeys{t: t, seqBits: uint8(l.SequenceBits), workerBits: uint8(l.WorkerBits), workerLow: l.WorkerLow}, nil
}

// uuidFill is the fill of the UUID of key k: the low uuidFillBits bits of
// splitmix64's finalizer of k.
func uuidFill(k uint64) uint64 {
	k ^= k >> 30
	k *= 0xbf58476d1ce4e5b9
	k ^= k >> 27
	k *= 0x94d049bb133111eb
	k ^= k >> 31
	return k & (1<<uuidFillBits - 1)
}

// split returns key k's tick, worker and sequence.
func (u UUIDKeys) split(k uint64) (tick, worker, seq uint64) {
	low := k & (1<<u.t.lowBits - 1)
	tick = k >> u.t.lowBits
	if u.workerLow {
		return tick, low & (1<<u.workerBits - 1), low >> u.workerBits
	}
	return tick, low >> u.seqBits, low & (1<<u.seqBits - 1)
}

// join is split undone.
func (u UUIDKeys) join(tick, worker, seq uint64) uint64 {
	if u.workerLow {
		return tick<<u.t.lowBits | seq<<u.workerBits | worker
	}
	return tick<<u.t.lowBits | worker<<u.seqBits | seq
}

// UUID returns the UUIDv7 of key k, in RFC 9562 byte order.
func (u UUIDKeys) UUID(k int64) ([16]byte, error) {
	var b [16]byte
	t := u.t
	if t.unitMs == 0 {
		return b, fmt.Errorf("%w: the UUID codec is not bound to a layout (see NewUUIDKeys)", ErrUUID)
	}
	if k <= 0 || uint64(k)>>(t.timeBits+t.lowBits) != 0 {
		return b, fmt.Errorf("%w: %d is not a key of the layout (a positive number of %d bits)", ErrUUID, k, t.timeBits+t.lowBits)
	}
	tick, worker, seq := u.split(uint64(k))
	ms := uint64(t.epochMs) + tick*uint64(t.unitMs)
	hi := ms<<16 | 0x7000 | seq
	lo := 1<<63 | worker<<uuidFillBits | uuidFill(uint64(k))
	binary.BigEndian.PutUint64(b[:8], hi)
	binary.BigEndian.PutUint64(b[8:], lo)
	return b, nil
}

// Key returns the key whose UUID is b, refusing a UUID UUID did not write
// for this layout (see the package's UUID keys).
func (u UUIDKeys) Key(b [16]byte) (int64, error) {
	t := u.t
	if t.unitMs == 0 {
		return 0, fmt.Errorf("%w: the UUID codec is not bound to a layout (see NewUUIDKeys)", ErrUUID)
	}
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	ms, ver, seq := hi>>16, hi>>12&0xf, hi&0xfff
	worker := lo >> uuidFillBits & (1<<uuidWorkerBits - 1)
	switch {
	case ver != 7:
		return 0, fmt.Errorf("%w: %s is a version %d UUID, not 7", ErrUUID, FormatUUID(b), ver)
	case lo>>62 != 2:
		return 0, fmt.Errorf("%w: %s is not of the RFC 9562 variant", ErrUUID, FormatUUID(b))
	case ms < uint64(t.epochMs) || (ms-uint64(t.epochMs))%uint64(t.unitMs) != 0:
		return 0, fmt.Errorf("%w: %s: its time is not on a tick of the layout", ErrUUID, FormatUUID(b))
	case seq>>u.seqBits != 0 || worker>>u.workerBits != 0:
		return 0, fmt.Errorf("%w: %s: its counter %d or worker %d is outside the layout's %d sequence and %d worker bits",
			ErrUUID, FormatUUID(b), seq, worker, u.seqBits, u.workerBits)
	}
	tick := (ms - uint64(t.epochMs)) / uint64(t.unitMs)
	if tick>>t.timeBits != 0 {
		return 0, fmt.Errorf("%w: %s: its time is past the layout's time bits", ErrUUID, FormatUUID(b))
	}
	k := u.join(tick, worker, seq)
	if k == 0 || lo&(1<<uuidFillBits-1) != uuidFill(k) {
		return 0, fmt.Errorf("%w: %s was not written by idsql for this layout (its fill does not match)", ErrUUID, FormatUUID(b))
	}
	return int64(k), nil
}

// FormatUUID writes b in the canonical text form: 36 lowercase characters,
// 8-4-4-4-12 hex digits.
func FormatUUID(b [16]byte) string {
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ParseUUID reads a UUID in any of its usual text forms: canonical
// (8-4-4-4-12, either case), with braces, as a urn:uuid: URN, or 32 hex
// digits without hyphens.
func ParseUUID(s string) ([16]byte, error) {
	var b [16]byte
	in := s
	switch {
	case len(s) == 45 && (s[:9] == "urn:uuid:" || s[:9] == "URN:UUID:"):
		s = s[9:]
	case len(s) == 38 && s[0] == '{' && s[37] == '}':
		s = s[1:37]
	}
	var digits [32]byte
	switch len(s) {
	case 32:
		copy(digits[:], s)
	case 36:
		if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
			return b, fmt.Errorf("%w: %q: want 8-4-4-4-12 hex digits", ErrUUID, in)
		}
		copy(digits[0:8], s[0:8])
		copy(digits[8:12], s[9:13])
		copy(digits[12:16], s[14:18])
		copy(digits[16:20], s[19:23])
		copy(digits[20:], s[24:])
	default:
		return b, fmt.Errorf("%w: %q: want a UUID (8-4-4-4-12 hex digits, with braces, a urn:uuid: URN, or 32 hex digits)", ErrUUID, in)
	}
	if _, err := hex.Decode(b[:], digits[:]); err != nil {
		return b, fmt.Errorf("%w: %q: %v", ErrUUID, in, err)
	}
	return b, nil
}
