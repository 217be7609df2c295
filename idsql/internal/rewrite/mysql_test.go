package rewrite

import (
	"context"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

const noDefaultMySQL = ", and key column id has no default"

// mysqlCases are the table tests of the MySQL dialect; args shows where
// Plan.Args puts the IDs among the caller's arguments. Their names begin
// with MySQL so that go test -run MySQL selects them.
var mysqlCases = inMySQL([]rwCase{
	// The key listed as DEFAULT, NULL or 0: filled; a ? decides at execution.
	{name: "MySQL key DEFAULT", in: `INSERT INTO orders (id, user_id) VALUES (DEFAULT, ?), (?, ?), (0, ?)`,
		want: "INSERT INTO orders (id, user_id) VALUES (?, ?), (?, ?), (?, ?)", rows: 3, args: "id1 p1 p2 p3 id2 p4"},
	{name: "MySQL SET key DEFAULT", in: `INSERT INTO orders SET id = DEFAULT, user_id = ?`,
		want: "INSERT INTO orders SET id = ?, user_id = ?", rows: 1, args: "id1 p1"},
	{name: "MySQL SET key NULL last", in: `INSERT INTO orders SET user_id = ?, id = NULL ON DUPLICATE KEY UPDATE note = ?`,
		want: "INSERT INTO orders SET user_id = ?, id = ? ON DUPLICATE KEY UPDATE note = ?", rows: 1, args: "p1 id1 p2"},
	{name: "MySQL create trigger", in: "CREATE TRIGGER t AFTER INSERT ON customers FOR EACH ROW INSERT INTO orders (note) VALUES (NEW.note)", noServer: true},
	// VALUES.
	{name: "MySQL basic", in: `INSERT INTO orders (user_id, total) VALUES (?, ?)`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL multi-row", in: `INSERT INTO orders (user_id, total) VALUES (?, ?), (?, 2.5), (3, ?)`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (?, ?, ?), (?, 2.5, ?), (3, ?, ?)", rows: 3, args: "p1 p2 id1 p3 id2 p4 id3"},
	{name: "MySQL VALUE", in: `INSERT INTO orders (user_id) VALUE (?), (?)`,
		want: "INSERT INTO orders (user_id, `id`) VALUE (?, ?), (?, ?)", rows: 2, args: "p1 id1 p2 id2"},
	{name: "MySQL without INTO", in: `INSERT orders (user_id) VALUES (?)`,
		want: "INSERT orders (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL LOW_PRIORITY IGNORE", in: `INSERT LOW_PRIORITY IGNORE INTO orders (user_id) VALUES (?)`,
		want: "INSERT LOW_PRIORITY IGNORE INTO orders (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL HIGH_PRIORITY without INTO", in: `insert high_priority orders (user_id) values (?)`,
		want: "insert high_priority orders (user_id, `id`) values (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL DELAYED", in: `INSERT DELAYED INTO ledger (kind, amount) VALUES (?, ?)`, // MariaDB: MyISAM only
		want: "INSERT DELAYED INTO ledger (kind, amount, `id`) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL on duplicate key update", in: `INSERT INTO orders (user_id, total) VALUES (?, ?) ON DUPLICATE KEY UPDATE total = VALUES(total) + ?`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE total = VALUES(total) + ?", rows: 1, args: "p1 p2 id1 p3"},
	{name: "MySQL on duplicate key update multi-row", in: `INSERT IGNORE INTO orders (user_id) VALUES (?), (?) ON DUPLICATE KEY UPDATE user_id = ?`,
		want: "INSERT IGNORE INTO orders (user_id, `id`) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE user_id = ?", rows: 2, args: "p1 id1 p2 id2 p3"},
	{name: "MySQL RETURNING", in: `INSERT INTO orders (user_id) VALUES (?), (?) RETURNING id, ?`,
		want: "INSERT INTO orders (user_id, `id`) VALUES (?, ?), (?, ?) RETURNING id, ?", rows: 2, args: "p1 id1 p2 id2 p3", notMySQL: true},

	// PARTITION.
	{name: "MySQL PARTITION", in: `INSERT INTO orders PARTITION (p0, p1) (user_id) VALUES (?)`,
		want: "INSERT INTO orders PARTITION (p0, p1) (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL PARTITION empty row", in: `INSERT INTO orders PARTITION (p1) VALUES ()`,
		want: "INSERT INTO orders PARTITION (p1) (`id`) VALUES (?)", rows: 1, args: "id1"},
	{name: "MySQL PARTITION SET", in: `INSERT INTO orders PARTITION (p0) SET user_id = ?`,
		want: "INSERT INTO orders PARTITION (p0) SET user_id = ?, `id` = ?", rows: 1, args: "p1 id1"},
	{name: "MySQL PARTITION not understood", in: `INSERT INTO orders PARTITION p0 (user_id) VALUES (?)`,
		err: "PARTITION list not understood" + noDefaultMySQL, noServer: true},

	// Empty rows: every column takes its default.
	{name: "MySQL empty column list", in: `INSERT INTO orders () VALUES ()`,
		want: "INSERT INTO orders (`id`) VALUES (?)", rows: 1, args: "id1"},
	{name: "MySQL empty rows", in: `INSERT INTO orders VALUES (), ()`,
		want: "INSERT INTO orders (`id`) VALUES (?), (?)", rows: 2, args: "id1 id2"},
	{name: "MySQL empty VALUE tight", in: `INSERT INTO orders() VALUE()`,
		want: "INSERT INTO orders(`id`) VALUE(?)", rows: 1, args: "id1"},
	{name: "MySQL empty and full rows", in: `INSERT INTO orders VALUES (), (?)`,
		err: "malformed statement: VALUES row 2 has 1 value where row 1 has 0; give each row as many values as the first (at byte 30, near \"(?)\")", noServer: true},
	{name: "MySQL empty row for a column", in: `INSERT INTO orders (user_id) VALUES ()`,
		err: "malformed statement: VALUES row 1 has 0 values for 1 listed column; give each row one value per listed column (at", noServer: true},

	// VALUES ROW(...).
	{name: "MySQL VALUES ROW", in: `INSERT INTO orders (user_id, total) VALUES ROW(?, ?), ROW(?, 2)`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES ROW(?, ?, ?), ROW(?, 2, ?)", rows: 2, args: "p1 p2 id1 p3 id2", notMariaDB: true},
	{name: "MySQL VALUES ROW then plain row", in: `INSERT INTO orders (user_id) VALUES ROW(?), (?)`,
		err: "VALUES mixes ROW(...) and (...) rows", noServer: true},
	{name: "MySQL VALUES plain row then ROW", in: `INSERT INTO orders (user_id) VALUES (?), ROW(?)`,
		err: "VALUES mixes ROW(...) and (...) rows", noServer: true},

	// INSERT ... SET.
	{name: "MySQL SET", in: `INSERT INTO orders SET user_id = ?, total = ?`,
		want: "INSERT INTO orders SET user_id = ?, total = ?, `id` = ?", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL SET expressions", in: `INSERT INTO orders SET note = CONCAT(?, ', (', ?), total = IF(? > 0, 1, 2), user_id = -?`,
		want: "INSERT INTO orders SET note = CONCAT(?, ', (', ?), total = IF(? > 0, 1, 2), user_id = -?, `id` = ?", rows: 1, args: "p1 p2 p3 p4 id1"},
	{name: "MySQL SET qualified column", in: `INSERT INTO orders SET orders.user_id = ?`,
		want: "INSERT INTO orders SET orders.user_id = ?, `id` = ?", rows: 1, args: "p1 id1"},
	{name: "MySQL SET on duplicate key update", in: `INSERT INTO orders SET user_id = ?, total = ? ON DUPLICATE KEY UPDATE total = total + ?`,
		want: "INSERT INTO orders SET user_id = ?, total = ?, `id` = ? ON DUPLICATE KEY UPDATE total = total + ?", rows: 1, args: "p1 p2 id1 p3"},
	{name: "MySQL SET row alias", in: `INSERT INTO orders SET user_id = ? AS new ON DUPLICATE KEY UPDATE user_id = new.user_id + ?`,
		want: "INSERT INTO orders SET user_id = ?, `id` = ? AS new ON DUPLICATE KEY UPDATE user_id = new.user_id + ?", rows: 1, args: "p1 id1 p2", notMariaDB: true},
	{name: "MySQL SET row alias columns", in: `INSERT INTO orders SET user_id = ?, total = ? AS new(u, t) ON DUPLICATE KEY UPDATE total = t`,
		want: "INSERT INTO orders SET user_id = ?, total = ?, `id` = ? AS new(u, t, `id`) ON DUPLICATE KEY UPDATE total = t", rows: 1, args: "p1 p2 id1", notMariaDB: true},
	{name: "MySQL SET RETURNING", in: `INSERT INTO orders SET user_id = ? RETURNING id`,
		want: "INSERT INTO orders SET user_id = ?, `id` = ? RETURNING id", rows: 1, args: "p1 id1", notMySQL: true},
	{name: "MySQL SET key listed", in: `INSERT INTO orders SET id = ?, user_id = ?`},
	{name: "MySQL SET key listed last, qualified and quoted", in: "INSERT INTO orders SET user_id = ?, orders.`ID` = ?"},
	{name: "MySQL SET after a column list", in: `INSERT INTO orders (user_id) SET user_id = ?`,
		err: "SET after a column list", noServer: true},
	{name: "MySQL SET assignment not understood", in: `INSERT INTO orders SET user_id := ?`,
		err: "SET assignment not understood", noServer: true},
	{name: "MySQL SET empty value", in: `INSERT INTO orders SET user_id = , total = 1`,
		err: "SET value not understood", noServer: true},
	{name: "MySQL SET unbalanced", in: `INSERT INTO orders SET user_id = (1))`,
		err: "unbalanced parentheses in SET", noServer: true},

	// REPLACE.
	{name: "MySQL REPLACE", in: `REPLACE INTO orders (user_id) VALUES (?), (?)`,
		want: "REPLACE INTO orders (user_id, `id`) VALUES (?, ?), (?, ?)", rows: 2, args: "p1 id1 p2 id2"},
	{name: "MySQL REPLACE SET without INTO", in: `REPLACE orders SET user_id = ?`,
		want: "REPLACE orders SET user_id = ?, `id` = ?", rows: 1, args: "p1 id1"},
	{name: "MySQL REPLACE LOW_PRIORITY empty row", in: `REPLACE LOW_PRIORITY INTO orders VALUES ()`,
		want: "REPLACE LOW_PRIORITY INTO orders (`id`) VALUES (?)", rows: 1, args: "id1"},
	{name: "MySQL REPLACE key listed", in: `REPLACE INTO orders (id, user_id) VALUES (?, ?)`},
	{name: "MySQL REPLACE function", in: `SELECT REPLACE(note, 'a', ?) FROM orders`},

	// Row aliases (MySQL 8.0.19).
	{name: "MySQL row alias", in: `INSERT INTO orders (user_id, total) VALUES (?, ?) AS new ON DUPLICATE KEY UPDATE total = new.total + ?`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (?, ?, ?) AS new ON DUPLICATE KEY UPDATE total = new.total + ?", rows: 1, args: "p1 p2 id1 p3", notMariaDB: true},
	{name: "MySQL row alias columns", in: `INSERT INTO orders (user_id, total) VALUES (?, ?), (?, ?) AS new(u, t) ON DUPLICATE KEY UPDATE total = t + ?`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (?, ?, ?), (?, ?, ?) AS new(u, t, `id`) ON DUPLICATE KEY UPDATE total = t + ?", rows: 2, args: "p1 p2 id1 p3 p4 id2 p5", notMariaDB: true},
	{name: "MySQL row alias VALUES ROW", in: `INSERT INTO orders (user_id) VALUES ROW(?) AS n(u) ON DUPLICATE KEY UPDATE user_id = n.u`,
		want: "INSERT INTO orders (user_id, `id`) VALUES ROW(?, ?) AS n(u, `id`) ON DUPLICATE KEY UPDATE user_id = n.u", rows: 1, args: "p1 id1", notMariaDB: true},
	{name: "MySQL row alias quoted", in: "INSERT INTO orders (user_id) VALUES (?) AS `new row` (`u`) ON DUPLICATE KEY UPDATE user_id = `new row`.`u`",
		want: "INSERT INTO orders (user_id, `id`) VALUES (?, ?) AS `new row` (`u`, `id`) ON DUPLICATE KEY UPDATE user_id = `new row`.`u`", rows: 1, args: "p1 id1", notMariaDB: true},
	{name: "MySQL row alias without column list", in: `INSERT INTO ledger VALUES (?, ?) AS new(k, a) ON DUPLICATE KEY UPDATE amount = a`,
		want: "INSERT INTO ledger (`kind`, `amount`, `id`) VALUES (?, ?, ?) AS new(k, a, `id`) ON DUPLICATE KEY UPDATE amount = a", rows: 1, args: "p1 p2 id1", notMariaDB: true, origInvalid: true},
	{name: "MySQL row alias too few columns", in: `INSERT INTO orders (user_id, total) VALUES (?, ?) AS new(u) ON DUPLICATE KEY UPDATE total = 1`,
		err: "row alias names 1 columns for 2 values", noServer: true},
	{name: "MySQL row alias names the key", in: `INSERT INTO orders (user_id, total) VALUES (?, ?) AS new(ID, t) ON DUPLICATE KEY UPDATE total = t`,
		err: "row alias column list already names id, which the generated key needs" + noDefaultMySQL, notMariaDB: true},
	{name: "MySQL row alias not understood", in: `INSERT INTO orders (user_id) VALUES (?) AS 'new'`,
		err: "row alias not understood", noServer: true},
	{name: "MySQL row alias column list not understood", in: `INSERT INTO orders (user_id) VALUES (?) AS new(u,)`,
		err: "row alias column list not understood", noServer: true},
	{name: "MySQL table alias", in: `INSERT INTO orders AS o (user_id) VALUES (?)`,
		err: "a table alias is not MySQL INSERT syntax", noServer: true},

	// Not filled.
	{name: "MySQL insert select", in: `INSERT INTO orders (user_id) SELECT ?`,
		err: "INSERT ... SELECT (or another query form) cannot be filled" + noDefaultMySQL},
	{name: "MySQL insert select on duplicate key", in: `INSERT INTO orders (user_id, total) SELECT user_id, 1 FROM customers ON DUPLICATE KEY UPDATE total = 2`,
		err: "INSERT ... SELECT"},
	{name: "MySQL insert table", in: `INSERT INTO orders (note, user_id) TABLE customers`, err: "INSERT ... SELECT", notMariaDB: true},
	{name: "MySQL insert with select", in: `INSERT INTO orders (user_id) WITH c AS (SELECT 1 AS u) SELECT u FROM c`, err: "INSERT ... SELECT"},
	{name: "MySQL insert parenthesised select", in: `INSERT INTO orders (user_id) (SELECT 1)`, err: "INSERT ... SELECT"},
	{name: "MySQL insert select into default key", in: `INSERT INTO events (kind) SELECT 'x'`},
	{name: "MySQL default values", in: `INSERT INTO orders DEFAULT VALUES`,
		err: "DEFAULT VALUES is not MySQL syntax (VALUES () inserts a row of defaults)", noServer: true},
	{name: "MySQL key listed", in: `INSERT INTO orders (ID, user_id) VALUES (?, ?)`},
	{name: "MySQL key listed quoted", in: "INSERT INTO orders (`Id`, user_id) VALUES (?, ?)"},
	{name: "MySQL no column list key by position", in: `INSERT INTO orders VALUES (?, ?, ?, ?, ?)`},
	{name: "MySQL no column list", in: `INSERT INTO ledger VALUES (?, ?)`,
		want: "INSERT INTO ledger (`kind`, `amount`, `id`) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1", origInvalid: true},
	{name: "MySQL no column list too many", in: `INSERT INTO ledger VALUES (1, 2, 3, 4, 5)`,
		err: "malformed statement: INSERT without a column list gives 5 values for the 4 columns of ledger; give at most one value per column (at", noServer: true},
	{name: "MySQL multi-statement", in: `INSERT INTO orders (user_id) VALUES (1); INSERT INTO orders (user_id) VALUES (2)`,
		err: "an INSERT in a string of several statements cannot be filled", noServer: true},
	{name: "MySQL trailing semicolon", in: `INSERT INTO orders (user_id) VALUES (?);`,
		want: "INSERT INTO orders (user_id, `id`) VALUES (?, ?);", rows: 1, args: "p1 id1"},
	{name: "MySQL select", in: `SELECT * FROM orders WHERE id = ?`},

	// Names.
	{name: "MySQL backticks", in: "INSERT INTO `orders` (`user_id`) VALUES (?)",
		want: "INSERT INTO `orders` (`user_id`, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL quoted column", in: "INSERT INTO orders (`we\"ird (x)`, note) VALUES (?, ?)",
		want: "INSERT INTO orders (`we\"ird (x)`, note, `id`) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL doubled backtick", in: "INSERT INTO `orders``x` (note) VALUES (?)", noServer: true},
	{name: "MySQL table any case", in: `INSERT INTO ORDERS (user_id) VALUES (?)`,
		want: "INSERT INTO ORDERS (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1", noServer: true},
	{name: "MySQL qualified", in: "INSERT INTO `shop`.`users` (email) VALUES (?)",
		want: "INSERT INTO `shop`.`users` (email, `user_id`) VALUES (?, ?)", rows: 1, args: "p1 id1", noServer: true},
	{name: "MySQL qualified any case", in: `INSERT INTO SHOP.Users (email) VALUES (?)`,
		want: "INSERT INTO SHOP.Users (email, `user_id`) VALUES (?, ?)", rows: 1, args: "p1 id1", noServer: true},
	{name: "MySQL other database", in: `INSERT INTO other.users (email) VALUES (?)`, noServer: true},
	{name: "MySQL mixed-case key", in: `INSERT INTO Items (name) VALUES (?)`,
		want: "INSERT INTO Items (name, `ItemID`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL name beginning with a digit", in: `INSERT INTO 2fa_codes (code, 2nd) VALUES (?, ?)`,
		want: "INSERT INTO 2fa_codes (code, 2nd, `id`) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL qualified name beginning with a digit", in: `INSERT INTO shop.2fa_codes (code) VALUES (?)`,
		want: "INSERT INTO shop.2fa_codes (code, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1", noServer: true},

	// Literals.
	{name: "MySQL numbers", in: `INSERT INTO orders (user_id, total, note) VALUES (0x1F, 1.5e-3, .5e1), (0b101, 1e+2, 12)`,
		want: "INSERT INTO orders (user_id, total, note, `id`) VALUES (0x1F, 1.5e-3, .5e1, ?), (0b101, 1e+2, 12, ?)", rows: 2, args: "id1 id2"},
	{name: "MySQL backslash escapes", in: `INSERT INTO orders (note, user_id) VALUES ('it\'s ( ?, \\', ?)`,
		want: "INSERT INTO orders (note, user_id, `id`) VALUES ('it\\'s ( ?, \\\\', ?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL double-quoted string", in: `INSERT INTO orders (note, user_id) VALUES ("say \"hi\" ), ?", ?)`,
		want: "INSERT INTO orders (note, user_id, `id`) VALUES (\"say \\\"hi\\\" ), ?\", ?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL doubled quotes", in: "INSERT INTO orders (note, `we\"ird (x)`) VALUES ('it''s ?', \"a\"\"b ?\")",
		want: "INSERT INTO orders (note, `we\"ird (x)`, `id`) VALUES ('it''s ?', \"a\"\"b ?\", ?)", rows: 1, args: "id1"},
	{name: "MySQL backslash needs NO_BACKSLASH_ESCAPES", in: `INSERT INTO orders (note, user_id) VALUES ('C:\dir\', ?)`,
		err: "unterminated string literal makes the statement ambiguous" + noDefaultMySQL, noServer: true},
	{name: "MySQL NO_BACKSLASH_ESCAPES", noBackslash: true, in: `INSERT INTO orders (note, user_id) VALUES ('C:\dir\', "D:\", ?)`,
		err: "malformed statement: VALUES row 1 has 3 values for 2 listed columns; give each row one value per listed column", noServer: true},
	{name: "MySQL NO_BACKSLASH_ESCAPES plain backslashes", noBackslash: true, in: "INSERT INTO orders (note, `we\"ird (x)`, user_id) VALUES ('C:\\dir\\', \"D:\\\", ?)",
		want: "INSERT INTO orders (note, `we\"ird (x)`, user_id, `id`) VALUES ('C:\\dir\\', \"D:\\\", ?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL NO_BACKSLASH_ESCAPES escaped quote", noBackslash: true, in: `INSERT INTO orders (note, user_id) VALUES ('it\'s', ?)`,
		err: "unterminated string literal", noServer: true},
	{name: "MySQL ANSI_QUOTES", ansiQuotes: true, in: `INSERT INTO "orders" ("user_id", "note") VALUES (?, 'x\'y')`,
		want: "INSERT INTO \"orders\" (\"user_id\", \"note\", `id`) VALUES (?, 'x\\'y', ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL ANSI_QUOTES key listed", ansiQuotes: true, in: `INSERT INTO orders ("ID", user_id) VALUES (?, ?)`},
	{name: "MySQL double quotes are strings", in: `INSERT INTO "orders" ("user_id") VALUES (?)`, noServer: true},
	{name: "MySQL introducers", in: "INSERT INTO orders (note, `we\"ird (x)`, user_id) VALUES (_utf8mb4'a, b', N'c)', X'41')",
		want: "INSERT INTO orders (note, `we\"ird (x)`, user_id, `id`) VALUES (_utf8mb4'a, b', N'c)', X'41', ?)", rows: 1, args: "id1"},
	{name: "MySQL JSON path", in: `INSERT INTO orders (note) VALUES (JSON_EXTRACT('[1, [2, 3]]', '$[1][0]'))`,
		want: "INSERT INTO orders (note, `id`) VALUES (JSON_EXTRACT('[1, [2, 3]]', '$[1][0]'), ?)", rows: 1, args: "id1"},
	{name: "MySQL variables", in: "INSERT INTO orders (user_id, note, total) VALUES (@uid, @'my var', @@session.auto_increment_increment)",
		want: "INSERT INTO orders (user_id, note, total, `id`) VALUES (@uid, @'my var', @@session.auto_increment_increment, ?)", rows: 1, args: "id1"},
	{name: "MySQL placeholders in literals and comments", in: "INSERT INTO orders (note, user_id) VALUES ('?', ? /* ? */) # ?",
		want: "INSERT INTO orders (note, user_id, `id`) VALUES ('?', ?, ? /* ? */) # ?", rows: 1, args: "p1 id1"},

	// Comments.
	{name: "MySQL hash comments", in: "INSERT INTO orders (user_id) # a ) comment, ?\nVALUES (? # ), ?\n)",
		want: "INSERT INTO orders (user_id, `id`) # a ) comment, ?\nVALUES (?, ? # ), ?\n)", rows: 1, args: "p1 id1"},
	{name: "MySQL dash comments", in: "INSERT INTO orders (user_id) -- ), ?\nVALUES (?)--\t), ?\n",
		want: "INSERT INTO orders (user_id, `id`) -- ), ?\nVALUES (?, ?)--\t), ?\n", rows: 1, args: "p1 id1"},
	{name: "MySQL dash comment at the end", in: "INSERT INTO orders (user_id) VALUES (?)--",
		want: "INSERT INTO orders (user_id, `id`) VALUES (?, ?)--", rows: 1, args: "p1 id1"},
	{name: "MySQL double minus is not a comment", in: `INSERT INTO orders (user_id, total) VALUES (1--1, ?--?)`,
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (1--1, ?--?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL double minus after VALUES", in: `INSERT INTO orders (user_id) VALUES (?)--x`,
		err: `unexpected "-" after VALUES`, noServer: true},
	{name: "MySQL block comments", in: "INSERT /* (x, */ INTO orders (user_id /* , id */) VALUES (? /* ) */)",
		want: "INSERT /* (x, */ INTO orders (user_id, `id` /* , id */) VALUES (?, ? /* ) */)", rows: 1, args: "p1 id1"},
	{name: "MySQL nested comment", in: "INSERT INTO orders (user_id) VALUES (?) /* a /* b */",
		err: "nested comment (not supported by MySQL)", noServer: true},
	{name: "MySQL optimizer hint", in: "INSERT /*+ NO_RANGE_OPTIMIZATION(orders) */ INTO orders (user_id) VALUES (?)",
		want: "INSERT /*+ NO_RANGE_OPTIMIZATION(orders) */ INTO orders (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL NUL in a comment", in: "INSERT INTO orders (user_id) VALUES (?) # a\x00b", err: "NUL byte in a comment", noServer: true},

	// Executable comments: /*! ... */ runs on MySQL and MariaDB alike.
	{name: "MySQL executable comment", in: "INSERT /*! IGNORE */ INTO orders (user_id) VALUES (?)",
		want: "INSERT /*! IGNORE */ INTO orders (user_id, `id`) VALUES (?, ?)", rows: 1, args: "p1 id1"},
	{name: "MySQL executable comment holds a column", in: "INSERT INTO orders (user_id /*!, total */) VALUES (?, ?)",
		want: "INSERT INTO orders (user_id /*!, total, `id` */) VALUES (?, ?, ?)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL executable comment holds a value", in: "INSERT INTO orders (user_id, total) VALUES (? /*!, ? */)",
		want: "INSERT INTO orders (user_id, total, `id`) VALUES (? /*!, ?, ? */)", rows: 1, args: "p1 p2 id1"},
	{name: "MySQL executable comment holds the update", in: "INSERT INTO orders (user_id) VALUES (?) /*!ON DUPLICATE KEY UPDATE total = ?*/",
		want: "INSERT INTO orders (user_id, `id`) VALUES (?, ?) /*!ON DUPLICATE KEY UPDATE total = ?*/", rows: 1, args: "p1 id1 p2"},
	{name: "MySQL executable comment holds the insert", in: "/*! INSERT INTO orders (user_id) VALUES (?) */",
		want: "/*! INSERT INTO orders (user_id, `id`) VALUES (?, ?) */", rows: 1, args: "p1 id1"},
	{name: "MySQL executable comment holds the key", in: "INSERT INTO orders (user_id /*!, id */) VALUES (?, ?)"},
	{name: "MySQL versioned comment", in: "INSERT /*!50100 IGNORE */ INTO orders (user_id) VALUES (?)",
		err: "MySQL versioned comment /*!NNNNN ... */ (run or skipped depending on the server version) makes the statement ambiguous" + noDefaultMySQL},
	{name: "MySQL versioned comment, key with default", in: "INSERT /*!50100 IGNORE */ INTO events (kind) VALUES (?)"},
	{name: "MySQL versioned comment, other table", in: "INSERT /*!50100 IGNORE */ INTO customers (note) VALUES (?)"},
	{name: "MySQL MariaDB executable comment", in: "INSERT /*M! IGNORE */ INTO orders (user_id) VALUES (?)",
		err: "MariaDB executable comment /*M! ... */ (run by MariaDB, skipped by MySQL)"},
	{name: "MySQL MariaDB versioned comment", in: "INSERT INTO orders (user_id) VALUES (?) /*M!100500 RETURNING id */",
		err: "MariaDB executable comment"},
	{name: "MySQL comment in an executable comment", in: "INSERT /*! IGNORE /* x */ */ INTO orders (user_id) VALUES (?)",
		err: "comment inside an executable comment", noServer: true},
	{name: "MySQL hash comment in an executable comment", in: "INSERT /*! IGNORE # x */\nINTO orders (user_id) VALUES (?)",
		err: "'#' comment inside an executable comment", noServer: true},
	{name: "MySQL comment end in a literal in an executable comment", in: "INSERT INTO orders (user_id, note) VALUES (? /*!, 'a */' */)",
		err: "'*/' inside a literal in an executable comment", noServer: true},
	{name: "MySQL comment end in a literal outside an executable comment", in: "INSERT INTO orders (note) VALUES ('*/')",
		want: "INSERT INTO orders (note, `id`) VALUES ('*/', ?)", rows: 1, args: "id1"},
	{name: "MySQL unterminated executable comment", in: "INSERT INTO orders (user_id) VALUES (?) /*! ON DUPLICATE KEY UPDATE total = 1",
		err: "unterminated executable comment", noServer: true},
})

// inMySQL sets the dialect of cases to MySQL.
func inMySQL(cases []rwCase) []rwCase {
	for i := range cases {
		cases[i].dialect = dialect.MySQL
	}
	return cases
}

func TestRewriteMySQL(t *testing.T) { runCases(t, mysqlCases) }

func TestKeyListedMySQL(t *testing.T) {
	r := newTest(t, dialect.MySQL)
	tests := []struct {
		q    string
		want string // "" means not a key-listed INSERT into a configured table
	}{
		{"INSERT INTO orders (id, user_id) VALUE (?, ?)", "orders"},
		{"INSERT orders (`ID`) VALUES (?)", "orders"},
		{"INSERT INTO orders SET user_id = ?, ID = ?", "orders"},
		{"INSERT INTO shop.users SET user_id = ?;", "shop.users"},
		{"INSERT INTO orders SET user_id = ?", ""},
		{"INSERT INTO orders (user_id) VALUES (?)", ""},
		{"REPLACE INTO orders (id) VALUES (?)", ""},
		{"INSERT INTO orders (id) SELECT 1", ""},
		{"INSERT /*!50100 IGNORE */ INTO orders (id) VALUES (?)", ""},
	}
	for _, tt := range tests {
		tbl, ok := r.KeyListed(tt.q)
		got := ""
		if ok {
			got = tbl.String()
		}
		if got != tt.want {
			t.Errorf("KeyListed(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

// TestLexMySQL checks how MySQL words, numbers and comments are read.
func TestLexMySQL(t *testing.T) {
	tests := []struct {
		q    string
		want string // token kinds: i ident, q quoted, s string, n number, ? param, p punct
	}{
		{"1e5 1e 1e+5 1e-5x 0x1F 0x 0xG 0b101 0b2 12abc $x x$ .5 1.5e-3 1.", "n i n ni n i i n i i i i n n n"},
		{"t.1a t . 1a 1.a `t`.1a", "ipi i p i ni qpi"},
		{"a--b c-- d\ne--\tf\ng--\nh#i\nj", "ippi i i i i i"},
		{"'a\\'b' \"c\\\"d\" `e``f` 'g''h'", "s s q s"},
		{"x /*! y */ z /*!*/ /*!w*/", "i i i i"},
		{"@v @'w' @@x.y ?", "pi ps ppipi ?"},
	}
	kinds := map[tokKind]byte{tIdent: 'i', tQIdent: 'q', tString: 's', tNumber: 'n', tParam: '?', tPunct: 'p'}
	for _, tt := range tests {
		lx := lex(tt.q, dialect.MySQL.Syntax())
		if lx.bad >= 0 {
			t.Errorf("lex(%q): bad at %d: %s", tt.q, lx.bad, lx.why)
			continue
		}
		var got []byte
		for k, tk := range lx.toks {
			if k > 0 && lx.toks[k-1].end < tk.start {
				got = append(got, ' ')
			}
			got = append(got, kinds[tk.kind])
		}
		if string(got) != tt.want {
			t.Errorf("lex(%q) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func TestNewMySQL(t *testing.T) {
	for _, cfg := range []Config{
		{Dialect: dialect.PostgreSQL, NoBackslashEscapes: true},
		{Dialect: dialect.SQLite, ANSIQuotes: true},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
	if _, err := New(Config{Dialect: dialect.MySQL, NoBackslashEscapes: true, ANSIQuotes: true}); err != nil {
		t.Errorf("New: %v", err)
	}
}

// TestArgsMySQL checks Args over the MySQL forms with caller arguments
// before, between and after the added placeholders.
func TestArgsMySQL(t *testing.T) {
	r := newTest(t, dialect.MySQL)
	p, err := r.Plan(context.Background(), `INSERT INTO orders SET note = ?, user_id = ? AS new ON DUPLICATE KEY UPDATE total = ?`, nil)
	if err != nil || p == nil {
		t.Fatalf("Plan: %v %v", p, err)
	}
	got := p.Args(nil, nv("a", "b", "c"), []int64{9})
	want := nv("a", "b", int64(9), "c")
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Args = %v, want %v", got, want)
		}
	}
}
