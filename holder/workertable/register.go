package workertable

import (
	"fmt"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
)

// init registers the worker-table holder as holder.kind "postgres" and
// "mysql", the dialect of the worker table's database. A program links it
// with
//
//	import _ "github.com/idsql/idsql/holder/workertable"
func init() {
	holderkind.Register("postgres", Kind("postgres"))
	holderkind.Register("mysql", Kind("mysql"))
}

// Kind returns the registration of the worker-table holder under
// holder.kind kind, which names the dialect of the worker table's
// database ("postgres", "mysql": idsql refuses the kind on a database of
// another dialect).
//
// The kind reads holder.session_timeout, its lease TTL (default
// DefaultTTL), which must be at least twice holder.heartbeat so that a
// live process's row never expires between two heartbeats.
func Kind(kind string) holderkind.Kind {
	return holderkind.Kind{
		Modes:       holderkind.Names(Modes),
		Records:     true,
		WorkerTable: kind,
		Check: func(s holderkind.Settings) error {
			if minTTL := 2 * s.Heartbeat; s.SessionTimeout != 0 && s.SessionTimeout < minTTL {
				return holderkind.KeyErrorf("session_timeout", "%s is shorter than two heartbeats of the worker registry: the %s holder's lease TTL must be at least %s (2 x holder.heartbeat %s)",
					s.SessionTimeout, kind, minTTL, s.Heartbeat)
			}
			return nil
		},
		New: func(s holderkind.Settings) (holder.Holder, error) {
			if s.Registry == nil {
				return nil, fmt.Errorf("holder: %s: needs the worker registry on a PostgreSQL or MySQL database (KeysOptions.Registry)", kind)
			}
			return New(s.Registry, Settings{Mode: Mode(s.Mode), TTL: s.SessionTimeout})
		},
	}
}
