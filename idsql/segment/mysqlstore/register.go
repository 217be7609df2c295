package mysqlstore

import "github.com/idsql/idsql/idsql/kinds"

// init registers New as the segment store of MySQL and MariaDB databases,
// which idsql.Migrate, idsql.Lookup and the wrapper then use. A program
// links it with
//
//	import _ "github.com/idsql/idsql/idsql/segment/mysqlstore"
func init() { kinds.RegisterStore("mysql", New) }
