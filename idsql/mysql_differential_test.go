package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
)

// The MySQL differential test: every statement of a corpus of MySQL
// inserts runs through idsql on one database and raw (go-sql-driver, no
// idsql) on a twin database, and the two must behave alike: the same
// errors, rows affected, rows and RETURNING output, and LastInsertId naming
// the same row. The twin's key columns are AUTO_INCREMENT, so the raw side
// fills keys the way MySQL would without idsql; the only differences
// allowed are the filled keys themselves, and statements idsql refuses
// because it cannot fill them and the key has no default.
//
// The corpus runs four times: in the server's sql_mode, with
// NO_BACKSLASH_ESCAPES, with ANSI_QUOTES (statements meant for the default
// mode then fail alike on both sides, or mean something else alike), and
// with the driver's interpolateParams.

// mtable is a table of the differential schema, in both databases.
type mtable struct {
	name     string          // as configured and as statements name it
	k, n, s  string          // columns as statements name them
	keyName  string          // the key column's catalog name
	strategy keyset.Strategy // keyset.Snowflake, keyset.Segment or "" (not configured)
	keyLast  bool            // the key is the last column
	auto     bool            // the idsql side's key is AUTO_INCREMENT too
}

var mTables = []*mtable{
	{name: "orders", k: "id", n: "n", s: "s", keyName: "id", strategy: keyset.Snowflake},
	{name: "users", k: "id", n: "n", s: "s", keyName: "id", strategy: keyset.Segment},
	{name: "Audit", k: "`Key`", n: "`N`", s: "`S`", keyName: "Key", strategy: keyset.Snowflake},
	{name: "events", k: "id", n: "n", s: "s", keyName: "id", strategy: keyset.Snowflake, keyLast: true},
	{name: "autoinc", k: "id", n: "n", s: "s", keyName: "id", strategy: keyset.Snowflake, auto: true},
	{name: "plain", k: "id", n: "n", s: "s", keyName: "id", auto: true},
}

func (tb *mtable) quoted() string { return "`" + tb.name + "`" }

// ddl creates the table; raw says the twin, whose key is AUTO_INCREMENT.
func (tb *mtable) ddl(raw bool) string {
	key := tb.k + " BIGINT NOT NULL PRIMARY KEY"
	if raw || tb.auto {
		key = tb.k + " BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
	}
	cols := []string{key, tb.n + " INT UNIQUE", tb.s + " VARCHAR(100)"}
	if tb.keyLast {
		cols = append(cols[1:], cols[0])
	}
	return "CREATE TABLE " + tb.quoted() + " (" + strings.Join(cols, ", ") + ")"
}

func diffMySQLConfig() *keyset.Config {
	cfg := &keyset.Config{Namespace: "mdiff", Tables: map[string]keyset.TableConfig{}}
	for _, tb := range mTables {
		switch tb.strategy {
		case keyset.Snowflake:
			cfg.Tables[tb.name] = keyset.TableConfig{Strategy: keyset.Snowflake, Column: tb.keyName}
		case keyset.Segment:
			cfg.Tables[tb.name] = keyset.TableConfig{Strategy: keyset.Segment, Column: tb.keyName, Step: 20}
		}
	}
	return cfg
}

// mkind is what idsql must do with a case's statement.
type mkind int

const (
	mFill       mkind = iota // an insert into the table without its key: filled if the table is configured
	mKeyed                   // the statement gives the key: passes unchanged
	mUnfillable              // an insert idsql cannot fill: passes if the key has a default, else refused
	mOther                   // not an insert into a configured table: passes unchanged
	mZero                    // the key is a bind value of 0 or NULL: the text passes, its keys are filled
)

// mcase is one statement of the corpus.
type mcase struct {
	name    string
	table   *mtable
	kind    mkind
	setup   string  // run on both sides first
	query   string  // template: {T} {QT} {K} {N} {S} {DB}
	runs    [][]any // more than one: prepared once, run each
	prepare bool    // prepare even for one run
	returns bool    // run with Query and compare the rows returned
	rows    int     // VALUES rows per run (0 means 1)
	// accepts, when set, says why idsql accepts this statement although
	// the server refuses it raw (a known difference, checked as such).
	accepts string
}

const oldRow = "INSERT INTO {T} ({K}, {N}, {S}) VALUES (77, 1, 'old')"

// mysqlCorpus builds the cases for every table.
func mysqlCorpus() []mcase {
	var cs []mcase
	for _, tb := range mTables {
		add := func(c mcase) {
			c.name = tb.name + "/" + c.name
			c.table = tb
			if c.runs == nil {
				c.runs = [][]any{nil}
			}
			cs = append(cs, c)
		}
		fill := func(name, q string, args ...any) mcase {
			return mcase{name: name, kind: mFill, query: q, runs: [][]any{args}}
		}
		withSetup := func(c mcase, setup string) mcase { c.setup = setup; return c }
		withRows := func(c mcase, rows int) mcase { c.rows = rows; return c }
		returning := func(c mcase) mcase { c.returns = true; return c }
		ins := "INSERT INTO {T} ({N}, {S})"

		// VALUES and VALUE.
		add(fill("basic", ins+" VALUES (?, ?)", 1, "a"))
		add(fill("literals", ins+" VALUES (2, 'b')"))
		add(fill("VALUE", ins+" VALUE (?, ?)", 3, "c"))
		add(fill("without INTO", "INSERT {T} ({N}, {S}) VALUES (?, ?)", 4, "d"))
		add(fill("lower case", "insert into {T} ({N}, {S}) values (?, ?)", 5, "e"))
		add(fill("tight", "INSERT INTO {T}({N},{S})VALUES(?,?)", 6, "f"))
		add(fill("newlines", "INSERT\n\tINTO\n{T}\n(\n{N},\n{S}\n)\nVALUES\n(\n?,\n?\n)\n", 7, "g"))
		add(fill("trailing semicolon", ins+" VALUES (?, ?);", 8, "h"))
		add(fill("columns reversed", "INSERT INTO {T} ({S}, {N}) VALUES (?, ?)", "i", 9))
		add(withRows(fill("multi-row", ins+" VALUES (?, ?), (?, ?), (?, ?)", 1, "a", 2, "b", 3, "c"), 3))
		add(withRows(fill("multi-row mixed", ins+" VALUES (?, 'x'), (11, ?), (12, 'z')", 10, "y"), 3))
		add(fill("DEFAULT in values", ins+" VALUES (?, DEFAULT)", 13))
		add(fill("NULL in values", ins+" VALUES (?, NULL)", 14))
		add(fill("expressions", ins+" VALUES (? + (1 * 2), CONCAT('(', ?, ')'))", 15, "p"))
		add(fill("empty column list", "INSERT INTO {T} () VALUES ()"))
		add(fill("no columns, empty row", "INSERT INTO {T} VALUES ()"))

		// Names: database-qualified, backticks.
		add(fill("database-qualified", "INSERT INTO {DB}.{T} ({N}, {S}) VALUES (?, ?)", 1, "q"))
		add(fill("backticked database and table", "INSERT INTO `{DB}`.{QT} ({N}, {S}) VALUES (?, ?)", 2, "r"))
		add(fill("backticked table", "INSERT INTO {QT} ({N}, {S}) VALUES (?, ?)", 3, "s"))
		add(fill("backticked columns", "INSERT INTO {T} (`"+strings.Trim(tb.n, "`")+"`, `"+strings.Trim(tb.s, "`")+"`) VALUES (?, ?)", 4, "t"))
		add(fill("doubled backtick in a subquery", ins+" VALUES (?, (SELECT `a``b` FROM (SELECT 'v?' AS `a``b`) z))", 5))

		// Modifiers and PARTITION (the tables are not partitioned: both
		// sides fail alike).
		add(fill("LOW_PRIORITY", "INSERT LOW_PRIORITY INTO {T} ({N}, {S}) VALUES (?, ?)", 1, "lp"))
		add(fill("HIGH_PRIORITY", "INSERT HIGH_PRIORITY {T} ({N}, {S}) VALUES (?, ?)", 2, "hp"))
		add(fill("DELAYED", "INSERT DELAYED INTO {T} ({N}, {S}) VALUES (?, ?)", 3, "dl"))
		add(fill("PARTITION", "INSERT INTO {T} PARTITION (p0) ({N}, {S}) VALUES (?, ?)", 4, "pt"))

		// INSERT IGNORE.
		add(fill("ignore, new", "INSERT IGNORE INTO {T} ({N}, {S}) VALUES (?, ?)", 1, "new"))
		add(withSetup(fill("ignore, duplicate", "INSERT IGNORE INTO {T} ({N}, {S}) VALUES (?, ?)", 1, "dup"), oldRow))
		add(withRows(withSetup(fill("ignore, duplicate then new", "INSERT IGNORE INTO {T} ({N}, {S}) VALUES (1, 'dup'), (?, ?)", 2, "new"), oldRow), 2))
		add(withSetup(fill("executable comment IGNORE", "INSERT /*! IGNORE */ INTO {T} ({N}, {S}) VALUES (?, ?)", 1, "dup"), oldRow))

		// REPLACE.
		add(fill("replace, new", "REPLACE INTO {T} ({N}, {S}) VALUES (?, ?)", 1, "new"))
		add(withSetup(fill("replace, replacing", "REPLACE {T} ({N}, {S}) VALUES (?, ?)", 1, "replaced"), oldRow))
		add(withRows(withSetup(fill("replace multi-row", "REPLACE INTO {T} ({N}, {S}) VALUES (?, 'r1'), (?, 'r2')", 1, 2), oldRow), 2))

		// ON DUPLICATE KEY UPDATE.
		odku := ins + " VALUES (?, ?) ON DUPLICATE KEY UPDATE {S} = VALUES({S})"
		add(fill("odku, new", odku, 1, "new"))
		add(withSetup(fill("odku, duplicate", odku, 1, "updated"), oldRow))
		add(withSetup(fill("odku, unchanged", ins+" VALUES (?, ?) ON DUPLICATE KEY UPDATE {S} = {S}", 1, "ignored"), oldRow))
		add(withRows(withSetup(fill("odku multi-row with a parameter after", ins+" VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE {S} = CONCAT(VALUES({S}), ?)",
			1, "u", 2, "v", "+"), oldRow), 2))
		add(withSetup(fill("odku row alias", ins+" VALUES (?, ?) AS new ON DUPLICATE KEY UPDATE {S} = new.{S}", 1, "alias"), oldRow))
		add(withSetup(fill("odku row alias with columns", ins+" VALUES (?, ?) AS new(a, b) ON DUPLICATE KEY UPDATE {S} = b", 1, "cols"), oldRow))
		add(withSetup(fill("odku key update", ins+" VALUES (?, ?) ON DUPLICATE KEY UPDATE {K} = {K} + 1", 1, "k"), oldRow))

		// INSERT ... SET.
		add(fill("set", "INSERT INTO {T} SET {N} = ?, {S} = ?", 1, "set"))
		add(fill("set expressions", "INSERT INTO {T} SET {S} = CONCAT(?, ', (', ?), {N} = IF(? > 0, 2, 3)", "x", "y", 1))
		add(withSetup(fill("set odku", "INSERT INTO {T} SET {N} = ?, {S} = ? ON DUPLICATE KEY UPDATE {S} = CONCAT({S}, ?)", 1, "s", "!"), oldRow))
		add(withSetup(fill("ignore set", "INSERT IGNORE {T} SET {N} = ?", 1), oldRow))
		add(withSetup(fill("set row alias", "INSERT INTO {T} SET {N} = ?, {S} = ? AS new ON DUPLICATE KEY UPDATE {S} = new.{S}", 1, "sa"), oldRow))

		// VALUES ROW (MySQL 8.0.19; MariaDB fails alike on both sides).
		add(withRows(fill("values row", ins+" VALUES ROW(?, ?), ROW(?, 'x')", 1, "a", 2), 2))

		// Comments.
		add(fill("hash comment", "# lead ( ,\nINSERT INTO {T} ({N}, {S}) # ) ?\nVALUES (?, ?) # tail", 1, "h"))
		add(fill("dash comment", "-- lead (\nINSERT INTO {T} ({N}, -- )\n{S}) VALUES (?, -- ), ?\n?)", 2, "d"))
		add(fill("block comments", "/* lead ( */ INSERT /* a, b */ INTO {T} /* d */ ({N} /* , x */, {S}) VALUES ( /* ) */ ?, ?)", 3, "b"))
		add(fill("minus minus is an operator", ins+" VALUES (5--1, ?)", "mm"))
		add(fill("executable comment values", ins+" /*! VALUES (?, ?) */", 7, "ex"))
		add(mcase{name: "versioned comment", kind: mUnfillable, query: ins + " /*!50000 VALUES (8, 'v') */"})
		add(mcase{name: "MariaDB comment", kind: mUnfillable, query: ins + " /*M! VALUES (9, 'm') */"})

		// String literals with parentheses, commas, placeholders, quotes
		// and backslashes: read as the session's sql_mode says.
		add(fill("backslash escapes", ins+` VALUES (?, 'it\'s (x), ?;')`, 1))
		add(fill("backslash at the end", ins+` VALUES (?, 'C:\\dir\\')`, 2))
		add(fill("lone backslash", ins+` VALUES (?, 'C:\'), (?, ')')`, 3, 4))
		add(fill("doubled quotes", ins+` VALUES (?, 'a''b (?)')`, 4))
		add(fill("double-quoted", ins+` VALUES (?, "dq (?, x) \" ")`, 5))
		add(fill("double-quoted name", `INSERT INTO "{T}" ({N}, {S}) VALUES (?, ?)`, 6, "ansi"))
		add(fill("introducer and national", ins+` VALUES (?, CONCAT(_utf8mb4'i?', N'n)'))`, 7))
		add(fill("hex literal", ins+` VALUES (?, X'283F29')`, 8))
		add(withRows(fill("string then placeholders", ins+` VALUES (?, '?, ?)'), (?, ?)`, 9, 10, "p"), 2))

		// RETURNING (MariaDB 10.5; MySQL fails alike on both sides).
		add(returning(withRows(fill("returning key", ins+" VALUES (?, ?), (?, 'lit') RETURNING {K}, {N}", 1, "a", 2), 2)))
		add(returning(fill("returning star", ins+" VALUES (?, ?) RETURNING *", 3, "st")))
		add(returning(fill("returning n", ins+" VALUES (?, ?) RETURNING {N}, {S}", 4, "rn")))
		add(returning(fill("set returning", "INSERT INTO {T} SET {N} = ?, {S} = ? RETURNING {K}", 5, "sr")))

		// Prepared once, executed many times.
		add(mcase{name: "prepared", kind: mFill, query: ins + " VALUES (?, ?)", runs: [][]any{{1, "p1"}, {2, "p2"}, {3, "p3"}, {4, "p4"}}})
		add(mcase{name: "prepared multi-row", kind: mFill, query: ins + " VALUES (?, 'm'), (? + 100, 'n')", runs: [][]any{{1, 1}, {2, 2}, {3, 3}}, rows: 2})
		add(mcase{name: "prepared once", kind: mFill, query: ins + " VALUES (?, ?)", runs: [][]any{{1, "once"}}, prepare: true})
		add(mcase{name: "prepared returning", kind: mFill, query: ins + " VALUES (?, ?) RETURNING {K}, {N}", runs: [][]any{{1, "r1"}, {2, "r2"}}, returns: true})
		add(mcase{name: "prepared ignore", kind: mFill, setup: oldRow, query: "INSERT IGNORE INTO {T} ({N}, {S}) VALUES (?, ?)", runs: [][]any{{1, "dup"}, {2, "new"}}})

		// The key given: the caller's value stays, the text passes.
		add(mcase{name: "key listed", kind: mKeyed, query: "INSERT INTO {T} ({K}, {N}, {S}) VALUES (?, ?, ?)", runs: [][]any{{1234, 1, "k"}}})
		add(mcase{name: "key listed last, multi-row", kind: mKeyed, query: "INSERT INTO {T} ({N}, {S}, {K}) VALUES (1, 'a', 501), (2, 'b', 502)", rows: 2})
		add(mcase{name: "key in SET", kind: mKeyed, query: "INSERT INTO {T} SET {K} = ?, {N} = ?", runs: [][]any{{601, 1}}})
		add(mcase{name: "key listed prepared", kind: mKeyed, query: "INSERT INTO {T} ({K}, {N}, {S}) VALUES (?, ?, 'kp')", runs: [][]any{{701, 1}, {702, 2}}})
		add(mcase{name: "key listed, ignore duplicate", kind: mKeyed, setup: oldRow, query: "INSERT IGNORE INTO {T} ({K}, {N}) VALUES (77, 5)"})

		// The key given as DEFAULT, NULL, 0 or a bind value of 0 or NULL
		// (gorm, bun): filled, as AUTO_INCREMENT fills them on the raw side.
		add(fill("key DEFAULT", "INSERT INTO {T} ({K}, {N}, {S}) VALUES (DEFAULT, ?, ?)", 1, "kd"))
		add(withRows(fill("key 0, NULL and DEFAULT literals", "INSERT INTO {T} ({N}, {K}, {S}) VALUES (1, 0, 'z'), (2, NULL, 'n'), (3, DEFAULT, 'd')"), 3))
		add(fill("key SET DEFAULT", "INSERT INTO {T} SET {K} = DEFAULT, {N} = ?, {S} = 'sd'", 1))
		add(returning(withRows(fill("key DEFAULT returning", "INSERT INTO {T} ({K}, {N}) VALUES (DEFAULT, ?), (DEFAULT, ?) RETURNING {K}, {N}", 1, 2), 2)))
		add(mcase{name: "key bind 0", kind: mZero, query: "INSERT INTO {T} ({K}, {N}, {S}) VALUES (?, ?, ?)", runs: [][]any{{int64(0), 1, "z"}}})
		add(mcase{name: "key bind NULL and a caller's", kind: mZero, query: "INSERT INTO {T} ({K}, {N}, {S}) VALUES (?, 1, 'a'), (?, 2, 'b')",
			runs: [][]any{{nil, 5002}}, rows: 2})
		if !tb.keyLast {
			add(fill("no column list, key DEFAULT", "INSERT INTO {T} VALUES (DEFAULT, ?, ?)", 1, "nd"))
		}

		// No column list: the catalog gives the order.
		if tb.keyLast {
			add(mcase{name: "no column list, every column", kind: mKeyed, query: "INSERT INTO {T} VALUES (?, ?, ?)", runs: [][]any{{1, "all", 901}}})
			// MySQL wants a value for every column when there is no column
			// list (error 1136), but the rewriter fills the key after the
			// values as PostgreSQL would assign them.
			const fewer = "no column list and fewer values than columns: MySQL refuses it (1136), idsql fills the key column after the values"
			c := fill("no column list, key after the values", "INSERT INTO {T} VALUES (?, ?)", 1, "pos")
			c.accepts = fewer
			add(c)
			c = withRows(fill("no column list, multi-row", "INSERT INTO {T} VALUES (?, 'a'), (2, ?)", 1, "b"), 2)
			c.accepts = fewer
			add(c)
		} else {
			add(mcase{name: "no column list, every column", kind: mKeyed, query: "INSERT INTO {T} VALUES (?, ?, ?)", runs: [][]any{{901, 1, "all"}}})
			add(mcase{name: "no column list, key only", kind: mKeyed, query: "INSERT INTO {T} VALUES (?)", runs: [][]any{{902}}})
		}

		// What idsql cannot fill: passes when the key has a default,
		// refused otherwise.
		add(mcase{name: "insert select", kind: mUnfillable, query: ins + " SELECT 1, 'sel'"})
		add(mcase{name: "insert select from dual with parameters", kind: mUnfillable, query: ins + " SELECT ?, ? FROM DUAL", runs: [][]any{{2, "dual"}}})
		add(mcase{name: "insert select union", kind: mUnfillable, query: ins + " SELECT 3, 'u' UNION ALL SELECT 4, 'v'", rows: 2})
		add(mcase{name: "insert table", kind: mUnfillable, query: ins + " TABLE plain"})
		add(mcase{name: "two statements", kind: mUnfillable, query: ins + " VALUES (1, 'a'); SELECT 1"})
	}
	// Statements that are not INSERTs into configured tables.
	for _, o := range []struct{ name, q string }{
		{"select", "SELECT count(*) FROM orders"},
		{"update", "UPDATE orders SET s = 'x' WHERE n = 1"},
		{"delete", "DELETE FROM users WHERE n = 1"},
		{"string looks like insert", "SELECT 'INSERT INTO orders (n) VALUES (1)'"},
		{"comment looks like insert", "# INSERT INTO orders (n) VALUES (1)\nSELECT 1"},
		{"backslash string looks like insert", `SELECT 'x\' INSERT INTO orders (n) VALUES (1) \''`},
		// DDL holding an INSERT runs none: unchanged.
		{"create trigger", "CREATE TRIGGER diff_tr AFTER INSERT ON plain FOR EACH ROW INSERT INTO orders (n) VALUES (NEW.n + 1000)"},
		{"drop trigger", "DROP TRIGGER diff_tr"},
	} {
		cs = append(cs, mcase{name: "other/" + o.name, table: mTables[0], kind: mOther, query: o.q, setup: oldRow, runs: [][]any{nil}})
	}
	return cs
}

// side is one of the two databases.
type side struct {
	dsn string
	db  string // database name
	raw *sql.DB
}

func (s side) expand(tb *mtable, tmpl string) string {
	return strings.NewReplacer("{T}", tb.name, "{QT}", tb.quoted(), "{K}", tb.k, "{N}", tb.n, "{S}", tb.s, "{DB}", s.db).Replace(tmpl)
}

// outcome is what one run of a statement did on one side.
type outcome struct {
	err      error
	affected int64
	lastID   int64
	returned [][]any
	cols     []string
}

// TestMySQLDifferential runs the corpus in each mode.
func TestMySQLDifferential(t *testing.T) {
	mysqltest.BaseDSN(t)
	corpus := mysqlCorpus()
	if len(corpus) < 400 {
		t.Fatalf("only %d cases", len(corpus))
	}
	for i, mode := range []struct {
		name   string
		params map[string]string
	}{
		{"default", nil},
		{"NO_BACKSLASH_ESCAPES", sqlModeParam("NO_BACKSLASH_ESCAPES")},
		{"ANSI_QUOTES", sqlModeParam("ANSI_QUOTES")},
		{"interpolateParams", map[string]string{"interpolateParams": "true"}},
	} {
		if testing.Short() && mode.params != nil {
			continue
		}
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			runDifferential(t, corpus, mode.params, int64(10*(i+1)))
		})
	}
}

func runDifferential(t *testing.T, corpus []mcase, params map[string]string, base int64) {
	ctx := context.Background()
	var a, b side
	for _, s := range []*side{&a, &b} {
		s.dsn = withParams(t, mysqltest.Database(t), params)
		c, err := mysql.ParseDSN(s.dsn)
		if err != nil {
			t.Fatal(err)
		}
		s.db = c.DBName
		if s.raw, err = sql.Open("mysql", s.dsn); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.raw.Close() })
		for _, tb := range mTables {
			if _, err := s.raw.ExecContext(ctx, tb.ddl(s == &b)); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := diffMySQLConfig()
	reg := registry.New(a.raw, registry.Settings{AcceptLazyCommits: true})
	if err := idsql.MigrateIn(ctx, a.raw, cfg, idsql.Stores{Workers: reg, Segments: mysqlstore.New(a.raw)}); err != nil {
		t.Fatal(err)
	}
	mc, err := mysql.ParseDSN(a.dsn)
	if err != nil {
		t.Fatal(err)
	}
	inner, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	conn, err := idsql.NewConnector(recConnector{inner, rec}, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{
		DB: a.raw, Holder: tableWorkers(cfg, base), Registry: reg}})
	if err != nil {
		t.Fatal(err)
	}
	db := idsql.NewDB(conn)
	t.Cleanup(func() { db.Close() })
	layout, _ := cfg.SnowflakeLayout()

	seen := map[int64]string{} // every generated key
	generated := func(tb *mtable, key int64) bool {
		switch tb.strategy {
		case keyset.Snowflake:
			p, err := layout.Decode(key, time.Now(), time.Second)
			return err == nil && p.Worker == tableWorker(cfg, base, tb.name) && time.Since(p.Time) < time.Minute
		case keyset.Segment:
			return inRange(t, a.raw, tb.name, key)
		}
		return false
	}
	counts := map[string]int{}
	for _, c := range corpus {
		tb := c.table
		for _, s := range []side{a, b} {
			reset := "DELETE FROM " + tb.quoted()
			if tb.auto {
				reset = "TRUNCATE TABLE " + tb.quoted() // the same AUTO_INCREMENT on both sides
			}
			if _, err := s.raw.ExecContext(ctx, reset); err != nil {
				t.Fatal(err)
			}
			if c.setup != "" {
				if _, err := s.raw.ExecContext(ctx, s.expand(tb, c.setup)); err != nil {
					t.Fatalf("%s: setup: %v", c.name, err)
				}
			}
		}
		rec.take()
		qa, qb := a.expand(tb, c.query), b.expand(tb, c.query)
		t.Run(c.name, func(t *testing.T) {
			outA := runMySQLCase(t, db.DB.DB, qa, c)
			sent := catalogFree(rec.take())
			outB := runMySQLCase(t, b.raw, qb, c)

			// What reached the driver on the idsql side.
			var filled, passed bool
			switch {
			case len(sent) == 0:
			case !slices.ContainsFunc(sent, func(s string) bool { return s != qa }):
				passed = true
			case !slices.Contains(sent, qa):
				filled = true
				for _, s := range sent {
					// (A statement without a column list only had its
					// DEFAULT replaced.)
					if !strings.Contains(s, "`"+tb.keyName+"`") && !strings.Contains(s, tb.k) && !strings.Contains(c.name, "no column list, key DEFAULT") {
						t.Errorf("filled statement without the key column: %q", s)
					}
				}
			default:
				t.Fatalf("the original and a rewrite both reached the driver: %q", sent)
			}
			refused := len(sent) == 0 && len(outA) > 0 && outA[0].err != nil
			if ob := outB[0]; ob.err != nil && c.accepts == "" {
				// The server refuses it: so must idsql, by refusing it
				// itself (text it cannot read for certain) or by sending it,
				// filled or not, to the same error.
				oa := outA[0]
				if oa.err == nil || !refused && mysqlErrNumber(oa.err) != mysqlErrNumber(ob.err) {
					t.Fatalf("raw: %v; idsql: %v (sent %q)", ob.err, oa.err, sent)
				}
				counts["failed alike"]++
				if testing.Verbose() {
					t.Logf("fails alike: raw %v; idsql %v", ob.err, oa.err)
				}
				return
			}
			switch {
			case c.kind == mFill && tb.strategy != "":
				if !filled {
					t.Fatalf("not filled: sent %q, error %v", sent, errOf(outA))
				}
			case c.kind == mZero && tb.strategy != "":
				if !passed {
					t.Fatalf("want the text unchanged (keys in the arguments), sent %q (error %v)", sent, errOf(outA))
				}
				passed, filled = false, true
			case c.kind == mUnfillable && tb.strategy != "" && !tb.auto:
				if !refused || !strings.Contains(outA[0].err.Error(), "insert into "+tb.name) {
					t.Fatalf("want a refusal naming the table, got sent %q, error %v", sent, errOf(outA))
				}
				counts["refused"]++
				return // the raw side does as it likes with its AUTO_INCREMENT
			default:
				if !passed {
					t.Fatalf("want the statement unchanged, sent %q (error %v)", sent, errOf(outA))
				}
			}
			if filled {
				counts["filled"]++
			} else {
				counts["passed"]++
			}
			if c.accepts != "" {
				// A known difference: idsql accepts what the server would
				// refuse without idsql.
				if outB[0].err == nil || outA[0].err != nil {
					t.Fatalf("%s: raw %v, idsql %v", c.accepts, outB[0].err, outA[0].err)
				}
				counts["accepted, raw refuses"]++
				return
			}

			keysA := mysqlKeys(t, a.raw, tb)
			keysB := mysqlKeys(t, b.raw, tb)
			ran := false // a run succeeded on both sides
			for i := range outA {
				oa, ob := outA[i], outB[i]
				if (oa.err == nil) != (ob.err == nil) || mysqlErrNumber(oa.err) != mysqlErrNumber(ob.err) {
					t.Fatalf("run %d: idsql: %v; raw: %v", i, oa.err, ob.err)
				}
				if oa.err != nil {
					counts["failed alike"]++
					continue
				}
				ran = true
				if oa.affected != ob.affected {
					t.Errorf("run %d: rows affected %d, raw %d", i, oa.affected, ob.affected)
				}
				if !c.returns {
					checkLastID(t, i, c, filled, oa, ob, keysA, keysB)
				} else {
					compareReturned(t, tb, oa, ob, keysA, keysB)
				}
			}
			// The tables hold the same rows; keys differ only where idsql
			// filled them.
			if len(keysA) != len(keysB) {
				t.Fatalf("idsql side has rows %v, raw side %v", keysA, keysB)
			}
			for n, ra := range keysA {
				rb, ok := keysB[n]
				if !ok || ra.s != rb.s {
					t.Fatalf("row n=%d: idsql %+v, raw %+v (present %v)", n, ra, rb, ok)
				}
				if ra.key == rb.key {
					continue
				}
				if !filled || !generated(tb, ra.key) {
					t.Errorf("row n=%d: key %d, raw %d, and not a key idsql generated", n, ra.key, rb.key)
				}
				if prev, dup := seen[ra.key]; dup && prev != c.name {
					t.Errorf("key %d generated again (first in %s)", ra.key, prev)
				}
				seen[ra.key] = c.name
			}
			if ran && !t.Failed() {
				counts["succeeded alike"]++
				if filled {
					counts["succeeded alike, filled"]++
				}
			}
		})
	}
	t.Logf("%d cases: %v; %d generated keys", len(corpus), counts, len(seen))
	// A floor: cases that fail alike pass too, so a raw side that refused
	// everything would let every case through.
	for what, least := range map[string]int{"succeeded alike": 400, "succeeded alike, filled": 300} {
		if counts[what] < least {
			t.Errorf("%d cases %s, want at least %d", counts[what], what, least)
		}
	}
}

// runMySQLCase runs c's statement on db (idsql or raw) as the case says.
func runMySQLCase(t *testing.T, db *sql.DB, query string, c mcase) []outcome {
	t.Helper()
	ctx := context.Background()
	var st *sql.Stmt
	if len(c.runs) > 1 || c.prepare {
		var err error
		if st, err = db.PrepareContext(ctx, query); err != nil {
			return []outcome{{err: err}}
		}
		defer st.Close()
	}
	var out []outcome
	for _, args := range c.runs {
		var o outcome
		if c.returns {
			var rows *sql.Rows
			if st != nil {
				rows, o.err = st.QueryContext(ctx, args...)
			} else {
				rows, o.err = db.QueryContext(ctx, query, args...)
			}
			if o.err == nil {
				o.cols, o.returned, o.err = readAll(rows)
				o.affected = int64(len(o.returned))
			}
		} else {
			var res sql.Result
			if st != nil {
				res, o.err = st.ExecContext(ctx, args...)
			} else {
				res, o.err = db.ExecContext(ctx, query, args...)
			}
			if o.err == nil {
				o.affected, _ = res.RowsAffected()
				o.lastID, _ = res.LastInsertId()
			}
		}
		out = append(out, o)
		if o.err != nil && st == nil {
			break
		}
	}
	return out
}

func readAll(rows *sql.Rows) ([]string, [][]any, error) {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	var out [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return cols, out, rows.Err()
}

// mrow is a row of a differential table.
type mrow struct {
	key int64
	s   sql.NullString
}

// mysqlKeys reads a table by n (NULL as -1).
func mysqlKeys(t *testing.T, db *sql.DB, tb *mtable) map[int64]mrow {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT %s, %s, %s FROM %s", tb.k, tb.n, tb.s, tb.quoted()))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[int64]mrow{}
	for rows.Next() {
		var r mrow
		var n sql.NullInt64
		if err := rows.Scan(&r.key, &n, &r.s); err != nil {
			t.Fatal(err)
		}
		k := int64(-1)
		if n.Valid {
			k = n.Int64
		}
		if _, dup := out[k]; dup {
			t.Fatalf("bad case: two rows with n=%d", k)
		}
		out[k] = r
	}
	return out
}

// rowOf returns n of the row whose key is key.
func rowOf(keys map[int64]mrow, key int64) (int64, bool) {
	for n, r := range keys {
		if r.key == key {
			return n, true
		}
	}
	return 0, false
}

// checkLastID compares LastInsertId: the same row on both sides, or, for
// a statement idsql filled that did not insert its first row as new (INSERT
// IGNORE of a duplicate then new rows, ON DUPLICATE KEY UPDATE), idsql's
// first key, which is then in no row.
func checkLastID(t *testing.T, run int, c mcase, filled bool, oa, ob outcome, keysA, keysB map[int64]mrow) {
	t.Helper()
	if !filled {
		// Passed unchanged: the server's own answer. Without
		// AUTO_INCREMENT on the idsql side, MySQL answers 0 there.
		want := ob.lastID
		if !c.table.auto && c.kind != mOther {
			want = 0
		}
		if oa.lastID != want {
			t.Errorf("run %d: LastInsertId %d, want %d (raw side %d)", run, oa.lastID, want, ob.lastID)
		}
		return
	}
	na, okA := rowOf(keysA, oa.lastID)
	nb, okB := rowOf(keysB, ob.lastID)
	rows := max(c.rows, 1)
	switch {
	case ob.lastID == 0:
		if oa.lastID != 0 {
			t.Errorf("run %d: LastInsertId %d, raw 0", run, oa.lastID)
		}
	case okA && okB:
		if na != nb && len(c.runs) == 1 {
			t.Errorf("run %d: LastInsertId names row n=%d, raw names n=%d", run, na, nb)
		}
	case !okA && okB:
		if oa.affected == int64(rows) {
			t.Errorf("run %d: LastInsertId %d is in no row; raw names n=%d and every row was inserted", run, oa.lastID, nb)
		}
	case okA && !okB:
		t.Errorf("run %d: LastInsertId names n=%d, raw's %d names no row", run, na, ob.lastID)
	}
}

// compareReturned compares RETURNING rows, keys by the row they name.
func compareReturned(t *testing.T, tb *mtable, oa, ob outcome, keysA, keysB map[int64]mrow) {
	t.Helper()
	if !slices.Equal(oa.cols, ob.cols) || len(oa.returned) != len(ob.returned) {
		t.Fatalf("RETURNING %v %v, raw %v %v", oa.cols, oa.returned, ob.cols, ob.returned)
	}
	for i := range oa.returned {
		for j, col := range oa.cols {
			va, vb := oa.returned[i][j], ob.returned[i][j]
			if strings.EqualFold(col, tb.keyName) {
				ka, _ := va.(int64)
				kb, _ := vb.(int64)
				na, okA := rowOf(keysA, ka)
				nb, okB := rowOf(keysB, kb)
				if !okA || !okB || na != nb {
					t.Errorf("RETURNING row %d: key %v (row n=%d %v), raw %v (n=%d %v)", i, va, na, okA, vb, nb, okB)
				}
				continue
			}
			if fmt.Sprint(va) != fmt.Sprint(vb) {
				t.Errorf("RETURNING row %d %s: %v, raw %v", i, col, va, vb)
			}
		}
	}
}

func errOf(out []outcome) error {
	if len(out) == 0 {
		return nil
	}
	return out[0].err
}

func mysqlErrNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// catalogFree drops the wrapper's own queries (catalog, sql_mode) from
// recorded texts.
func catalogFree(texts []string) []string {
	return slices.DeleteFunc(texts, func(s string) bool {
		return strings.HasPrefix(s, "SELECT column_name") || strings.HasPrefix(s, "SELECT @@SESSION.sql_mode")
	})
}
