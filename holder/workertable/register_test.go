package workertable_test

import (
	"testing"

	"github.com/idsql/idsql/holder/holderkind"
	_ "github.com/idsql/idsql/holder/workertable"
)

// Importing holder/workertable registers kinds postgres and mysql, each
// naming the dialect of its worker table.
func TestRegistersPostgresAndMySQL(t *testing.T) {
	for _, kind := range []string{"postgres", "mysql"} {
		k, err := holderkind.Lookup(kind)
		if err != nil {
			t.Fatalf("holderkind.Lookup(%s): %v", kind, err)
		}
		if k.WorkerTable != kind || !k.Records {
			t.Errorf("kind %s: WorkerTable %q, Records %v", kind, k.WorkerTable, k.Records)
		}
	}
}
