package keyform_test

import (
	"bytes"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"
	_ "modernc.org/sqlite"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// uuidColumn is one way a database stores UUID keys: the column's type,
// the argument a UUID is written as, and how the stored value reads back
// as a UUID.
type uuidColumn struct {
	db     *sql.DB
	typ    string
	arg    func(b [16]byte) any
	read   string // SELECT expression of column id
	asUUID func(t *testing.T, v []byte) [16]byte
}

func textArg(b [16]byte) any  { return keyform.FormatUUID(b) }
func bytesArg(b [16]byte) any { return b[:] }

func parsedText(t *testing.T, v []byte) [16]byte {
	t.Helper()
	b, err := keyform.ParseUUID(string(v))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func rawBytes(t *testing.T, v []byte) [16]byte {
	t.Helper()
	if len(v) != 16 {
		t.Fatalf("a stored UUID of %d bytes", len(v))
	}
	return [16]byte(v)
}

// Each database's UUID column, in the byte order idsql writes, orders
// UUID keys as their bytes: by time, then sequence, then worker, so one
// worker's keys in the order it issued them. The keys come from three
// workers over a few ticks, inserted shuffled; each database sorts them
// with ORDER BY on the key column, and every stored value reads back as
// the key written. MariaDB's UUID type rearranges the groups of a
// version 1 UUID for storage; a version 7 one keeps its order (it sorts
// as its bytes).
func TestUUIDKeysSortInEachDatabase(t *testing.T) {
	l := snowflake.Leaf
	u, err := keyform.NewUUIDKeys(l)
	if err != nil {
		t.Fatal(err)
	}
	var keys []int64
	start := time.Now().Truncate(time.Millisecond)
	for tick := range 5 {
		for worker := range int64(3) {
			for seq := range int64(7) {
				k, err := l.Compose(snowflake.Parts{Time: start.Add(time.Duration(tick) * time.Millisecond), Worker: worker*300 + 1, Sequence: seq * 600})
				if err != nil {
					t.Fatal(err)
				}
				keys = append(keys, k)
			}
		}
	}
	uuids := make([][16]byte, len(keys))
	for i, k := range keys {
		if uuids[i], err = u.UUID(k); err != nil {
			t.Fatal(err)
		}
	}
	want := slices.Clone(uuids)
	slices.SortFunc(want, func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) })

	pg, _ := pgtest.Open(t)
	my, _ := mysqltest.Open(t)
	lite, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "uuid.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	columns := map[string]uuidColumn{
		"PostgreSQL uuid":    {pg, "uuid", textArg, "id::text", parsedText},
		"MariaDB UUID":       {my, "UUID", textArg, "CAST(id AS CHAR)", parsedText},
		"MariaDB BINARY(16)": {my, "BINARY(16)", bytesArg, "id", rawBytes},
		"SQLite BLOB":        {lite, "BLOB", bytesArg, "id", rawBytes},
		"SQLite TEXT":        {lite, "TEXT", textArg, "id", parsedText},
	}
	for name, c := range columns {
		t.Run(name, func(t *testing.T) {
			table := "uuid_order_" + strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
					return r
				}
				return -1 // "binary(16)" is table uuid_order_binary16
			}, strings.ToLower(c.typ))
			if _, err := c.db.Exec(fmt.Sprintf("CREATE TABLE %s (id %s PRIMARY KEY, n INTEGER NOT NULL)", table, c.typ)); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.db.Exec("DROP TABLE " + table) })
			order := rand.New(rand.NewPCG(3, 4)).Perm(len(uuids))
			for _, i := range order {
				q := fmt.Sprintf("INSERT INTO %s (id, n) VALUES (?, ?)", table)
				if c.db == pg {
					q = fmt.Sprintf("INSERT INTO %s (id, n) VALUES ($1, $2)", table)
				}
				if _, err := c.db.Exec(q, c.arg(uuids[i]), i); err != nil {
					t.Fatal(err)
				}
			}
			rows, err := c.db.Query(fmt.Sprintf("SELECT %s FROM %s ORDER BY id", c.read, table))
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var got [][16]byte
			for rows.Next() {
				var v []byte
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				b := c.asUUID(t, v)
				if _, err := u.Key(b); err != nil {
					t.Fatalf("a stored key read back as %s: %v", keyform.FormatUUID(b), err)
				}
				got = append(got, b)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("%d rows read back; want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("row %d in ORDER BY id is %s; as bytes it is %s", i, keyform.FormatUUID(got[i]), keyform.FormatUUID(want[i]))
				}
			}
		})
	}
}
