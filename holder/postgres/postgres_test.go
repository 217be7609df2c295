package postgres_test

import (
	"testing"

	"github.com/idsql/idsql/holder/holderkind"
	_ "github.com/idsql/idsql/holder/postgres"
)

// The old import path still makes both worker-table kinds available.
func TestOldPathRegisters(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		if k, err := holderkind.Lookup(kind); err != nil || k.WorkerTable != kind {
			t.Errorf("holderkind.Lookup(%s) = %+v, %v; want the worker-table kind", kind, k.WorkerTable, err)
		}
	}
}
