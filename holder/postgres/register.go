package postgres

import (
	"fmt"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the worker-table holder as holder.kind "postgres" (the
// worker table on PostgreSQL) and "mysql" (on MySQL or MariaDB; idsql
// refuses a kind that does not name the table's database). A program links
// both with
//
//	import _ "github.com/idsql/idsql/holder/postgres"
func init() {
	for _, kind := range []string{"postgres", "mysql"} {
		register(kind)
	}
}

func register(kind string) {
	kinds.RegisterHolder(kind, kinds.Holder{
		Modes:   kinds.Names(Modes),
		Records: true,
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			if s.Registry == nil {
				return nil, fmt.Errorf("holder: %s: needs the worker registry on a PostgreSQL or MySQL database (KeysOptions.Registry)", kind)
			}
			return New(s.Registry, Settings{Mode: Mode(s.Mode), TTL: s.SessionTimeout})
		},
	})
}
