package dialect

import "fmt"

// The shape records: idsql_shapes holds one row per (namespace, table)
// naming the key shape (idsql's TableConfig.Shape) the table issues keys
// under, written before the table's first key, so that a process
// configured with another shape is refused instead of issuing keys that
// may equal the ones already issued.

// ShapeSchema returns the statements creating idsql_shapes, each
// idempotent and atomic on its own.
func (d Dialect) ShapeSchema() []string { return append([]string(nil), d.spec().shapeSchema...) }

// textShapeSchema is idsql_shapes where text columns take any length
// (PostgreSQL, SQLite).
var textShapeSchema = []string{`
CREATE TABLE IF NOT EXISTS idsql_shapes (
	namespace  TEXT NOT NULL,
	table_name TEXT NOT NULL,
	shape      TEXT NOT NULL,
	recorded   TEXT NOT NULL,
	PRIMARY KEY (namespace, table_name)
)`}

// ShapeRead returns the query of a table's recorded shape; its arguments
// are the namespace and the table.
func (d Dialect) ShapeRead() string {
	return d.Rebind("SELECT shape, recorded FROM idsql_shapes WHERE namespace = ? AND table_name = ?")
}

// ShapeRecord returns the statement recording a table's shape unless one
// is recorded: arguments namespace, table, shape, recorded (RFC 3339
// text). It changes no row that exists.
func (d Dialect) ShapeRecord() string {
	s := d.spec()
	tail := ""
	if s.ignoreTail != "" {
		tail = fmt.Sprintf(s.ignoreTail, "namespace, table_name")
	}
	return d.Rebind(s.ignoreVerb + " idsql_shapes (namespace, table_name, shape, recorded) VALUES (?, ?, ?, ?)" + tail)
}

// ShapeRewrite returns the statement replacing a table's recorded shape:
// arguments shape, recorded, namespace, table, and the shape it replaces.
func (d Dialect) ShapeRewrite() string {
	return d.Rebind("UPDATE idsql_shapes SET shape = ?, recorded = ? WHERE namespace = ? AND table_name = ? AND shape = ?")
}

// ShapeLeases returns the query counting the worker leases of a table in
// idsql_workers: arguments namespace, table.
func (d Dialect) ShapeLeases() string {
	return d.Rebind("SELECT COUNT(*) FROM idsql_workers WHERE namespace = ? AND table_name = ?")
}

// ShapeRanges returns the query counting the ranges logged in
// idsql_alloc_log for a segment key or any of its shards (key#0, key#1,
// ...): arguments key, key+"#", key+"$" ('$' follows '#').
func (d Dialect) ShapeRanges() string {
	return d.Rebind("SELECT COUNT(*) FROM idsql_alloc_log WHERE biz_tag = ? OR (biz_tag >= ? AND biz_tag < ?)")
}

// AnyRow returns a query giving one row of a configured table, or none
// when it is empty.
func (d Dialect) AnyRow(table string) string {
	return fmt.Sprintf("SELECT 1 FROM %s LIMIT 1", d.QuoteQualified(table))
}
