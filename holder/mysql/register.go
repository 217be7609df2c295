package mysql

import (
	"github.com/idsql/idsql/holder/holderkind"
	"github.com/idsql/idsql/holder/postgres"
)

// init registers the worker-table holder on MySQL or MariaDB as
// holder.kind "mysql". A program links it with
//
//	import _ "github.com/idsql/idsql/holder/mysql"
func init() {
	holderkind.Register("mysql", postgres.Kind("mysql"))
}
