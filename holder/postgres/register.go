package postgres

import (
	"errors"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the worker-table holder as holder.kind "postgres". A
// program links it with
//
//	import _ "github.com/idsql/idsql/holder/postgres"
func init() {
	kinds.RegisterHolder("postgres", kinds.Holder{
		Modes:   kinds.Names(Modes),
		Records: true,
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			if s.Registry == nil {
				return nil, errors.New("holder: postgres: needs the worker registry on a PostgreSQL or MySQL database (KeysOptions.Registry)")
			}
			return New(s.Registry, Settings{Mode: Mode(s.Mode), TTL: s.SessionTimeout})
		},
	})
}
