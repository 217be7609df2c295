package engine

import (
	"errors"
	"fmt"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/internal/dialect"
)

// ErrUUIDKeys is wrapped by the refusal of a kind of work the engine does
// not yet do for a table whose keys are UUIDs (strategy uuid7).
var ErrUUIDKeys = errors.New("idsql: not yet for a table with UUID keys")

// uuidKeys is how the keys of a table with UUID keys go into its key
// column: the codec that writes each key as a UUIDv7, and the way the
// column holds one (its text, or its 16 bytes), read from the catalog.
type uuidKeys struct {
	codec   *keyform.UUIDKeys
	storage dialect.UUIDStorage
}

// check reports a key the codec cannot write (a key source's key always
// can): Fill checks its keys before any argument is made, so that Box
// never meets one.
func (u *uuidKeys) check(ids []int64) error {
	for _, id := range ids {
		if _, err := u.codec.UUID(id); err != nil {
			return err
		}
	}
	return nil
}

// Box returns key id as the column's argument (rewrite.Boxer): the UUID's
// canonical text, or a new slice of its 16 bytes.
func (u *uuidKeys) Box(id int64) any {
	b, _ := u.codec.UUID(id) // checked by check
	if u.storage == dialect.UUIDBytes {
		return b[:]
	}
	return keyform.FormatUUID(b)
}

// UUIDKeys returns the UUID codec of table when its keys are UUIDs
// (Config.UUIDs, made once), nil otherwise.
func (e *Engine) UUIDKeys(table string) *keyform.UUIDKeys { return e.cfg.UUIDs[table] }

// uuidKeyed reports whether p's table has UUID keys; at no cost for an
// engine without such tables.
func (e *Engine) uuidKeyed(p *rewrite.Plan) bool {
	return len(e.cfg.UUIDs) > 0 && e.cfg.UUIDs[p.Table.String()] != nil
}

// uuidTable returns how table's UUID keys go into its key column once its
// key column was checked (CheckKey), nil for a table of 64-bit keys or
// one not checked yet.
func (e *Engine) uuidTable(table string) *uuidKeys {
	codec := e.cfg.UUIDs[table]
	if codec == nil {
		return nil
	}
	s, ok := e.keyChecked.Load(table)
	if !ok || s.(dialect.UUIDStorage) == dialect.NoUUID {
		return nil
	}
	return &uuidKeys{codec: codec, storage: s.(dialect.UUIDStorage)}
}

// refuseUUID returns the error refusing what for table when its keys are
// UUIDs, nil otherwise.
func (e *Engine) refuseUUID(table, what string) error {
	if e.cfg.UUIDs[table] == nil {
		return nil
	}
	return fmt.Errorf("%w: %s: %s: table %s has UUID keys; insert with a statement (RETURNING gives the keys back)", ErrUUIDKeys, e.cfg.Prefix, what, table)
}
