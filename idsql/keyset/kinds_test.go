package keyset_test

// The tests use every holder kind, segment store and key buffer; a program
// links the ones it imports.
import (
	_ "github.com/idsql/idsql/holder/etcd"
	_ "github.com/idsql/idsql/holder/workertable" // holder.kind: postgres, mysql
	_ "github.com/idsql/idsql/holder/zookeeper"
	_ "github.com/idsql/idsql/idsql/segment/mysqlstore"
	_ "github.com/idsql/idsql/idsql/segment/redisqueue"
	_ "github.com/idsql/idsql/idsql/segment/sqlitestore"
)
