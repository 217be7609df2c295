// Package postgres is the old import path of holder/workertable, the
// worker-table holder, kept for one release. Importing it registers
// holder.kind "postgres" and "mysql" (holder/workertable's registration).
//
// Deprecated: import github.com/idsql/idsql/holder/workertable.
package postgres

import (
	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/holder/workertable"
)

// The worker-table holder's names, as holder/workertable defines them.
type (
	// Deprecated: use workertable.Holder.
	Holder = workertable.Holder
	// Deprecated: use workertable.Settings.
	Settings = workertable.Settings
	// Deprecated: use workertable.Mode.
	Mode = workertable.Mode
)

// The modes, and the defaults, of holder/workertable.
const (
	// Deprecated: use workertable.Sticky.
	Sticky = workertable.Sticky
	// Deprecated: use workertable.Disposable.
	Disposable = workertable.Disposable
	// Deprecated: use workertable.Lease.
	Lease = workertable.Lease
	// Deprecated: use workertable.DefaultTTL.
	DefaultTTL = workertable.DefaultTTL
)

var (
	// Deprecated: use workertable.Modes.
	Modes = workertable.Modes
	// Deprecated: use workertable.ErrExhausted.
	ErrExhausted = workertable.ErrExhausted
)

// New is workertable.New.
//
// Deprecated: use workertable.New.
func New(reg *registry.Registry, s Settings) (*Holder, error) { return workertable.New(reg, s) }

// Kind is workertable.Kind.
//
// Deprecated: use workertable.Kind.
func Kind(kind string) holderkind.Kind { return workertable.Kind(kind) }
