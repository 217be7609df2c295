package rewrite

import (
	"context"

	"github.com/idsql/idsql/internal/dialect"
)

// testTables are the tables the tests configure.
var testTables = []Table{
	{Name: "orders"},
	{Name: "Items", KeyColumn: "ItemID"},
	{Schema: "shop", Name: "users", KeyColumn: "user_id"},
	{Name: "events"},
	{Name: "ledger"},
	{Name: "2fa_codes"}, // a MySQL name that begins with a digit
}

// fakeCatalog answers from a fixed map of "schema.table" or "table".
type fakeCatalog map[string][]Column

func (c fakeCatalog) Columns(_ context.Context, schema, table string) ([]Column, error) {
	if cols, ok := c[schema+"."+table]; ok && schema != "" {
		return cols, nil
	}
	return c[table], nil
}

// Keep in step with pgSchema in pg_test.go.
var testCatalog = fakeCatalog{
	"orders": {{Name: "id"}, {Name: "user_id"}, {Name: "total"}, {Name: "note"}, {Name: `we"ird (x)`}},
	"Items":  {{Name: "ItemID"}, {Name: "name"}},
	"users":  {{Name: "user_id"}, {Name: "email"}},
	"events": {{Name: "id", HasDefault: true}, {Name: "kind"}},
	"ledger": {{Name: "kind"}, {Name: "amount"}, {Name: "id"}, {Name: "memo"}},
	// MySQL only: keep in step with mysqlSchema in mysql_test.go.
	"2fa_codes": {{Name: "id"}, {Name: "code"}, {Name: "2nd"}},
}

// d returns the case's dialect: PostgreSQL, the rewriter's default, when
// the case leaves it zero.
func (tc rwCase) d() dialect.Dialect {
	if tc.dialect == dialect.Unknown {
		return dialect.PostgreSQL
	}
	return tc.dialect
}

// rwCase is one table-test case. want "" means the query passes unchanged
// (nil plan); err, when set, is a substring of the expected error.
type rwCase struct {
	name      string
	dialect   dialect.Dialect
	in        string
	want      string
	rows      int
	err       string
	noPG      bool // valid for the rewriter but not for the PostgreSQL test schema
	notSQLite bool // SQLite dialect: MySQL syntax that SQLite itself rejects

	// MySQL dialect.
	noBackslash bool   // NO_BACKSLASH_ESCAPES
	ansiQuotes  bool   // ANSI_QUOTES
	args        string // the arguments Plan.Args builds from p1, p2, ... and IDs id1, id2, ...
	notMariaDB  bool   // MySQL 8 syntax MariaDB rejects
	notMySQL    bool   // MariaDB syntax MySQL rejects
	noServer    bool   // valid for the rewriter, not for the MySQL test schema
	origInvalid bool   // the server refuses the original, and accepts the rewrite that completes it
}

const noDefault = `, and key column id has no default; list id in the column list and pass a key from idsql's DB.NextID(ctx, "orders") or Keys.NextID, or give the column a default`

var rwCases = []rwCase{
	// Basic forms.
	{name: "basic", in: `INSERT INTO orders (user_id, total) VALUES ($1, $2)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $3)`, rows: 1},
	{name: "multi-row", in: `INSERT INTO orders (user_id, total) VALUES ($1, $2), ($3, $4)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $5), ($3, $4, $6)`, rows: 2},
	{name: "three rows literals", in: `INSERT INTO orders (user_id, total) VALUES (1, 2.5), (2, 3), (3, -4e2)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES (1, 2.5, $1), (2, 3, $2), (3, -4e2, $3)`, rows: 3},
	{name: "literals only", in: `INSERT INTO orders (user_id, total) VALUES (1, 2.5)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES (1, 2.5, $1)`, rows: 1},
	{name: "lower case", in: `insert into orders (user_id) values ($1)`,
		want: `insert into orders (user_id, id) values ($1, $2)`, rows: 1},
	{name: "mixed case", in: `InSeRt InTo ORDERS (User_Id) VaLuEs ($1)`,
		want: `InSeRt InTo ORDERS (User_Id, id) VaLuEs ($1, $2)`, rows: 1},
	{name: "tight", in: `INSERT INTO orders(user_id)VALUES($1)`,
		want: `INSERT INTO orders(user_id, id)VALUES($1, $2)`, rows: 1},
	{name: "newlines", in: "INSERT\n\tINTO\n orders\n(\n user_id\n)\nVALUES\n(\n$1\n)\n",
		want: "INSERT\n\tINTO\n orders\n(\n user_id, id\n)\nVALUES\n(\n$1, $2\n)\n", rows: 1},
	{name: "placeholders out of order", in: `INSERT INTO orders (user_id, total) VALUES ($2, $1)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES ($2, $1, $3)`, rows: 1},
	{name: "placeholder reused", in: `INSERT INTO orders (user_id, total) VALUES ($1, $2), ($1, $2)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $3), ($1, $2, $4)`, rows: 2},
	{name: "DEFAULT in values", in: `INSERT INTO orders (user_id, total) VALUES (DEFAULT, $1)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES (DEFAULT, $1, $2)`, rows: 1},
	{name: "NULL value", in: `INSERT INTO orders (note) VALUES (NULL)`,
		want: `INSERT INTO orders (note, id) VALUES (NULL, $1)`, rows: 1},

	// Table names.
	{name: "quoted table", in: `INSERT INTO "orders" (user_id) VALUES ($1)`,
		want: `INSERT INTO "orders" (user_id, id) VALUES ($1, $2)`, rows: 1},
	{name: "quoted other case", in: `INSERT INTO "Orders" (user_id) VALUES ($1)`, noPG: true},
	{name: "quoted mixed-case configured", in: `INSERT INTO "Items" (name) VALUES ($1)`,
		want: `INSERT INTO "Items" (name, "ItemID") VALUES ($1, $2)`, rows: 1},
	{name: "unquoted folds away from mixed case", in: `INSERT INTO Items (name) VALUES ($1)`, noPG: true},
	{name: "public schema", in: `INSERT INTO public.orders (user_id) VALUES ($1)`,
		want: `INSERT INTO public.orders (user_id, id) VALUES ($1, $2)`, rows: 1},
	{name: "quoted schema and table", in: `INSERT INTO "public"."orders" (user_id) VALUES ($1)`,
		want: `INSERT INTO "public"."orders" (user_id, id) VALUES ($1, $2)`, rows: 1},
	{name: "spaced qualified name", in: `INSERT INTO public . orders (user_id) VALUES ($1)`,
		want: `INSERT INTO public . orders (user_id, id) VALUES ($1, $2)`, rows: 1},
	{name: "configured schema", in: `INSERT INTO shop.users (email) VALUES ($1)`,
		want: `INSERT INTO shop.users (email, user_id) VALUES ($1, $2)`, rows: 1},
	{name: "configured schema, unqualified", in: `INSERT INTO users (email) VALUES ($1)`,
		want: `INSERT INTO users (email, user_id) VALUES ($1, $2)`, rows: 1},
	{name: "other schema", in: `INSERT INTO other.users (email) VALUES ($1)`, noPG: true},
	{name: "other table", in: `INSERT INTO customers (name) VALUES ($1)`, noPG: true},
	{name: "prefix of configured name", in: `INSERT INTO orders_archive (user_id) VALUES ($1)`, noPG: true},
	{name: "alias", in: `INSERT INTO orders AS o (user_id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET total = o.total + 1`,
		want: `INSERT INTO orders AS o (user_id, id) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET total = o.total + 1`, rows: 1},
	{name: "alias default values", in: `INSERT INTO orders AS o DEFAULT VALUES`,
		want: `INSERT INTO orders AS o (id) VALUES ($1)`, rows: 1},

	// Column lists.
	{name: "quoted columns", in: `INSERT INTO orders ("user_id", "total") VALUES ($1, $2)`,
		want: `INSERT INTO orders ("user_id", "total", id) VALUES ($1, $2, $3)`, rows: 1},
	{name: "escaped quoted column", in: `INSERT INTO orders ("we""ird (x)", note) VALUES ($1, $2)`,
		want: `INSERT INTO orders ("we""ird (x)", note, id) VALUES ($1, $2, $3)`, rows: 1},
	{name: "key listed", in: `INSERT INTO orders (id, user_id) VALUES ($1, $2)`},
	{name: "key listed last", in: `INSERT INTO orders (user_id, id) VALUES ($1, $2)`},
	{name: "key listed quoted", in: `INSERT INTO orders ("id", user_id) VALUES ($1, $2)`},
	{name: "key listed upper case", in: `INSERT INTO orders (ID, user_id) VALUES ($1, $2)`},
	{name: "key listed select", in: `INSERT INTO orders (id, user_id) SELECT 1, 2`},
	{name: "mixed-case key listed", in: `INSERT INTO "Items" ("ItemID", name) VALUES ($1, $2)`},

	// The key listed as DEFAULT, NULL or 0 (what ORMs send for a new row):
	// filled. A bind parameter decides at execution (TestZeroFillArgs).
	{name: "key DEFAULT", in: `INSERT INTO orders (id, user_id) VALUES (DEFAULT, $1)`,
		want: `INSERT INTO orders (id, user_id) VALUES ($2, $1)`, rows: 1},
	{name: "key DEFAULT returning", in: `INSERT INTO "Items" ("ItemID", name) VALUES (DEFAULT, $1), (DEFAULT, $2) RETURNING "ItemID"`,
		want: `INSERT INTO "Items" ("ItemID", name) VALUES ($3, $1), ($4, $2) RETURNING "ItemID"`, rows: 2},
	{name: "key zero null default mixed", in: `INSERT INTO orders (user_id, id) VALUES (1, 0), (2, NULL), (3, 5), (4, default), (5, 0.0)`,
		want: `INSERT INTO orders (user_id, id) VALUES (1, $1), (2, $2), (3, 5), (4, $3), (5, $4)`, rows: 4},
	{name: "key NULL cast", in: `INSERT INTO orders (id, user_id) VALUES (NULL::bigint, $1)`,
		want: `INSERT INTO orders (id, user_id) VALUES ($2::bigint, $1)`, rows: 1},
	{name: "key param and DEFAULT", in: `INSERT INTO orders (id, user_id) VALUES ($1, $2), (DEFAULT, $3)`,
		want: `INSERT INTO orders (id, user_id) VALUES ($1, $2), ($4, $3)`, rows: 2},
	{name: "key param used elsewhere", in: `INSERT INTO orders (id, user_id) VALUES ($1, $1)`,
		want: `INSERT INTO orders (id, user_id) VALUES ($2, $1)`, rows: 1},
	{name: "key param twice as key", in: `INSERT INTO orders (id, user_id) VALUES ($1, 1), ($1, 2)`,
		want: `INSERT INTO orders (id, user_id) VALUES ($1, 1), ($2, 2)`, rows: 2},
	{name: "key param cast", in: `INSERT INTO orders (id, user_id) VALUES ($1::int8, $2)`},
	{name: "key DEFAULT on conflict", in: `INSERT INTO orders (id, user_id) VALUES (DEFAULT, $1) ON CONFLICT (id) DO NOTHING`,
		want: `INSERT INTO orders (id, user_id) VALUES ($2, $1) ON CONFLICT (id) DO NOTHING`, rows: 1},
	{name: "key DEFAULT with array", in: `INSERT INTO orders (id, note) VALUES (DEFAULT, (ARRAY['a','b'])[1])`,
		want: `INSERT INTO orders (id, note) VALUES ($1, (ARRAY['a','b'])[1])`, rows: 1},
	{name: "key expression kept", in: `INSERT INTO orders (id, user_id) VALUES (0 + 1, 1), (-0, 2), ('0', 3)`},
	{name: "key literal kept", in: `INSERT INTO orders (id, user_id) VALUES (42, 1)`},
	{name: "key DEFAULT select kept", in: `INSERT INTO orders (id, user_id) SELECT NULL, 1`},
	{name: "no column list key DEFAULT", in: `INSERT INTO orders VALUES (DEFAULT, $1)`,
		want: `INSERT INTO orders VALUES ($2, $1)`, rows: 1},
	{name: "no column list key by position zero", in: `INSERT INTO ledger VALUES ('a', 1, 0, 'm'), ('b', 2, 7, 'n')`,
		want: `INSERT INTO ledger VALUES ('a', 1, $1, 'm'), ('b', 2, 7, 'n')`, rows: 1},
	{name: "key DEFAULT in WITH kept", in: `WITH x AS (SELECT 1) INSERT INTO orders (id, user_id) VALUES (DEFAULT, 1)`,
		want: `WITH x AS (SELECT 1) INSERT INTO orders (id, user_id) VALUES ($1, 1)`, rows: 1},

	// DDL that holds an INSERT runs none now: unchanged.
	{name: "create rule", in: `CREATE RULE r AS ON INSERT TO customers DO ALSO INSERT INTO orders (user_id) VALUES (1)`},
	{name: "create or replace rule", in: `create or replace rule r as on update to customers do instead (insert into orders (note) values (new.note); insert into events (kind) values ('u'))`},
	{name: "create function atomic", in: `CREATE FUNCTION f() RETURNS void LANGUAGE sql BEGIN ATOMIC INSERT INTO orders (user_id) VALUES (1); END`},
	{name: "mixed-case key unquoted is another column", in: `INSERT INTO "Items" (ItemID, name) VALUES ($1, $2)`,
		want: `INSERT INTO "Items" (ItemID, name, "ItemID") VALUES ($1, $2, $3)`, rows: 1, noPG: true},
	{name: "empty column list", in: `INSERT INTO orders () VALUES ()`, err: "empty column list" + noDefault, noPG: true},
	{name: "row too narrow", in: `INSERT INTO orders (user_id, total) VALUES ($1)`,
		err: "insert into orders: malformed statement: VALUES row 1 has 1 value for 2 listed columns; give each row one value per listed column (at byte 43, near \"($1)\")", noPG: true},
	{name: "rows of different widths", in: `INSERT INTO orders (user_id, total) VALUES ($1, $2), ($3)`,
		err: "malformed statement: VALUES row 2 has 1 value for 2 listed columns; give each row one value per listed column", noPG: true},
	{name: "row too wide, key with a default", in: `INSERT INTO events (kind) VALUES ($1, $2)`, noPG: true}, // the database reports it
	{name: "column indirection", in: `INSERT INTO orders (note[1]) VALUES ($1)`, err: "column list not understood", noPG: true},

	// ON CONFLICT, RETURNING.
	{name: "on conflict do nothing", in: `INSERT INTO orders (user_id) VALUES ($1) ON CONFLICT DO NOTHING`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, rows: 1},
	{name: "on conflict do update with param", in: `INSERT INTO orders (user_id, total) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET total = orders.total + $3`,
		want: `INSERT INTO orders (user_id, total, id) VALUES ($1, $2, $4) ON CONFLICT (id) DO UPDATE SET total = orders.total + $3`, rows: 1},
	{name: "on conflict on constraint", in: `INSERT INTO orders (user_id) VALUES ($1) ON CONFLICT ON CONSTRAINT orders_pkey DO UPDATE SET user_id = EXCLUDED.user_id WHERE orders.total > 0`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $2) ON CONFLICT ON CONSTRAINT orders_pkey DO UPDATE SET user_id = EXCLUDED.user_id WHERE orders.total > 0`, rows: 1},
	{name: "returning id", in: `INSERT INTO orders (user_id) VALUES ($1) RETURNING id`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $2) RETURNING id`, rows: 1},
	{name: "returning star", in: `INSERT INTO orders (user_id) VALUES ($1), ($2) RETURNING *`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $3), ($2, $4) RETURNING *`, rows: 2},
	{name: "returning with param", in: `INSERT INTO orders (user_id) VALUES ($1) RETURNING id, total + $2 AS t`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $3) RETURNING id, total + $2 AS t`, rows: 1},
	{name: "upsert returning", in: `INSERT INTO orders (user_id) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING id`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING id`, rows: 1},

	// DEFAULT VALUES, OVERRIDING.
	{name: "default values", in: `INSERT INTO orders DEFAULT VALUES`,
		want: `INSERT INTO orders (id) VALUES ($1)`, rows: 1},
	{name: "default values returning", in: `insert into orders default values returning id`,
		want: `insert into orders (id) values ($1) returning id`, rows: 1},
	{name: "default values mixed-case key", in: `INSERT INTO "Items" DEFAULT VALUES;`,
		want: `INSERT INTO "Items" ("ItemID") VALUES ($1);`, rows: 1},
	{name: "overriding system value", in: `INSERT INTO orders (user_id) OVERRIDING SYSTEM VALUE VALUES ($1)`,
		want: `INSERT INTO orders (user_id, id) OVERRIDING SYSTEM VALUE VALUES ($1, $2)`, rows: 1},
	{name: "overriding user value", in: `INSERT INTO orders (user_id) OVERRIDING USER VALUE VALUES ($1)`,
		err: "OVERRIDING USER VALUE would discard the generated key" + noDefault},

	// WITH.
	{name: "with values", in: `WITH u AS (SELECT $1::bigint AS x) INSERT INTO orders (user_id) VALUES ((SELECT x FROM u))`,
		want: `WITH u AS (SELECT $1::bigint AS x) INSERT INTO orders (user_id, id) VALUES ((SELECT x FROM u), $2)`, rows: 1},
	{name: "with recursive", in: `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) INSERT INTO orders (user_id) VALUES ((SELECT max(n) FROM r))`,
		want: `WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) INSERT INTO orders (user_id, id) VALUES ((SELECT max(n) FROM r), $1)`, rows: 1},
	{name: "with two ctes", in: `WITH a AS (SELECT 1), b AS MATERIALIZED (SELECT 2) INSERT INTO orders (user_id) VALUES ($1) RETURNING id`,
		want: `WITH a AS (SELECT 1), b AS MATERIALIZED (SELECT 2) INSERT INTO orders (user_id, id) VALUES ($1, $2) RETURNING id`, rows: 1},
	{name: "with select", in: `WITH u AS (SELECT 1 AS x) INSERT INTO orders (user_id) SELECT x FROM u`,
		err: "INSERT ... SELECT (or another query form) cannot be filled" + noDefault},
	{name: "with data-modifying cte", in: `WITH x AS (INSERT INTO orders (user_id) VALUES (1) RETURNING id) SELECT * FROM x`,
		err: "an INSERT that is not the statement itself (in WITH, EXPLAIN, PREPARE, ...) cannot be filled" + noDefault},
	{name: "with data-modifying cte, default", in: `WITH x AS (INSERT INTO events (kind) VALUES ('a') RETURNING id) SELECT * FROM x`},
	{name: "cte into default table, top-level filled", in: `WITH x AS (INSERT INTO events (kind) VALUES ('a') RETURNING id) INSERT INTO orders (user_id) SELECT id FROM x`,
		err: "INSERT ... SELECT"},
	{name: "cte into default table, values filled", in: `WITH x AS (INSERT INTO events (kind) VALUES ('a') RETURNING id) INSERT INTO orders (user_id) VALUES ($1)`,
		want: `WITH x AS (INSERT INTO events (kind) VALUES ('a') RETURNING id) INSERT INTO orders (user_id, id) VALUES ($1, $2)`, rows: 1},
	{name: "with insert into other table", in: `WITH x AS (SELECT 1) INSERT INTO customers (name) VALUES ('a')`, noPG: true},

	// Comments.
	{name: "comments everywhere", in: "/* c */ INSERT /* x */ INTO -- y\n orders /* z */ (user_id /* a, b */) VALUES ($1 /* ) */) -- end",
		want: "/* c */ INSERT /* x */ INTO -- y\n orders /* z */ (user_id, id /* a, b */) VALUES ($1, $2 /* ) */) -- end", rows: 1},
	{name: "nested comment", in: "INSERT INTO orders (user_id) /* outer /* inner ) */ still ( , */ VALUES ($1)",
		want: "INSERT INTO orders (user_id, id) /* outer /* inner ) */ still ( , */ VALUES ($1, $2)", rows: 1},
	{name: "line comment hides paren", in: "INSERT INTO orders (user_id -- )\n) VALUES ($1 -- ), x\n)",
		want: "INSERT INTO orders (user_id, id -- )\n) VALUES ($1, $2 -- ), x\n)", rows: 1},
	{name: "comment with insert text", in: "-- INSERT INTO orders (x) VALUES (1)\nSELECT 1"},
	{name: "comment before column", in: "INSERT INTO orders (/* first */ user_id) VALUES ($1)",
		want: "INSERT INTO orders (/* first */ user_id, id) VALUES ($1, $2)", rows: 1},

	// Literals.
	{name: "string with parens commas semicolons", in: `INSERT INTO orders (note) VALUES ('a (b, c); $1 ?')`,
		want: `INSERT INTO orders (note, id) VALUES ('a (b, c); $1 ?', $1)`, rows: 1},
	{name: "doubled quote", in: `INSERT INTO orders (note, user_id) VALUES ('it''s ( $9', $1)`,
		want: `INSERT INTO orders (note, user_id, id) VALUES ('it''s ( $9', $1, $2)`, rows: 1},
	{name: "E string", in: `INSERT INTO orders (note, user_id) VALUES (E'it\'s ) \\', $1)`,
		want: `INSERT INTO orders (note, user_id, id) VALUES (E'it\'s ) \\', $1, $2)`, rows: 1},
	{name: "e string lower case", in: `INSERT INTO orders (note) VALUES (e'\'); $2')`,
		want: `INSERT INTO orders (note, id) VALUES (e'\'); $2', $1)`, rows: 1},
	{name: "standard string with backslash", in: `INSERT INTO orders (note) VALUES ('C:\dir\')`,
		want: `INSERT INTO orders (note, id) VALUES ('C:\dir\', $1)`, rows: 1},
	{name: "dollar quoted", in: `INSERT INTO orders (note, user_id) VALUES ($$ ) $1 ; ' $$, $1)`,
		want: `INSERT INTO orders (note, user_id, id) VALUES ($$ ) $1 ; ' $$, $1, $2)`, rows: 1},
	{name: "tagged dollar quote", in: `INSERT INTO orders (note) VALUES ($tag$ $$ ) ( $1 $tag$)`,
		want: `INSERT INTO orders (note, id) VALUES ($tag$ $$ ) ( $1 $tag$, $1)`, rows: 1},
	{name: "nested dollar tags", in: `INSERT INTO orders (note) VALUES ($a$ $b$ ) $b$ $a$)`,
		want: `INSERT INTO orders (note, id) VALUES ($a$ $b$ ) $b$ $a$, $1)`, rows: 1},
	{name: "bit and hex strings", in: `INSERT INTO orders (note) VALUES (B'101'::text || X'1F'::text)`,
		want: `INSERT INTO orders (note, id) VALUES (B'101'::text || X'1F'::text, $1)`, rows: 1},
	{name: "unicode string", in: `INSERT INTO orders (note) VALUES (U&'d\0061t\+000061 )')`,
		want: `INSERT INTO orders (note, id) VALUES (U&'d\0061t\+000061 )', $1)`, rows: 1},
	{name: "non-ascii", in: `INSERT INTO orders (note) VALUES ('héllo, wörld (✓)')`,
		want: `INSERT INTO orders (note, id) VALUES ('héllo, wörld (✓)', $1)`, rows: 1},
	{name: "jsonb ? operator", in: `INSERT INTO orders (note) VALUES ((('{"a":1}'::jsonb ? 'a')::text))`,
		want: `INSERT INTO orders (note, id) VALUES ((('{"a":1}'::jsonb ? 'a')::text), $1)`, rows: 1},
	{name: "array constructor in values", in: `INSERT INTO orders (note, user_id) VALUES (ARRAY['a', 'b']::text, $1)`,
		want: `INSERT INTO orders (note, user_id, id) VALUES (ARRAY['a', 'b']::text, $1, $2)`, rows: 1},
	{name: "array constructor, no column list", in: `INSERT INTO ledger VALUES (ARRAY['a', 'b']::text, 1)`,
		want: `INSERT INTO ledger (kind, amount, id) VALUES (ARRAY['a', 'b']::text, 1, $1)`, rows: 1},
	{name: "nested arrays and slices", in: `INSERT INTO orders (note, total) VALUES ((ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[1:2][1]::text, (ARRAY[1, (2), 3])[2])`,
		want: `INSERT INTO orders (note, total, id) VALUES ((ARRAY[ARRAY[1, 2], ARRAY[3, 4]])[1:2][1]::text, (ARRAY[1, (2), 3])[2], $1)`, rows: 1},
	{name: "mismatched bracket", in: `INSERT INTO orders (note) VALUES (ARRAY[1, 2)]`,
		err: "unbalanced parentheses or brackets in VALUES", noPG: true},
	{name: "subquery in values", in: `INSERT INTO orders (total, user_id) VALUES ((SELECT max(total) FROM orders WHERE user_id IN (1, 2)), $1)`,
		want: `INSERT INTO orders (total, user_id, id) VALUES ((SELECT max(total) FROM orders WHERE user_id IN (1, 2)), $1, $2)`, rows: 1},
	{name: "function calls", in: `INSERT INTO orders (total, note) VALUES (coalesce($1, 0), now()::text)`,
		want: `INSERT INTO orders (total, note, id) VALUES (coalesce($1, 0), now()::text, $2)`, rows: 1},
	{name: "casts", in: `INSERT INTO orders (user_id, note) VALUES ($1::bigint, CAST($2 AS text))`,
		want: `INSERT INTO orders (user_id, note, id) VALUES ($1::bigint, CAST($2 AS text), $3)`, rows: 1},
	{name: "identifier with dollar", in: `INSERT INTO orders (note) VALUES ((SELECT a$1 FROM (SELECT 'x' AS a$1) s))`,
		want: `INSERT INTO orders (note, id) VALUES ((SELECT a$1 FROM (SELECT 'x' AS a$1) s), $1)`, rows: 1},
	{name: "string looks like insert", in: `SELECT 'INSERT INTO orders (user_id) VALUES (1)'`},

	// Trailing semicolons.
	{name: "trailing semicolon", in: `INSERT INTO orders (user_id) VALUES ($1);`,
		want: `INSERT INTO orders (user_id, id) VALUES ($1, $2);`, rows: 1},
	{name: "trailing semicolons and comment", in: "INSERT INTO orders (user_id) VALUES ($1) ; ; -- done\n",
		want: "INSERT INTO orders (user_id, id) VALUES ($1, $2) ; ; -- done\n", rows: 1},
	{name: "semicolon in string", in: `INSERT INTO orders (note) VALUES ('a; INSERT INTO orders (x) VALUES (1)')`,
		want: `INSERT INTO orders (note, id) VALUES ('a; INSERT INTO orders (x) VALUES (1)', $1)`, rows: 1},

	// No column list: values go to the first columns in table order, as
	// PostgreSQL assigns them; the key is filled only when it comes after
	// them.
	{name: "no column list key first", in: `INSERT INTO orders VALUES ($1, $2, $3, $4)`},
	{name: "no column list key first multi-row", in: `INSERT INTO orders VALUES (1, 2, '3', 'a'), (3, 4, '5', 'c') RETURNING id`},
	{name: "no column list key by position", in: `INSERT INTO orders VALUES ($1, $2, $3, $4, $5)`},
	{name: "no column list key first one value", in: `INSERT INTO orders VALUES ($1)`},
	{name: "no column list key after values", in: `INSERT INTO ledger VALUES ($1, $2)`,
		want: `INSERT INTO ledger (kind, amount, id) VALUES ($1, $2, $3)`, rows: 1},
	{name: "no column list key after values multi-row", in: `INSERT INTO ledger VALUES ('a', 1), ('b', 2) RETURNING id`,
		want: `INSERT INTO ledger (kind, amount, id) VALUES ('a', 1, $1), ('b', 2, $2) RETURNING id`, rows: 2},
	{name: "no column list key within values", in: `INSERT INTO ledger VALUES ('a', 1, 7)`},
	{name: "no column list too many", in: `INSERT INTO ledger VALUES (1, 2, 3, 4, 5)`,
		err: "insert into ledger: malformed statement: INSERT without a column list gives 5 values for the 4 columns of ledger; give at most one value per column (at", noPG: true},
	{name: "no column list mixed-case key first", in: `INSERT INTO "Items" VALUES ($1)`},
	{name: "no column list schema key first", in: `INSERT INTO shop.users VALUES ($1)`},
	{name: "no column list default table too few", in: `INSERT INTO events VALUES ()`, noPG: true},

	// Not fillable.
	{name: "insert select", in: `INSERT INTO orders (user_id) SELECT 1`,
		err: `insert into orders: INSERT ... SELECT (or another query form) cannot be filled` + noDefault + ` (at byte 29, near "SELECT 1")`},
	{name: "insert select no columns", in: `INSERT INTO orders SELECT * FROM orders`, err: "INSERT ... SELECT"},
	{name: "insert table", in: `INSERT INTO orders (user_id) TABLE orders`, err: "INSERT ... SELECT", noPG: true},
	{name: "insert select default", in: `INSERT INTO events (kind) SELECT 'x'`},
	{name: "insert parenthesised select", in: `INSERT INTO orders (SELECT * FROM orders)`,
		err: "INSERT from a parenthesised query cannot be filled" + noDefault},
	{name: "insert cols parenthesised select", in: `INSERT INTO orders (user_id) (SELECT 1)`, err: "INSERT ... SELECT"},
	{name: "values union", in: `INSERT INTO orders (user_id) VALUES (1) UNION ALL SELECT 2`,
		err: `unexpected "UNION" after VALUES` + noDefault},
	{name: "values order by", in: `INSERT INTO orders (user_id) VALUES (1), (2) ORDER BY 1`, err: `unexpected "ORDER" after VALUES`},
	{name: "multi-statement", in: `INSERT INTO orders (user_id) VALUES (1); INSERT INTO orders (user_id) VALUES (2)`,
		err: "an INSERT in a string of several statements cannot be filled" + noDefault, noPG: true},
	{name: "multi-statement after select", in: `SELECT 1; INSERT INTO orders (user_id) VALUES (1)`,
		err: "several statements", noPG: true},
	{name: "multi-statement default", in: `INSERT INTO events (kind) VALUES ('a'); INSERT INTO events (kind) VALUES ('b')`, noPG: true},
	{name: "multi-statement key listed", in: `INSERT INTO orders (id, user_id) VALUES (1, 1); INSERT INTO orders (id, user_id) VALUES (2, 2)`, noPG: true},
	{name: "explain analyze", in: `EXPLAIN ANALYZE INSERT INTO orders (user_id) VALUES (1)`, err: "not the statement itself"},
	{name: "prepare as insert", in: `PREPARE p AS INSERT INTO orders (user_id) VALUES ($1)`, err: "not the statement itself", noPG: true},
	{name: "merge insert", in: `MERGE INTO orders o USING (SELECT 1 AS u) s ON o.user_id = s.u WHEN NOT MATCHED THEN INSERT (user_id) VALUES (s.u)`,
		err: "MERGE ... INSERT cannot be filled" + noDefault},
	{name: "merge insert key listed", in: `MERGE INTO orders o USING (SELECT 1 AS u) s ON o.user_id = s.u WHEN NOT MATCHED THEN INSERT (id, user_id) VALUES (s.u, s.u)`},
	{name: "merge update only", in: `MERGE INTO orders o USING (SELECT 1 AS u) s ON o.user_id = s.u WHEN MATCHED THEN UPDATE SET total = 0`},
	{name: "unterminated string", in: `INSERT INTO orders (note) VALUES ('abc`,
		err: "unterminated string literal makes the statement ambiguous" + noDefault, noPG: true},
	{name: "unterminated comment", in: `INSERT INTO orders (note) VALUES ($1) /* x`, err: "unterminated comment", noPG: true},
	{name: "unterminated, other table", in: `INSERT INTO customers (note) VALUES ('abc`, noPG: true},

	// Not inserts.
	{name: "select", in: `SELECT * FROM orders WHERE id = $1`},
	{name: "update", in: `UPDATE orders SET total = $1 WHERE id = $2`},
	{name: "delete", in: `DELETE FROM orders WHERE id = $1`},
	{name: "create table", in: `CREATE TABLE insert_log (x int)`, noPG: true},
	{name: "grant insert", in: `GRANT INSERT ON orders TO PUBLIC`, noPG: true},
	{name: "empty", in: ``, noPG: true},
	{name: "only comment", in: `-- INSERT`, noPG: true},

	// SQLite dialect: it refuses what SQLite and MySQL read differently.
	{name: "q basic", dialect: dialect.SQLite, in: `INSERT INTO orders (user_id, total) VALUES (?, ?)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES (?, ?, ?)`, rows: 1},
	{name: "q multi-row", dialect: dialect.SQLite, in: `INSERT INTO orders (user_id, total) VALUES (?, ?), (?, ?)`,
		want: `INSERT INTO orders (user_id, total, id) VALUES (?, ?, ?), (?, ?, ?)`, rows: 2},
	{name: "q on conflict param", dialect: dialect.SQLite, in: `INSERT INTO orders (user_id) VALUES (?) ON CONFLICT (id) DO UPDATE SET total = ?`,
		want: `INSERT INTO orders (user_id, id) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET total = ?`, rows: 1},
	{name: "q returning", dialect: dialect.SQLite, in: `INSERT INTO orders (user_id) VALUES (?) RETURNING id`,
		want: `INSERT INTO orders (user_id, id) VALUES (?, ?) RETURNING id`, rows: 1},
	{name: "q backticks", dialect: dialect.SQLite, in: "INSERT INTO `orders` (`user_id`) VALUES (?)",
		want: "INSERT INTO `orders` (`user_id`, id) VALUES (?, ?)", rows: 1},
	{name: "q brackets", dialect: dialect.SQLite, in: "INSERT INTO [orders] ([user_id]) VALUES (?)",
		want: "INSERT INTO [orders] ([user_id], id) VALUES (?, ?)", rows: 1},
	{name: "q insert or replace", dialect: dialect.SQLite, in: `INSERT OR REPLACE INTO orders (user_id) VALUES (?)`,
		want: `INSERT OR REPLACE INTO orders (user_id, id) VALUES (?, ?)`, rows: 1},
	{name: "q replace into", dialect: dialect.SQLite, in: `REPLACE INTO orders (user_id) VALUES (?)`,
		want: `REPLACE INTO orders (user_id, id) VALUES (?, ?)`, rows: 1},
	{name: "q insert ignore", dialect: dialect.SQLite, notSQLite: true, in: `INSERT IGNORE INTO orders (user_id) VALUES (?)`,
		want: `INSERT IGNORE INTO orders (user_id, id) VALUES (?, ?)`, rows: 1},
	{name: "q insert without into", dialect: dialect.SQLite, notSQLite: true, in: `INSERT orders (user_id) VALUES (?)`,
		want: `INSERT orders (user_id, id) VALUES (?, ?)`, rows: 1},
	{name: "q on duplicate key", dialect: dialect.SQLite, notSQLite: true, in: `INSERT INTO orders (user_id) VALUES (?) ON DUPLICATE KEY UPDATE total = total + ?`,
		want: `INSERT INTO orders (user_id, id) VALUES (?, ?) ON DUPLICATE KEY UPDATE total = total + ?`, rows: 1},
	{name: "q key listed any case", dialect: dialect.SQLite, in: `INSERT INTO ORDERS (ID, user_id) VALUES (?, ?)`},
	{name: "q key listed quoted any case", dialect: dialect.SQLite, in: `INSERT INTO orders ("Id", user_id) VALUES (?, ?)`},
	{name: "q key zero", dialect: dialect.SQLite, in: `INSERT INTO orders (id, user_id) VALUES (0, ?), (?, ?), (NULL, 3)`,
		want: `INSERT INTO orders (id, user_id) VALUES (?, ?), (?, ?), (?, 3)`, rows: 3},
	{name: "q create trigger", dialect: dialect.SQLite, in: `CREATE TRIGGER t AFTER INSERT ON customers BEGIN INSERT INTO orders (note) VALUES (new.note); END`},
	{name: "q table any case", dialect: dialect.SQLite, in: `INSERT INTO "ORDERS" (user_id) VALUES (?)`,
		want: `INSERT INTO "ORDERS" (user_id, id) VALUES (?, ?)`, rows: 1},
	{name: "q mixed-case key bare", dialect: dialect.SQLite, in: `INSERT INTO items (name) VALUES (?)`,
		want: `INSERT INTO items (name, ItemID) VALUES (?, ?)`, rows: 1},
	{name: "q dollar is plain", dialect: dialect.SQLite, in: `INSERT INTO orders (note) VALUES ('$1 ? )')`,
		want: `INSERT INTO orders (note, id) VALUES ('$1 ? )', ?)`, rows: 1},
	{name: "q default values", dialect: dialect.SQLite, in: `INSERT INTO orders DEFAULT VALUES`,
		want: "INSERT INTO orders (id) VALUES (?)", rows: 1},
	{name: "q comment", dialect: dialect.SQLite, in: "INSERT INTO orders (user_id) -- note\nVALUES (? /* x */)",
		want: "INSERT INTO orders (user_id, id) -- note\nVALUES (?, ? /* x */)", rows: 1},
	{name: "q no column list key first", dialect: dialect.SQLite, in: `INSERT INTO orders VALUES (?, ?, ?, ?)`},
	{name: "q no column list key after values", dialect: dialect.SQLite, in: `INSERT INTO ledger VALUES (?, ?)`,
		want: "INSERT INTO ledger (kind, amount, id) VALUES (?, ?, ?)", rows: 1},
	{name: "q backslash", dialect: dialect.SQLite, in: `INSERT INTO orders (note) VALUES ('a\')`,
		err: "backslash in a string literal (an escape in MySQL, not in SQLite) makes the statement ambiguous" + noDefault},
	{name: "q hash comment", dialect: dialect.SQLite, notSQLite: true, in: "INSERT INTO orders (user_id) VALUES (?) # x", err: "'#'"},
	{name: "q dash-dash operator", dialect: dialect.SQLite, notSQLite: true, in: "INSERT INTO orders (user_id) VALUES (1--1)", err: "'--' not followed by a space"},
	{name: "q numbered param", dialect: dialect.SQLite, in: "INSERT INTO orders (user_id) VALUES (?1)", err: "numbered parameter"},
	{name: "q named param", dialect: dialect.SQLite, in: "INSERT INTO orders (user_id) VALUES (:uid)", err: "named parameter"},
	{name: "q nested comment", dialect: dialect.SQLite, in: "INSERT INTO orders (user_id) VALUES (?) /* a /* b */", err: "nested comment"},
	{name: "q executable comment", dialect: dialect.SQLite, notSQLite: true, in: "INSERT /*! IGNORE */ INTO orders (user_id) VALUES (?)", err: "executable comment"},
	{name: "q ambiguous other table", dialect: dialect.SQLite, in: `INSERT INTO customers (note) VALUES ('a\')`},
	{name: "q ambiguous default table", dialect: dialect.SQLite, in: `INSERT INTO events (note) VALUES ('a\')`},
	{name: "q select", dialect: dialect.SQLite, in: `SELECT * FROM orders WHERE id = ?`},
	{name: "q insert select", dialect: dialect.SQLite, in: `INSERT INTO orders (user_id) SELECT ?`, err: "INSERT ... SELECT"},
	{name: "q replace function", dialect: dialect.SQLite, in: `SELECT replace(note, 'a', 'b') FROM orders`},
}
