package mysql_test

import (
	"testing"

	"github.com/idsql/idsql/holder/holderkind"
	_ "github.com/idsql/idsql/holder/mysql"
)

// The old import path still makes kind mysql available.
func TestOldPathRegisters(t *testing.T) {
	if k, err := holderkind.Lookup("mysql"); err != nil || k.WorkerTable != "mysql" {
		t.Errorf("holderkind.Lookup(mysql) = %+v, %v; want the worker-table kind", k.WorkerTable, err)
	}
}
