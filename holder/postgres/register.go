package postgres

import (
	"fmt"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the worker-table holder as holder.kind "postgres" (the
// worker table on PostgreSQL). A program links it with
//
//	import _ "github.com/idsql/idsql/holder/postgres"
//
// Deprecated registration: it also registers kind "mysql" as a fallback
// (kinds.RegisterFallbackHolder), so that programs that import this
// package for the worker table on MySQL or MariaDB keep working for one
// release; they should import github.com/idsql/idsql/holder/mysql, where
// kind "mysql" belongs. (holder/mysql imports this package, so this one
// cannot import it back.)
func init() {
	kinds.RegisterHolder("postgres", Kind("postgres"))
	kinds.RegisterFallbackHolder("mysql", Kind("mysql"))
}

// Kind returns the registration of the worker-table holder under
// holder.kind kind, which names the dialect of the worker table's
// database ("postgres", "mysql": idsql refuses the kind on a database of
// another dialect). holder/mysql registers Kind("mysql").
//
// The kind reads holder.session_timeout, its lease TTL (default
// DefaultTTL), which must be at least twice holder.heartbeat so that a
// live process's row never expires between two heartbeats.
func Kind(kind string) kinds.Holder {
	return kinds.Holder{
		Modes:       kinds.Names(Modes),
		Records:     true,
		WorkerTable: kind,
		Check: func(s kinds.HolderSettings) error {
			if minTTL := 2 * s.Heartbeat; s.SessionTimeout != 0 && s.SessionTimeout < minTTL {
				return kinds.KeyErrorf("session_timeout", "%s is shorter than two heartbeats of the worker registry: the %s holder's lease TTL must be at least %s (2 x holder.heartbeat %s)",
					s.SessionTimeout, kind, minTTL, s.Heartbeat)
			}
			return nil
		},
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			if s.Registry == nil {
				return nil, fmt.Errorf("holder: %s: needs the worker registry on a PostgreSQL or MySQL database (KeysOptions.Registry)", kind)
			}
			return New(s.Registry, Settings{Mode: Mode(s.Mode), TTL: s.SessionTimeout})
		},
	}
}
