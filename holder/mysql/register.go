package mysql

import (
	"github.com/idsql/idsql/holder/postgres"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the worker-table holder on MySQL or MariaDB as
// holder.kind "mysql". A program links it with
//
//	import _ "github.com/idsql/idsql/holder/mysql"
func init() {
	kinds.RegisterHolder("mysql", postgres.Kind("mysql"))
}
