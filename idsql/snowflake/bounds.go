package snowflake

import (
	"errors"
	"fmt"
	"math/bits"
	"time"
)

// ErrRange is wrapped by every error about a time range Bounds cannot
// answer: empty or reversed, or outside the layout's time.
var ErrRange = errors.New("snowflake: invalid time range")

// End is the end of the layout's last tick (Horizon plus one Unit): the
// first instant no ID of the layout carries.
func (l Layout) End() time.Time { return l.TimeOf(l.MaxTick()).Add(l.Unit) }

// Bounds returns the smallest key range [lo, hi] holding every ID whose
// time (the start of its tick, as Decompose and Decode report it) lies in
// [from, to), for every worker and sequence: an ID is in [lo, hi] if and
// only if its time is in [from, to). Ranges that share an end tile the key
// space: the hi of [a, b) plus one is the lo of [b, c), so key-range
// partitions by month (or any other boundaries) neither overlap nor leave
// gaps.
//
// When from and to are tick boundaries, which month and day boundaries
// are for every preset, that is also every ID issued at an instant in
// [from, to). A bound that falls inside a tick (a Unit longer than 1ms on
// an epoch not aligned to it) counts that tick on the side where it
// starts: an ID issued in it after from decodes to a time before from,
// and is not in the range. IDs served by Cached may carry a time up to
// its MaxDrift after the instant they were issued.
//
// Bounds refuses (with an error wrapping ErrRange) a range that is empty
// or reversed (from not before to), that starts before the epoch or ends
// after End, or in which no tick starts; it does not clamp, since a time
// outside the layout is more likely a mistake (a typed year, another
// layout) than a question. For everything since the epoch, or until the
// end, pass Epoch or End. The error of a layout that is not valid wraps
// ErrLayout.
//
// Bounds is about the layout's bit order only: keys that a table has
// reshaped after making them (bit-reversed, say, to spread inserts) are
// not in time order, and idsql's table-level bounds refuse such tables.
func (l Layout) Bounds(from, to time.Time) (lo, hi int64, err error) {
	if err := l.Validate(); err != nil {
		return 0, 0, err
	}
	const format = "2006-01-02T15:04:05.999999999Z07:00"
	switch end := l.End(); {
	case !from.Before(to):
		return 0, 0, fmt.Errorf("%w: from %s is not before to %s", ErrRange, from.UTC().Format(format), to.UTC().Format(format))
	case from.Before(l.Epoch):
		return 0, 0, fmt.Errorf("%w: from %s is before the layout's epoch %s (layout %s)",
			ErrRange, from.UTC().Format(format), l.Epoch.UTC().Format(format), l)
	case to.After(end):
		return 0, 0, fmt.Errorf("%w: to %s is after %s, the end of the layout's %d time bits (layout %s)",
			ErrRange, to.UTC().Format(format), end.UTC().Format(format), l.TimeBits, l)
	}
	first, last := l.ceilTick(from), l.ceilTick(to)-1
	if first > last {
		return 0, 0, fmt.Errorf("%w: no tick of %s starts in [%s, %s)", ErrRange, l.Unit,
			from.UTC().Format(format), to.UTC().Format(format))
	}
	shift := l.WorkerBits + l.SequenceBits
	return first << shift, last<<shift | (int64(1)<<shift - 1), nil
}

// ceilTick returns the first tick that starts at or after t, for t in
// [Epoch, End]. It counts exactly, without time.Duration (whose 292 years
// a layout of second ticks can outlast).
func (l Layout) ceilTick(t time.Time) int64 {
	sec := t.Unix() - l.Epoch.Unix()
	nsec := int64(t.Nanosecond()) - int64(l.Epoch.Nanosecond())
	if nsec < 0 {
		sec, nsec = sec-1, nsec+int64(time.Second)
	}
	// n = sec*1e9 + nsec nanoseconds since the epoch, in 128 bits.
	hi, lo := bits.Mul64(uint64(sec), uint64(time.Second))
	lo, carry := bits.Add64(lo, uint64(nsec), 0)
	hi += carry
	// n / Unit fits 64 bits: it is at most MaxTick+1, below 2^62.
	q, r := bits.Div64(hi, lo, uint64(l.Unit))
	if r != 0 {
		q++
	}
	return int64(q)
}
