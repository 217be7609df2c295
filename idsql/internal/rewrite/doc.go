// Package rewrite is idsql's INSERT rewriter: it decides, for one query text,
// whether the driver wrapper must fill a configured table's key column, and
// how.
//
// For an INSERT into a configured table whose column list lacks the key
// column, the plan adds the key column to the column list and one bind
// parameter per VALUES row:
//
//	INSERT INTO orders (user_id, total) VALUES ($1, $2), ($3, $4)
//	INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $5), ($3, $4, $6)
//
// For SQLite the new parameters are ? and Plan.Args
// places the IDs among the caller's arguments where they belong, so a ?
// later in the statement (ON CONFLICT, RETURNING) keeps its own argument.
// IDs never enter the SQL text: a Plan is computed once per query text,
// cached, and executed many times with fresh IDs.
//
// # Usage
//
//	rw, err := rewrite.New(rewrite.Config{
//		Tables: []rewrite.Table{{Name: "orders", KeyColumn: "id"}},
//	})
//	...
//	plan, err := rw.Plan(ctx, query, catalog)
//	switch {
//	case err != nil:
//		return err // *rewrite.Error: names the table and what to do
//	case plan == nil:
//		// execute query with args, unchanged
//	default:
//		ids := generate(plan.Rows)
//		args = plan.Args(buf[:0], args, ids)
//		// execute plan.Query with args; ids[0] is LastInsertId
//	}
//
// # What is filled
//
// A single statement (a trailing semicolon is allowed), optionally after
// WITH, of the form
//
//	INSERT INTO name [AS alias] [(col, ...)] [OVERRIDING SYSTEM VALUE]
//	    { VALUES (...) [, (...)]... | DEFAULT VALUES }
//	    [ON CONFLICT ... | ON DUPLICATE KEY ...] [RETURNING ...]
//
// with comments, literals of every kind and quoted identifiers anywhere.
// DEFAULT VALUES becomes (key) VALUES ($1). Without a column list the Catalog
// gives the column order, and the values go to the table's first columns as
// PostgreSQL assigns them: when the key is among those columns the caller
// gave it and the statement passes unchanged; otherwise those columns are
// listed and the key added after them; rows wider than the table are not
// understood. For
// SQLite the statement may also be INSERT OR ..., INSERT IGNORE or
// REPLACE INTO.
//
// # Pass-through and errors
//
// Plan returns a nil *Plan (send unchanged) for every statement that is not
// an INSERT into a configured table, and for INSERTs that list the key
// column. Statements that do not contain the word INSERT (or REPLACE in
// SQLite) are rejected without allocating.
//
// An INSERT into a configured table that the rewriter cannot fill (INSERT
// ... SELECT, an INSERT inside a WITH query or in a string of several
// statements, MERGE ... INSERT, EXPLAIN ANALYZE or PREPARE of an INSERT,
// text it cannot read with certainty) is never rewritten: it passes
// unchanged when the Catalog says the key column has a default, and
// otherwise Plan returns an *Error naming the table, the position and what
// to do.
//
// # Names
//
// Unquoted identifiers fold to lower case and quoted ones are exact, as in
// PostgreSQL; for SQLite all comparisons ignore case. A
// configured table without a schema matches the table in any schema; one
// with a schema matches that schema and unqualified names. Table.String
// names the table in errors.
//
// # Dialect assumptions
//
// The PostgreSQL dialect reads PostgreSQL with standard_conforming_strings
// on (the default since 9.1): backslashes are plain characters in '...' and
// escapes only in E'...'. The SQLite dialect refuses, as not understood,
// every construct SQLite and MySQL read differently.
package rewrite
