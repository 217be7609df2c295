package snowflake

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// ErrLayout is wrapped by every error about an invalid layout.
var ErrLayout = errors.New("snowflake: invalid layout")

// ErrDecode is wrapped by every error about a value a layout could not have
// produced.
var ErrDecode = errors.New("snowflake: not an ID of this layout")

// A Layout says how a 63-bit ID (or a 53-bit one, see JS53) splits into time, worker and sequence (the
// sign bit is always 0), how long one time tick is and when time zero is.
//
// From the most significant bit down an ID is
//
//	0 | time (TimeBits) | worker (WorkerBits) | sequence (SequenceBits)
//
// where time counts Units since Epoch; with WorkerLow (Sonyflake's order)
// the worker and the sequence change places:
//
//	0 | time (TimeBits) | sequence (SequenceBits) | worker (WorkerBits)
type Layout struct {
	// Name is informational: the preset's name, or "custom".
	Name         string
	TimeBits     int
	WorkerBits   int
	SequenceBits int
	// Unit is the length of one time tick, from 1ms to 1s.
	Unit time.Duration
	// Epoch is time zero.
	Epoch time.Time
	// WorkerLow puts the worker ID in the lowest bits, under the sequence,
	// as Sonyflake does. Two layouts that differ only in it give different
	// IDs for the same parts: a namespace must not mix them.
	WorkerLow bool
}

// Parts is an ID taken apart.
type Parts struct {
	Time     time.Time // the start of the ID's tick
	Worker   int64
	Sequence int64
}

// The presets.
var (
	// Leaf is Twitter's and Meituan Leaf's layout: 41 time bits of
	// milliseconds since 2010-11-04T01:42:54.657Z, 10 worker bits, 12
	// sequence bits. IDs decode exactly as Leaf and Twitter decode them.
	Leaf = Layout{Name: "leaf", TimeBits: 41, WorkerBits: 10, SequenceBits: 12,
		Unit: time.Millisecond, Epoch: time.UnixMilli(1288834974657).UTC()}

	// UID32 corrects Baidu uid-generator's default: seconds since 2016-05-20
	// in 32 bits (good until 2152) instead of 28, 18 worker bits (262,144
	// starts of disposable workers), 13 sequence bits (8,192 IDs a second per
	// worker).
	UID32 = Layout{Name: "uid32", TimeBits: 32, WorkerBits: 18, SequenceBits: 13,
		Unit: time.Second, Epoch: time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)}

	// Sony is sony/sonyflake's layout, bit order included: 39 bits of 10 ms
	// since 2014-09-01, then 8 sequence bits, then 16 worker (machine ID)
	// bits (WorkerLow). IDs made by sony/sonyflake with its default start
	// time decode exactly with it.
	Sony = Layout{Name: "sony", TimeBits: 39, WorkerBits: 16, SequenceBits: 8,
		Unit: 10 * time.Millisecond, Epoch: time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC), WorkerLow: true}

	// SonyWidths has Sonyflake's widths in idsql's order (worker above
	// sequence). It is what the preset called "sonyflake" generated before
	// that name was retired; keep it for a namespace that issued keys with
	// that preset. Sonyflake's own IDs do not decode with it: use Sony.
	SonyWidths = Layout{Name: "sony-widths", TimeBits: 39, WorkerBits: 16, SequenceBits: 8,
		Unit: 10 * time.Millisecond, Epoch: time.Date(2014, 9, 1, 0, 0, 0, 0, time.UTC)}

	// JS53 keeps IDs below 2^53, so a JavaScript number (an IEEE double)
	// holds every one exactly: 38 time bits of 10 ms since 2025-01-01 (good
	// until 2112), 8 worker bits (256 workers), 7 sequence bits (128 IDs a
	// tick, 12,800 a second per worker). It trades workers and rate for
	// IDs a browser can treat as numbers; the 63-bit presets' IDs must
	// travel as strings there.
	JS53 = Layout{Name: "js53", TimeBits: 38, WorkerBits: 8, SequenceBits: 7,
		Unit: 10 * time.Millisecond, Epoch: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}

	// uidDefault is Baidu uid-generator's default layout, kept only to
	// explain why it is refused.
	uidDefault = Layout{Name: "uid", TimeBits: 28, WorkerBits: 22, SequenceBits: 13,
		Unit: time.Second, Epoch: time.Date(2016, 5, 20, 0, 0, 0, 0, time.UTC)}
)

// Preset returns the layout with the given name: "leaf", "uid32", "sony",
// "sony-widths" or "js53". "uid" (uid-generator's 28-bit default) is refused: its
// time bits ran out in November 2024. "sonyflake" is refused too: it named
// Sonyflake's widths in idsql's order, which do not decode Sonyflake's IDs,
// and it is now "sony-widths"; "sony" is Sonyflake's own order. Choosing
// for the user could give a namespace keys of both orders, which may
// collide.
func Preset(name string) (Layout, error) {
	switch strings.ToLower(name) {
	case "leaf":
		return Leaf, nil
	case "uid32":
		return UID32, nil
	case "sony":
		return Sony, nil
	case "sony-widths":
		return SonyWidths, nil
	case "js53":
		return JS53, nil
	case "sonyflake":
		return Layout{}, fmt.Errorf("%w: preset %q is retired: it had Sonyflake's widths in idsql's bit order (time|worker|sequence), "+
			"so Sonyflake's own IDs did not decode with it. A namespace that issued keys with it must keep that order: say \"sony-widths\". "+
			"For Sonyflake's order (time|sequence|machine), as sony/sonyflake makes and decodes IDs, say \"sony\" "+
			"(only in a namespace that has issued no keys under \"sonyflake\": the two orders can give the same ID)", ErrLayout, name)
	case "uid":
		return Layout{}, fmt.Errorf("%w: preset %q (28 time bits of seconds from 2016-05-20) ran out on %s; use \"uid32\" (32 bits, good until %s)",
			ErrLayout, name, uidDefault.Horizon().Format(time.DateOnly), UID32.Horizon().Format(time.DateOnly))
	}
	return Layout{}, fmt.Errorf("%w: unknown preset %q (want leaf, uid32, sony, sony-widths or js53)", ErrLayout, name)
}

// MaxTick is the largest tick the time bits hold.
func (l Layout) MaxTick() int64 { return int64(1)<<l.TimeBits - 1 }

// MaxWorker is the largest worker ID.
func (l Layout) MaxWorker() int64 { return int64(1)<<l.WorkerBits - 1 }

// MaxSequence is the largest sequence number within one tick.
func (l Layout) MaxSequence() int64 { return int64(1)<<l.SequenceBits - 1 }

// Horizon is the start of the last tick the layout can represent.
func (l Layout) Horizon() time.Time { return l.TimeOf(l.MaxTick()) }

// Ceiling is the most IDs one worker can issue per second.
func (l Layout) Ceiling() float64 {
	return float64(int64(1)<<l.SequenceBits) / l.Unit.Seconds()
}

// TimeOf returns the start of tick.
func (l Layout) TimeOf(tick int64) time.Time {
	// Add in steps that fit a time.Duration: 2^40 seconds do not.
	per := int64(l.Unit)
	step := int64(math.MaxInt64) / per
	t := l.Epoch
	for ; tick > step; tick -= step {
		t = t.Add(time.Duration(step * per))
	}
	return t.Add(time.Duration(tick * per))
}

// Tick returns the tick holding t (negative before the epoch).
func (l Layout) Tick(t time.Time) int64 {
	d := t.Sub(l.Epoch)
	tick := int64(d / l.Unit)
	if d < 0 && d%l.Unit != 0 {
		tick--
	}
	return tick
}

// Validate checks the layout's shape: the three widths are positive and sum
// to 63 (or to 53, for IDs below 2^53 as JS53 makes), the unit is between 1ms and 1s and the epoch is set. It does not
// look at the clock; see ValidateAt.
func (l Layout) Validate() error {
	switch {
	case l.TimeBits < 1 || l.WorkerBits < 1 || l.SequenceBits < 1:
		return fmt.Errorf("%w: time_bits %d, worker_bits %d, sequence_bits %d: each must be at least 1",
			ErrLayout, l.TimeBits, l.WorkerBits, l.SequenceBits)
	case l.TimeBits+l.WorkerBits+l.SequenceBits != 63 && l.TimeBits+l.WorkerBits+l.SequenceBits != 53:
		return fmt.Errorf("%w: time_bits %d + worker_bits %d + sequence_bits %d = %d, want 63 (the sign bit stays 0), or 53 for IDs a JavaScript number holds exactly",
			ErrLayout, l.TimeBits, l.WorkerBits, l.SequenceBits, l.TimeBits+l.WorkerBits+l.SequenceBits)
	case l.WorkerBits > 31:
		return fmt.Errorf("%w: worker_bits %d is more than 31", ErrLayout, l.WorkerBits)
	case l.Unit < time.Millisecond || l.Unit > time.Second:
		return fmt.Errorf("%w: unit %s out of range 1ms..1s", ErrLayout, l.Unit)
	case l.Epoch.IsZero():
		return fmt.Errorf("%w: epoch is not set", ErrLayout)
	}
	return nil
}

// ValidateAt checks the shape (Validate) and the layout against the time
// now: the epoch must not be in the future, and the time bits must last at
// least a year from now. The error says when they run out.
func (l Layout) ValidateAt(now time.Time) error {
	if err := l.Validate(); err != nil {
		return err
	}
	if l.Epoch.After(now) {
		return fmt.Errorf("%w: epoch %s is in the future", ErrLayout, l.Epoch.UTC().Format(time.RFC3339))
	}
	horizon := l.Horizon()
	if !horizon.After(now) {
		return fmt.Errorf("%w: its %d time bits of %s ran out on %s", ErrLayout, l.TimeBits, l.Unit,
			horizon.UTC().Format(time.RFC3339))
	}
	if horizon.Before(now.AddDate(1, 0, 0)) {
		return fmt.Errorf("%w: its %d time bits of %s run out on %s, less than a year from now", ErrLayout,
			l.TimeBits, l.Unit, horizon.UTC().Format(time.RFC3339))
	}
	return nil
}

// Compose builds the ID for p. The time is truncated to its tick.
func (l Layout) Compose(p Parts) (int64, error) {
	tick := l.Tick(p.Time)
	switch {
	case tick < 0 || tick > l.MaxTick():
		return 0, fmt.Errorf("%w: time %s outside %s..%s", ErrLayout, p.Time.UTC().Format(time.RFC3339Nano),
			l.Epoch.UTC().Format(time.RFC3339), l.Horizon().UTC().Format(time.RFC3339))
	case p.Worker < 0 || p.Worker > l.MaxWorker():
		return 0, fmt.Errorf("%w: worker %d out of range 0..%d", ErrLayout, p.Worker, l.MaxWorker())
	case p.Sequence < 0 || p.Sequence > l.MaxSequence():
		return 0, fmt.Errorf("%w: sequence %d out of range 0..%d", ErrLayout, p.Sequence, l.MaxSequence())
	}
	return l.compose(tick, p.Worker, p.Sequence), nil
}

func (l Layout) compose(tick, worker, seq int64) int64 {
	if l.WorkerLow {
		return tick<<(l.WorkerBits+l.SequenceBits) | seq<<l.WorkerBits | worker
	}
	return tick<<(l.WorkerBits+l.SequenceBits) | worker<<l.SequenceBits | seq
}

// Decompose takes id apart without checking it; see Decode.
func (l Layout) Decompose(id int64) Parts {
	p := Parts{Time: l.TimeOf(id >> (l.WorkerBits + l.SequenceBits))}
	if l.WorkerLow {
		p.Worker, p.Sequence = id&l.MaxWorker(), (id>>l.WorkerBits)&l.MaxSequence()
	} else {
		p.Worker, p.Sequence = (id>>l.SequenceBits)&l.MaxWorker(), id&l.MaxSequence()
	}
	return p
}

// Decode takes id apart and checks that this layout could have produced it
// by now: it must be positive, fit in the layout's bits (below 2^53 for
// js53) and its time be no later than now + tolerance.
// The error wraps ErrDecode and says what is wrong.
func (l Layout) Decode(id int64, now time.Time, tolerance time.Duration) (Parts, error) {
	if id <= 0 {
		return Parts{}, fmt.Errorf("%w: %d is not positive", ErrDecode, id)
	}
	if bits := l.TimeBits + l.WorkerBits + l.SequenceBits; bits < 63 && id>>bits != 0 {
		return Parts{}, fmt.Errorf("%w: %d is above 2^%d - 1 = %d, the largest ID of layout %s (its IDs have %d bits; is it from another layout?)",
			ErrDecode, id, bits, int64(1)<<bits-1, l.Name, bits)
	}
	p := l.Decompose(id)
	if limit := now.Add(tolerance); p.Time.After(limit) {
		return Parts{}, fmt.Errorf("%w: %d decodes to %s, after %s (the time now plus %s tolerance); is it from another layout?",
			ErrDecode, id, p.Time.UTC().Format(time.RFC3339Nano), limit.UTC().Format(time.RFC3339Nano), tolerance)
	}
	return p, nil
}

// String describes the layout, e.g. "leaf (41/10/12 bits, 1ms since 2010-11-04T01:42:54.657Z)".
func (l Layout) String() string {
	name := l.Name
	if name == "" {
		name = "custom"
	}
	if l.WorkerLow {
		return fmt.Sprintf("%s (%d/%d/%d bits time/sequence/worker, %s since %s)", name, l.TimeBits, l.SequenceBits, l.WorkerBits,
			l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
	}
	return fmt.Sprintf("%s (%d/%d/%d bits, %s since %s)", name, l.TimeBits, l.WorkerBits, l.SequenceBits,
		l.Unit, l.Epoch.UTC().Format(time.RFC3339Nano))
}
