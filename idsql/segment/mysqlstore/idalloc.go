package mysqlstore

import (
	"database/sql"

	"github.com/idsql/idsql/idsql/segment"
)

// IDAllocSettings configures a store on the ID service's id_alloc table;
// see segment.IDAllocSettings.
type IDAllocSettings = segment.IDAllocSettings

// IDAllocStore is a segment store on an id_alloc table; see
// segment.IDAllocStore.
type IDAllocStore = segment.IDAllocStore

// NewIDAlloc returns a store on db's id_alloc table, a MySQL or MariaDB
// database (segment.NewIDAllocStore with this package's SQL).
func NewIDAlloc(db *sql.DB, st IDAllocSettings) (*IDAllocStore, error) {
	return segment.NewIDAllocStore(db, SQL(), st)
}
