package sqlitestore

import "github.com/idsql/idsql/idsql/kinds"

// init registers New as the segment store of SQLite databases. A program
// links it with
//
//	import _ "github.com/idsql/idsql/idsql/segment/sqlitestore"
func init() { kinds.RegisterStore("sqlite", New) }
