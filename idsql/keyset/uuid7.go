package keyset

import (
	"errors"
	"fmt"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/snowflake"
)

// validateUUID7 checks a uuid7 table's settings: the namespace's layout
// must map to UUIDv7s (keyform.NewUUIDKeys), and the settings that write
// or bound a 64-bit key do not apply to a UUID.
func validateUUID7(t TableConfig, layout snowflake.Layout) error {
	switch {
	case t.Step != 0 || t.Key != "":
		return errors.New("step and key apply to segment tables only")
	case t.Text != (TextForm{}):
		return errors.New("text applies to 64-bit keys: a uuid7 table's keys are UUIDs, written in the UUID's own text form")
	case t.Spread():
		return errors.New("shape applies to 64-bit keys: a uuid7 table's keys are laid out by RFC 9562 (time first)")
	case t.MaxID != 0:
		return errors.New("max_id applies to 64-bit keys: a uuid7 table's keys are UUIDs")
	}
	if _, err := keyform.NewUUIDKeys(layout); err != nil {
		return fmt.Errorf("strategy uuid7: %w", err)
	}
	return nil
}

// UUIDKeys returns the UUID codec of table when it is a uuid7 table
// (keyform.UUIDKeys over the namespace's layout), nil otherwise.
func (c *Config) UUIDKeys(table string) (*keyform.UUIDKeys, error) {
	if c.Tables[table].Strategy != UUID7 {
		return nil, nil
	}
	layout, err := c.SnowflakeLayout()
	if err != nil {
		return nil, err
	}
	u, err := keyform.NewUUIDKeys(layout)
	if err != nil {
		return nil, err
	}
	return &u, nil
}

// UUIDTables returns the UUID codec of each uuid7 table of c, by name
// (engine.Config.UUIDs); nil when there is none.
func (c *Config) UUIDTables() (map[string]*keyform.UUIDKeys, error) {
	var m map[string]*keyform.UUIDKeys
	for _, t := range c.TableNames() {
		u, err := c.UUIDKeys(t)
		if err != nil {
			return nil, &FieldError{Field: "tables." + t + ".strategy", Err: err}
		}
		if u != nil {
			if m == nil {
				m = make(map[string]*keyform.UUIDKeys)
			}
			m[t] = u
		}
	}
	return m, nil
}
