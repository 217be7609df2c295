package filelock

import (
	"errors"
	"path/filepath"
	"testing"
)

func TestSecondLockRefusedUntilUnlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "w.lock")
	a, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock = %v, want ErrLocked", err)
	}
	if err := a.Unlock(); err != nil {
		t.Fatal(err)
	}
	b, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after Unlock = %v", err)
	}
	b.Unlock()
}
