package idsql_test

import (
	"testing"

	"github.com/idsql/idsql/idsql/keyset"
)

// TestMySQLUpsertFoundRows: with clientFoundRows, MariaDB counts a row an
// upsert left as it was as 1, like a row it inserted, so a one-row
// upsert's generated key is not known to be written: LastInsertId answers
// 0 (the server's), and NamedExec writes no key back. (Without it the
// conformance suite, idsql/pgxid's TestFrontDoors, shows the insert's key.)
func TestMySQLUpsertFoundRows(t *testing.T) {
	cfg := &keyset.Config{Namespace: "found", Tables: map[string]keyset.TableConfig{"users": {Strategy: keyset.Snowflake}}}
	m := openMySQL(t, []string{"CREATE TABLE users (id BIGINT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL UNIQUE, v INT)"},
		cfg, map[string]string{"clientFoundRows": "true"})
	const upsert = "INSERT INTO users (name, v) VALUES (?, ?) ON DUPLICATE KEY UPDATE v = VALUES(v)"
	for i, c := range []struct {
		name    string
		v       int
		rows    int64
		written bool // the row was inserted
	}{
		{"a", 1, 1, true}, // inserted: 1, but found rows say 1 for an unchanged row too
		{"a", 1, 1, false},
		{"a", 2, 2, false},
	} {
		res, err := m.db.Exec(upsert, c.name, c.v)
		if err != nil {
			t.Fatal(err)
		}
		n, _ := res.RowsAffected()
		id, _ := res.LastInsertId()
		if n != c.rows || id != 0 {
			t.Errorf("upsert %d: %d rows, LastInsertId %d; want %d rows and 0 (found rows: an insert is not told from an unchanged row)", i+1, n, id, c.rows)
		}
	}
	if keys := queryInts(t, m.raw, "SELECT id FROM users"); len(keys) != 1 || keys[0] < 1<<40 {
		t.Errorf("keys %v, want one generated key", keys)
	}
	u := struct {
		ID   int64  `db:"id"`
		Name string `db:"name"`
		V    int    `db:"v"`
	}{Name: "b", V: 1}
	if _, err := m.db.NamedExec("INSERT INTO users (name, v) VALUES (:name, :v) ON DUPLICATE KEY UPDATE v = VALUES(v)", &u); err != nil {
		t.Fatal(err)
	}
	if u.ID != 0 {
		t.Errorf("NamedExec wrote back %d, a key not known to be written", u.ID)
	}
}
