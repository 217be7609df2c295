package rewrite

import (
	"strings"

	"github.com/idsql/idsql/internal/dialect"
)

// TableNamed returns the Table for a configured name, "table" or
// "schema.table", each part an identifier or a "quoted name", with its
// key column ("" means "id"). Its Label is name. Whether it keeps zero
// keys (KeepZero) and its shard column are the caller's to set
// (idsql/internal/fill decides them for both front doors).
func TableNamed(name, keyColumn string) Table {
	var schema, table string
	if parts, ok := dialect.SplitQualified(name); ok {
		table = parts[len(parts)-1]
		if len(parts) == 2 {
			schema = parts[0]
		}
	} else { // not a validated configuration name: as it was always read
		var found bool
		if schema, table, found = strings.Cut(name, "."); !found {
			schema, table = "", name
		}
	}
	return Table{Schema: schema, Name: table, KeyColumn: keyColumn, Label: name}
}

// Match returns the configured table that the catalog names schema and
// name designate, compared as Plan compares a statement's names (schema
// is "" for an unqualified name). Callers that get a table by name rather
// than from SQL text, a COPY say, use it to decide whether to fill it.
func (r *Rewriter) Match(schema, name string) (Table, bool) {
	if t := r.match(schema, name); t != nil {
		return *t, true
	}
	return Table{}, false
}
