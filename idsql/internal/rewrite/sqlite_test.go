package rewrite

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/idsql/idsql/internal/dialect"
)

const sqliteSchema = `
CREATE TABLE orders (id INTEGER PRIMARY KEY, user_id INTEGER, total REAL, note TEXT, "we""ird (x)" TEXT);
CREATE TABLE Items (ItemID INTEGER PRIMARY KEY, name TEXT);
CREATE TABLE ledger (kind TEXT, amount INTEGER, id INTEGER PRIMARY KEY, memo TEXT);
CREATE TABLE events (id INTEGER PRIMARY KEY, kind TEXT, note TEXT);
CREATE TABLE customers (note TEXT);
`

// TestSQLiteAccepts prepares the originals and rewrites of the SQLite cases
// (but MySQL-only syntax) on SQLite.
func TestSQLiteAccepts(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+t.TempDir()+"/t.db")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, stmt := range strings.Split(sqliteSchema, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatalf("schema: %v", err)
		}
	}
	r := newTest(t, dialect.SQLite)
	n := 0
	for _, tc := range rwCases {
		if tc.dialect != dialect.SQLite || tc.notSQLite {
			continue
		}
		for _, q := range []string{tc.in, tc.want} {
			if q == "" || q == tc.in && strings.Contains(tc.name, "no column list") {
				// SQLite, unlike PostgreSQL, refuses rows narrower than
				// the table: filling the key makes them whole.
				continue
			}
			st, err := db.PrepareContext(ctx, q)
			if err != nil {
				t.Errorf("%s: SQLite rejects %q: %v", tc.name, q, err)
				continue
			}
			st.Close()
		}
		if tc.want != "" {
			p, _ := r.Plan(ctx, tc.want, testCatalog)
			if !passes(p, tc.want) {
				t.Errorf("%s: rewrite planned again", tc.name)
			}
			n++
		}
	}
	t.Logf("%d rewritten statements prepared", n)
}
