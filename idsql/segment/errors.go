package segment

import (
	"errors"
	"fmt"
)

// Sentinel errors. Compare with errors.Is: the errors returned by this
// package wrap them inside a *KeyError or *SettingsError.
var (
	// ErrUnknownKey reports a key that has no row in idsql_alloc (or that a
	// refresh dropped because its row was deleted).
	ErrUnknownKey = errors.New("segment: unknown key")

	// ErrKeyExists reports an attempt to create a key that already exists.
	ErrKeyExists = errors.New("segment: key already exists")

	// ErrTimeout reports that no range became available within
	// Settings.WaitTimeout.
	ErrTimeout = errors.New("segment: timed out waiting for a range")

	// ErrExhausted reports a key whose next range would pass MaxID.
	ErrExhausted = errors.New("segment: key exhausted its ID space")

	// ErrClosed reports use of a Generator after Close.
	ErrClosed = errors.New("segment: generator closed")

	// ErrInvalidSettings is wrapped by every *SettingsError.
	ErrInvalidSettings = errors.New("segment: invalid settings")

	// ErrInvalidRange reports a Store that returned a range the generator
	// cannot use (empty, reversed, for another key, or not positive).
	ErrInvalidRange = errors.New("segment: store returned an invalid range")

	// ErrNotDurable reports an allocation an SQLStore refused because a
	// failover could lose it and hand the range out again: a PostgreSQL
	// primary streaming to a standby that does not hold every commit it
	// acknowledges (see SQLStore.AcceptLazyCommits).
	ErrNotDurable = errors.New("segment: the database may lose an allocation in a failover")

	// ErrMultiWriter reports an allocation an SQLStore refused on a node
	// of a cluster that takes writes on every node and can lose one of two
	// concurrent updates made on different nodes (a MariaDB Galera
	// cluster): two allocations through different nodes could hand out one
	// range (see SQLStore.OneWriterNode).
	ErrMultiWriter = errors.New("segment: the database is a node of a multi-writer cluster")
)

// KeyError is the error returned for a failed operation on one key. It names
// the key and the operation and wraps the cause, which may be a sentinel of
// this package (ErrUnknownKey, ErrTimeout, ...), a context error or the
// database's own error.
type KeyError struct {
	Key string // the segment key (idsql_alloc.biz_tag)
	Op  string // what was being done: "next id", "load range", "allocate", ...
	Err error  // the cause
}

func (e *KeyError) Error() string {
	return fmt.Sprintf("segment: key %q: %s: %v", e.Key, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *KeyError) Unwrap() error { return e.Err }

// SettingsError reports an invalid field of Settings. It wraps
// ErrInvalidSettings.
type SettingsError struct {
	Field  string // the Settings field, e.g. "Threshold"
	Value  any    // the offending value
	Reason string // what a valid value looks like
}

func (e *SettingsError) Error() string {
	return fmt.Sprintf("segment: invalid Settings.%s %v: %s", e.Field, e.Value, e.Reason)
}

// Unwrap returns ErrInvalidSettings.
func (e *SettingsError) Unwrap() error { return ErrInvalidSettings }

func keyErr(key, op string, err error) error {
	return &KeyError{Key: key, Op: op, Err: err}
}
