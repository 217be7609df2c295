package idsql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// uuidCase is one database's tables for the uuid7 tests: good are uuid7
// tables on each of its UUID column types, wrong a uuid7 table on an
// integer column; snowOnUUID, where the database has a UUID type, a
// snowflake table on one.
type uuidCase struct {
	driver, dsn string
	raw         *sql.DB
	schema      []string
	good        []string
	wrong       string
	snowOnUUID  string
	bind        func(i int) string // the i-th placeholder, from 1
}

func question(int) string { return "?" }

func dollar(i int) string { return "$" + string(rune('0'+i)) }

// openUUID opens c's tables through idsql and returns the DB, the
// configuration's UUID codec and the configuration.
func openUUID(t *testing.T, c uuidCase) (*idsql.DB, *keyform.UUIDKeys, *keyset.Config) {
	t.Helper()
	ctx := context.Background()
	for _, q := range c.schema {
		if _, err := c.raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg := &keyset.Config{Namespace: "uuid", Tables: map[string]keyset.TableConfig{c.wrong: {Strategy: keyset.UUID7}}}
	for _, g := range c.good {
		cfg.Tables[g] = keyset.TableConfig{Strategy: keyset.UUID7}
	}
	if c.snowOnUUID != "" {
		cfg.Tables[c.snowOnUUID] = keyset.TableConfig{Strategy: keyset.Snowflake}
	}
	ko := keyset.KeysOptions{Holder: tableWorkers(cfg, 3)}
	switch c.driver {
	case "postgres":
		if err := idsql.Migrate(ctx, c.raw, cfg); err != nil {
			t.Fatal(err)
		}
	case "mysql":
		// The test server does not flush every commit (see openMySQL).
		ko.Registry = registry.New(c.raw, registry.Settings{AcceptLazyCommits: true})
		if err := idsql.MigrateIn(ctx, c.raw, cfg, idsql.Stores{Workers: ko.Registry, Segments: mysqlstore.New(c.raw)}); err != nil {
			t.Fatal(err)
		}
	}
	db, err := idsql.Open(c.driver, c.dsn, cfg, idsql.Options{KeysOptions: ko})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	u, err := cfg.UUIDKeys(c.good[0])
	if err != nil || u == nil {
		t.Fatalf("UUIDKeys: %v, %v", u, err)
	}
	return db, u, cfg
}

// storedUUID reads a stored key, text or bytes, as a UUID.
func storedUUID(t *testing.T, v []byte) [16]byte {
	t.Helper()
	if len(v) == 16 {
		return [16]byte(v)
	}
	b, err := keyform.ParseUUID(string(v))
	if err != nil {
		t.Fatalf("a stored key %q: %v", v, err)
	}
	return b
}

// A uuid7 table's rows get RFC 9562 UUIDv7 keys through the wrapper, on
// each database and each UUID column type it has: every key is version 7
// of the RFC variant to google/uuid, reads back as the key of the table's
// leased worker, and none repeats; a key the caller gives is kept;
// LastInsertId names no key (a UUID is no int64). A uuid7 table on an
// integer column, and a snowflake table on a UUID column, are refused
// before any key is drawn, naming the fix.
func TestUUID7Tables(t *testing.T) {
	cases := map[string]func(t *testing.T) uuidCase{
		"SQLite": func(t *testing.T) uuidCase {
			dsn := "file:" + filepath.Join(t.TempDir(), "uuid.db") + "?_pragma=busy_timeout(10000)"
			raw, err := sql.Open("sqlite", dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return uuidCase{driver: "sqlite", dsn: dsn, raw: raw, bind: question,
				schema: []string{"CREATE TABLE ub (id BLOB PRIMARY KEY, note TEXT)", "CREATE TABLE ut (id TEXT PRIMARY KEY, note TEXT)",
					"CREATE TABLE ui (id INTEGER PRIMARY KEY, note TEXT)"},
				good: []string{"ub", "ut"}, wrong: "ui"}
		},
		"PostgreSQL": func(t *testing.T) uuidCase {
			raw, dsn := pgtest.Open(t)
			return uuidCase{driver: "postgres", dsn: dsn, raw: raw, bind: dollar,
				schema: []string{"CREATE TABLE uu (id uuid PRIMARY KEY, note text)", "CREATE TABLE ui (id bigint PRIMARY KEY, note text)",
					"CREATE TABLE su (id uuid PRIMARY KEY, note text)"},
				good: []string{"uu"}, wrong: "ui", snowOnUUID: "su"}
		},
		"MariaDB": func(t *testing.T) uuidCase {
			dsn := mysqltest.Database(t)
			raw, err := sql.Open("mysql", dsn)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { raw.Close() })
			return uuidCase{driver: "mysql", dsn: dsn, raw: raw, bind: question,
				schema: []string{"CREATE TABLE uu (id UUID PRIMARY KEY, note TEXT)", "CREATE TABLE ub (id BINARY(16) PRIMARY KEY, note TEXT)",
					"CREATE TABLE ui (id BIGINT PRIMARY KEY, note TEXT)", "CREATE TABLE su (id UUID PRIMARY KEY, note TEXT)"},
				good: []string{"uu", "ub"}, wrong: "ui", snowOnUUID: "su"}
		},
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			c := open(t)
			db, u, cfg := openUUID(t, c)
			b1, b2 := c.bind(1), c.bind(2)
			for _, table := range c.good {
				res, err := db.ExecContext(ctx, "INSERT INTO "+table+" (note) VALUES ("+b1+")", "one")
				if err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				if id, err := res.LastInsertId(); err == nil && id != 0 {
					t.Errorf("%s: LastInsertId %d, a number no row holds", table, id)
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (note) VALUES ("+b1+"), ("+b2+"), ('three')", "two", "two'"); err != nil {
					t.Fatalf("%s: %v", table, err)
				}
				mine := uuid.New()
				arg := any(mine.String())
				if table == "ub" {
					arg = mine[:]
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, note) VALUES ("+b1+", "+b2+")", arg, "mine"); err != nil {
					t.Fatalf("%s, the caller's key: %v", table, err)
				}
				// The nil UUID, NULL and DEFAULT mean "fill it".
				for _, zero := range []any{uuid.Nil, uuid.Nil.String(), nil} {
					if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, note) VALUES ("+b1+", "+b2+")", zero, "zero"); err != nil {
						t.Fatalf("%s, key %v: %v", table, zero, err)
					}
				}
				if _, err := db.ExecContext(ctx, "INSERT INTO "+table+" (id, note) VALUES (DEFAULT, 'zero')"); err != nil {
					t.Fatalf("%s, key DEFAULT: %v", table, err)
				}
				// NamedExec writes each row's key back: into a 16-byte
				// array type, a string, a []byte, a map.
				type arrayRow struct {
					ID   uuid.UUID `db:"id"`
					Note string    `db:"note"`
				}
				type textRow struct {
					ID   *string `db:"id"`
					Note string  `db:"note"`
				}
				type bytesRow struct {
					ID   []byte `db:"id"`
					Note string `db:"note"`
				}
				a, tx, by := arrayRow{Note: "named"}, textRow{Note: "named"}, bytesRow{Note: "named"}
				m := map[string]any{"note": "named"}
				for _, arg := range []any{&a, &tx, &by, m} {
					if _, err := db.NamedExecContext(ctx, "INSERT INTO "+table+" (note) VALUES (:note)", arg); err != nil {
						t.Fatalf("%s: NamedExec: %v", table, err)
					}
				}
				// A statement that lists the key with the nil UUID: filled, and
				// written back.
				listed := arrayRow{Note: "named"}
				if _, err := db.NamedExecContext(ctx, "INSERT INTO "+table+" (id, note) VALUES (:id, :note)", &listed); err != nil {
					t.Fatalf("%s: NamedExec listing the key: %v", table, err)
				}
				var written [][16]byte
				written = append(written, a.ID, listed.ID)
				if tx.ID == nil {
					t.Fatalf("%s: NamedExec wrote no key into a *string", table)
				}
				for _, s := range []string{*tx.ID, fmt.Sprint(m["id"])} {
					b, err := keyform.ParseUUID(s)
					if err != nil {
						t.Fatalf("%s: NamedExec wrote back %q: %v", table, s, err)
					}
					written = append(written, b)
				}
				if len(by.ID) != 16 {
					t.Fatalf("%s: NamedExec wrote %d bytes into a []byte", table, len(by.ID))
				}
				written = append(written, [16]byte(by.ID))
				for _, b := range written {
					if _, err := u.Key(b); err != nil {
						t.Errorf("%s: NamedExec wrote back %s: %v", table, keyform.FormatUUID(b), err)
					}
				}
				rows, err := c.raw.QueryContext(ctx, "SELECT id, note FROM "+table)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[[16]byte]bool{}
				named := map[[16]byte]bool{}
				for rows.Next() {
					var v []byte
					var note string
					if err := rows.Scan(&v, &note); err != nil {
						t.Fatal(err)
					}
					b := storedUUID(t, v)
					if seen[b] {
						t.Fatalf("%s: key %s twice", table, keyform.FormatUUID(b))
					}
					seen[b] = true
					if note == "named" {
						named[b] = true
					}
					if note == "mine" {
						if b != mine {
							t.Errorf("%s: the caller's key %s was stored as %s", table, mine, keyform.FormatUUID(b))
						}
						continue
					}
					if g := uuid.UUID(b); g.Version() != 7 || g.Variant() != uuid.RFC4122 {
						t.Errorf("%s: key %s is version %d, variant %s", table, g, g.Version(), g.Variant())
					}
					if _, err := u.Key(b); err != nil {
						t.Errorf("%s: key %s does not read back: %v", table, keyform.FormatUUID(b), err)
					}
				}
				rows.Close()
				// Each key traces to its table: read from its text as the
				// CLI and the server read IDs, then looked up in the
				// worker table (not on SQLite, whose leases here are the
				// static holder's alone).
				if c.driver != "sqlite" {
					codecs, err := cfg.Codecs()
					if err != nil {
						t.Fatal(err)
					}
					for b := range named {
						key, _, err := codecs.ParseKey(strings.ToUpper(keyform.FormatUUID(b)))
						if err != nil {
							t.Fatal(err)
						}
						o, err := idsql.Lookup(ctx, c.raw, cfg, key)
						if err != nil || len(o) != 1 || o[0].Table != table || o[0].Strategy != keyset.UUID7 {
							t.Errorf("%s: Lookup of %s (key %d): %v, %v; want table %s, strategy uuid7", table, keyform.FormatUUID(b), key, o, err, table)
						}
					}
				}
				if len(seen) != 14 {
					t.Errorf("%s: %d rows; want 14", table, len(seen))
				}
				for _, b := range written {
					if !named[b] {
						t.Errorf("%s: NamedExec wrote back %s, which no row of its statements holds", table, keyform.FormatUUID(b))
					}
				}
			}
			_, err := db.ExecContext(ctx, "INSERT INTO "+c.wrong+" (note) VALUES ("+b1+")", "x")
			if !errors.Is(err, idsql.ErrKeyType) || !strings.Contains(err.Error(), "UUID") {
				t.Errorf("uuid7 table on an integer column: %v; want ErrKeyType naming the UUID types", err)
			}
			if c.snowOnUUID != "" {
				_, err := db.ExecContext(ctx, "INSERT INTO "+c.snowOnUUID+" (note) VALUES ("+b1+")", "x")
				if !errors.Is(err, idsql.ErrKeyType) || !strings.Contains(err.Error(), "strategy uuid7") {
					t.Errorf("snowflake table on a UUID column: %v; want ErrKeyType naming strategy uuid7", err)
				}
			}
		})
	}
}

// On PostgreSQL, RETURNING gives a uuid7 table's keys back.
func TestUUID7Returning(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	db, u, _ := openUUID(t, uuidCase{driver: "postgres", dsn: dsn, raw: raw, bind: dollar,
		schema: []string{"CREATE TABLE uu (id uuid PRIMARY KEY, note text)", "CREATE TABLE ui (id bigint PRIMARY KEY, note text)"},
		good:   []string{"uu"}, wrong: "ui"})
	var got string
	if err := db.QueryRowContext(context.Background(), "INSERT INTO uu (note) VALUES ($1) RETURNING id", "r").Scan(&got); err != nil {
		t.Fatal(err)
	}
	b, err := keyform.ParseUUID(got)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Key(b); err != nil {
		t.Errorf("RETURNING id gave %s: %v", got, err)
	}
	var stored string
	if err := raw.QueryRow("SELECT id::text FROM uu WHERE note = 'r'").Scan(&stored); err != nil || stored != got {
		t.Errorf("stored %s, %v; RETURNING said %s", stored, err, got)
	}
}

// A uuid7 table that keeps zero keys (fill_zero: false) still has
// NamedExec's rows whose key is the nil UUID given a new key before they
// bind (and written back); a row's own UUID is kept.
func TestUUID7NamedExecKeepsZero(t *testing.T) {
	ctx := context.Background()
	dsn := "file:" + filepath.Join(t.TempDir(), "uuid.db") + "?_pragma=busy_timeout(10000)"
	raw, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	if _, err := raw.Exec("CREATE TABLE uk (id TEXT PRIMARY KEY, note TEXT)"); err != nil {
		t.Fatal(err)
	}
	off := false
	cfg := &keyset.Config{Namespace: "uuid", Tables: map[string]keyset.TableConfig{"uk": {Strategy: keyset.UUID7, FillZero: &off}}}
	db, err := idsql.Open("sqlite", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: tableWorkers(cfg, 3)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	type row struct {
		ID   uuid.UUID `db:"id"`
		Note string    `db:"note"`
	}
	mine := uuid.New()
	rows := []row{{Note: "new"}, {ID: mine, Note: "mine"}}
	if _, err := db.NamedExecContext(ctx, "INSERT INTO uk (id, note) VALUES (:id, :note)", rows); err != nil {
		t.Fatal(err)
	}
	u, err := cfg.UUIDKeys("uk")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := u.Key(rows[0].ID); err != nil || rows[1].ID != mine {
		t.Fatalf("rows after NamedExec: %v, %v; want an idsql key, then the caller's %s", rows[0].ID, rows[1].ID, mine)
	}
	var stored string
	if err := raw.QueryRow("SELECT id FROM uk WHERE note = 'new'").Scan(&stored); err != nil || stored != rows[0].ID.String() {
		t.Errorf("stored %q, %v; NamedExec wrote back %s", stored, err, rows[0].ID)
	}
}
