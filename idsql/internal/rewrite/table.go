package rewrite

import "strings"

// TableNamed returns the Table for a configured name, "table" or
// "schema.table", with its key column ("" means "id").
func TableNamed(name, keyColumn string) Table {
	schema, table, found := strings.Cut(name, ".")
	if !found {
		schema, table = "", name
	}
	return Table{Schema: schema, Name: table, KeyColumn: keyColumn}
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
