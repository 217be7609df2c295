package keyset

import (
	"errors"
	"fmt"

	"github.com/idsql/idsql/internal/dialect"
)

// ErrNotMigrated is wrapped by the errors of a database that lacks what
// Migrate creates: idsql's tables (idsql_alloc, idsql_workers), or the
// segment key of a table added to the configuration after Migrate ran.
// The fix is to run `idsql migrate --config idsql.yaml --dsn ...`, or
// Migrate, once.
var ErrNotMigrated = errors.New("idsql: database not migrated")

// migrateFix is what the errors wrapping ErrNotMigrated tell to do.
const migrateFix = "run `idsql migrate --config idsql.yaml --dsn ...` (or call idsql.Migrate) once"

// notMigrated returns err wrapped with ErrNotMigrated and the fix when it
// says one of idsql's tables does not exist (see dialect.UndefinedTable),
// else nil. what names what failed.
func notMigrated(what string, err error) error {
	if !dialect.AnyUndefinedTable(err) {
		return nil
	}
	return fmt.Errorf("%w: %s: idsql's tables are missing in the database: %s before using it: %w", ErrNotMigrated, what, migrateFix, err)
}
