// Package filelock holds exclusive advisory locks on files, so that two
// processes on one host cannot both use what a file stands for. The kernel
// drops the lock when its process exits, however it exits.
package filelock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrLocked means another process (or another Lock in this one) holds the
// lock.
var ErrLocked = errors.New("filelock: held by another process")

// Lock is a held lock; Unlock releases it.
type Lock struct{ f *os.File }

// TryLock takes the exclusive lock on path, creating the file, without
// waiting. It returns an error wrapping ErrLocked when the lock is held.
func TryLock(path string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error { return l.f.Close() }
