package postgres_test

import (
	"testing"

	"github.com/idsql/idsql/holder/holderkind"
	_ "github.com/idsql/idsql/holder/postgres"
)

// Importing holder/postgres registers kind postgres and, for programs
// written before holder/mysql (deprecated, for one release), kind mysql:
// each names the dialect of its worker table.
func TestRegistersPostgresAndTheOldMySQLImport(t *testing.T) {
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
