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
// For SQLite and MySQL (Config.Dialect) the new parameters are ? and
// Plan.ArgsFor places the IDs among the caller's arguments where they belong,
// so a ? later in the statement (ON CONFLICT, ON DUPLICATE KEY UPDATE,
// RETURNING) keeps its own argument:
//
//	INSERT INTO orders SET user_id = ? ON DUPLICATE KEY UPDATE total = ?
//	INSERT INTO orders SET user_id = ?, `id` = ? ON DUPLICATE KEY UPDATE total = ?
//	(args: user, ID, total)
//
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
//		rows := plan.Decide(args, nil) // which rows take a key
//		ids := generate(rows.Need())
//		args = plan.ArgsFor(buf[:0], args, ids, rows, nil)
//		// execute plan.Query with args
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
// understood. For SQLite the statement may also be INSERT OR ..., INSERT
// IGNORE or REPLACE INTO.
//
// # Keys the statement gives
//
// A statement that lists the key column (or, without a column list, gives
// it by position, or assigns it in MySQL's SET) keeps the caller's keys,
// except those given as DEFAULT, NULL or 0, which are replaced by added
// placeholders for generated keys, and those given as a bind parameter,
// whose value is looked at when the statement runs: Plan.Need counts the
// rows whose argument is 0 or NULL (IsZeroKey) and Args puts a generated
// key there. So gorm's (id, ...) VALUES ($1, ...) with 0 and bun's
// VALUES (DEFAULT, ...) get keys, and a prepared statement serves new rows
// and rows with their own keys alike. Table.KeepZero turns this off: such
// statements then pass unchanged. Any other expression is the caller's key.
//
// # What else a plan says
//
// Plan.Upsert marks a statement that may update an existing row instead of
// inserting one (ON CONFLICT ... DO UPDATE, ON DUPLICATE KEY UPDATE): such
// a row keeps its key, so a caller must not report the generated one as
// written without knowing. For a table with a ShardColumn, Plan.Shards
// says, read in the same pass, what each row gives that column (a bind
// parameter or a literal; anything else refuses the statement).
//
// DDL (statements opening with CREATE, ALTER, DROP or COMMENT) passes
// unchanged: an INSERT inside it (CREATE RULE ... DO ALSO INSERT, a
// trigger's or routine's body) does not run now.
//
// # MySQL and MariaDB
//
// The MySQL dialect reads these forms, keywords in any case:
//
//	{INSERT [LOW_PRIORITY | DELAYED | HIGH_PRIORITY] [IGNORE] | REPLACE [LOW_PRIORITY | DELAYED]}
//	    [INTO] name [PARTITION (p, ...)]
//	    { [(col, ...)] {VALUES | VALUE} {(...) [, (...)]... | ROW(...) [, ROW(...)]...}
//	    | SET col = expr [, col = expr]... }
//	    [AS alias [(col, ...)]]
//	    [ON DUPLICATE KEY UPDATE ... | RETURNING ...]
//
// Each row gets one more value and the column list one more column; SET
// gets ", key = ?"; a row alias's column list gets the key column's name,
// which must not be one of its names already. () VALUES () and VALUES ()
// (a row of defaults) become (key) VALUES (?). Names the rewriter writes
// are quoted with backticks. INSERT ... SELECT and INSERT ... TABLE are
// not filled, as for PostgreSQL, and DEFAULT VALUES is refused.
//
// The lexer follows MySQL: '...' and "..." are strings in which a
// backslash escapes the next byte (unless Config.NoBackslashEscapes says
// the server runs with NO_BACKSLASH_ESCAPES) and a doubled quote is a
// quote; "..." quotes identifiers instead with Config.ANSIQuotes; `...`
// quotes identifiers, a doubled backtick standing for one; identifiers may
// begin with a digit (2fa_codes) or '$'; comments are /* ... */ (not
// nested), # to the end of the line, and -- when followed by white space, a
// control character or the end (1--1 is an expression); @var and @@var are
// variables.
//
// An executable comment /*! ... */ is read as the SQL it holds, which MySQL
// and MariaDB both run, so INSERT /*! IGNORE */ INTO ... is filled (a
// placeholder the rewrite adds inside one stays inside it). A versioned one,
// /*!50100 ... */, runs or not depending on the server's version, and
// MariaDB's /*M! ... */ runs on MariaDB only: like a nested comment, a NUL
// byte in a comment, or a comment inside /*! ... */, they make the statement
// "not understood" (see below) when it names a configured table.
//
// # Pass-through and errors
//
// Plan returns a nil *Plan (send unchanged) for every statement that is not
// an INSERT into a configured table, and for INSERTs that give every key
// themselves (see above). Statements that do not contain the word INSERT (or REPLACE, for
// SQLite and MySQL) are rejected without allocating.
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
// PostgreSQL; for SQLite and MySQL all comparisons ignore case (MySQL's
// table names may be case-sensitive on the server: ORDERS is filled as
// orders). A configured table without a schema matches the table in any
// schema (a MySQL database); one with a schema matches that schema and
// unqualified names. Table.String names the table in errors.
//
// # Dialect assumptions
//
// The PostgreSQL dialect reads PostgreSQL with standard_conforming_strings
// on (the default since 9.1): backslashes are plain characters in '...' and
// escapes only in E'...'. The SQLite dialect refuses, as not understood,
// every construct SQLite and MySQL read differently. The MySQL dialect
// assumes a connection character set in which a quote or backslash byte is
// never part of a multi-byte character (UTF-8, utf8mb4, latin1; not GBK,
// Big5 or SJIS), and that the sql_mode Config describes holds on every
// connection.
package rewrite
