package segment

import (
	"context"
	"time"
)

// Store hands out ranges of IDs for keys. Implementations must guarantee
// that ranges allocated for one key never overlap, across processes and
// restarts, and that a range is durably recorded (committed) before Allocate
// returns it.
//
// SQLStore implements Store on PostgreSQL (and, through the mysqlstore and
// sqlitestore packages, on MySQL/MariaDB and SQLite).
type Store interface {
	// Keys lists the keys that exist.
	Keys(ctx context.Context) ([]string, error)

	// Allocate reserves the next range for req.Key. A key that does not
	// exist yields an error wrapping ErrUnknownKey.
	Allocate(ctx context.Context, req Request) (Range, error)
}

// Request asks a Store for one range.
type Request struct {
	Key      string // the key (idsql_alloc.biz_tag)
	Step     int64  // size of the range, which must hold exactly Step IDs; 0 means the step stored for the key
	Instance string // recorded in idsql_alloc_log.instance
}

// Range is a range of IDs handed to one allocation: every ID in
// [First, Last] belongs to Key.
type Range struct {
	Key        string
	First      int64     // first ID of the range
	Last       int64     // last ID of the range, inclusive
	StoredStep int64     // the key's step as stored (the floor of the adaptive step)
	Instance   string    // who was handed the range
	Time       time.Time // when it was handed out
}

// Len returns the number of IDs in the range.
func (r Range) Len() int64 { return r.Last - r.First + 1 }

// Contains reports whether id is in the range.
func (r Range) Contains(id int64) bool { return r.First <= id && id <= r.Last }
