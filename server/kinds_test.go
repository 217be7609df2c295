package server_test

// The tests use the postgres holder and the Redis buffer; a program links
// the kinds it imports (cmd/idsql links them all).
import (
	_ "github.com/idsql/idsql/holder/workertable" // holder.kind: postgres, mysql
	_ "github.com/idsql/idsql/idsql/segment/redisqueue"
)
