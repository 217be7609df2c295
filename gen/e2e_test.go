package gen_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/gen"
	"github.com/idsql/idsql/internal/gomodtest"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestEndToEnd generates helpers into a temporary module, compiles it
// against this checkout (a replace directive) and runs it against real
// PostgreSQL through idsql: keys from NewOrderID inserted explicitly and
// keys the wrapper filled decode to the right table, worker and time.
func TestEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs a program; skipped with -short")
	}
	_, dsn := pgtest.Open(t)
	m := gomodtest.New(t, "e2e", "require github.com/idsql/idsql v0.0.0\n\n")
	dir := m.Dir
	m.Write("idsql.yaml", e2eConfig)
	m.Write("main.go", e2eMain)
	if err := gen.WriteFile(filepath.Join(dir, "idsql.yaml"), filepath.Join(dir, "idsql_gen.go"),
		gen.Options{Package: "main", Source: "idsql.yaml"}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "run", ".")
	cmd.Dir = dir
	cmd.Env = gomodtest.Env("E2E_DSN=" + dsn)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("generated program failed: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "PASS\n") {
		t.Fatalf("generated program did not pass:\n%s", out.String())
	}
	t.Logf("generated program:\n%s", out.String())
}

const e2eConfig = `namespace: e2e
layout: leaf
tables:
  orders: {strategy: snowflake, text: {encoding: base62, prefix: ord_}}
  order_items: {strategy: snowflake, cached: true}
  users: {strategy: segment, step: 10, text: {encoding: base58, prefix: usr_}}
  carts: {strategy: segment, step: 10, shard: {column: user_id, bits: 4}, app: {id: 2, bits: 3}}
  payments: {strategy: snowflake, text: {encoding: base62, prefix: pay_, key_env: E2E_PAY_KEY}}
  accounts: {strategy: snowflake, shape: {spread: reverse}, text: {encoding: typeid, prefix: account}}
`

// e2eMain is the program the test runs next to the generated file. It
// prints what it checked and ends with PASS, or exits 1 at the first
// failure.
const e2eMain = `package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	_ "github.com/lib/pq"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

const worker = 3

func fail(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
	os.Exit(1)
}

func must(err error, what string) {
	if err != nil {
		fail("%s: %v", what, err)
	}
}

func main() {
	ctx := context.Background()
	dsn := os.Getenv("E2E_DSN")
	cfg, err := keyset.Load("idsql.yaml")
	must(err, "load")
	must(CheckConfig(cfg), "CheckConfig")

	raw, err := sql.Open("postgres", dsn)
	must(err, "open raw")
	defer raw.Close()
	_, err = raw.ExecContext(ctx, ` + "`" + `
		CREATE TABLE orders (id bigint PRIMARY KEY, note text NOT NULL);
		CREATE TABLE users (id bigint PRIMARY KEY, name text NOT NULL);
		CREATE TABLE order_items (id bigint PRIMARY KEY, order_id bigint NOT NULL, user_id bigint);
		CREATE TABLE carts (id bigint PRIMARY KEY, user_id bigint NOT NULL);
		CREATE TABLE payments (id bigint PRIMARY KEY, amount int NOT NULL);
		CREATE TABLE accounts (id bigint PRIMARY KEY, name text NOT NULL)` + "`" + `)
	must(err, "create tables")
	must(idsql.Migrate(ctx, raw, cfg), "migrate")
	db, err := idsql.Open("postgres", dsn, cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: holder.Static(map[string]int64{"orders": worker, "order_items": worker + 1, "payments": worker + 2, "accounts": worker + 3})}})
	must(err, "open idsql")
	defer db.Close()
	start := time.Now()

	// A key before inserting, from the wrapper's own generators (Keys and DB
	// are both an IDSource), then inserted explicitly.
	oid, err := NewOrderID(ctx, db.Keys())
	must(err, "NewOrderID(Keys)")
	_, err = db.ExecContext(ctx, "INSERT INTO orders (id, note) VALUES ($1, $2)", oid, "explicit")
	must(err, "insert explicit order")
	oid2, err := NewOrderID(ctx, db)
	must(err, "NewOrderID(DB)")
	_, err = db.ExecContext(ctx, "INSERT INTO orders (id, note) VALUES ($1, $2)", oid2, "explicit-db")
	must(err, "insert explicit order 2")
	batch, err := NewOrderIDs(ctx, db.Keys(), 3)
	must(err, "NewOrderIDs")
	if len(batch) != 3 || batch[0] >= batch[1] || batch[1] >= batch[2] {
		fail("NewOrderIDs = %v", batch)
	}
	// A key the wrapper fills.
	res, err := db.ExecContext(ctx, "INSERT INTO orders (note) VALUES ($1)", "filled")
	must(err, "insert filled order")
	filled, err := res.LastInsertId()
	must(err, "LastInsertId")
	// NamedExec writes the filled key back into a generated-type field.
	row := struct {
		ID   OrderID ` + "`db:\"id\"`" + `
		Note string  ` + "`db:\"note\"`" + `
	}{Note: "named"}
	_, err = db.NamedExecContext(ctx, "INSERT INTO orders (note) VALUES (:note)", &row)
	must(err, "NamedExec")
	if row.ID <= 0 {
		fail("NamedExec left ID %d", row.ID)
	}

	// Segment keys: explicit and filled, and child rows referencing both kinds.
	uid, err := NewUserID(ctx, db.Keys())
	must(err, "NewUserID")
	_, err = db.ExecContext(ctx, "INSERT INTO users (id, name) VALUES ($1, $2)", uid, "ann")
	must(err, "insert explicit user")
	res, err = db.ExecContext(ctx, "INSERT INTO users (name) VALUES ($1)", "bob")
	must(err, "insert filled user")
	uid2, _ := res.LastInsertId()
	res, err = db.ExecContext(ctx, "INSERT INTO order_items (order_id, user_id) VALUES ($1, $2)", oid, uid)
	must(err, "insert item")
	item, _ := res.LastInsertId()

	// Read the orders back through Scan and check every key.
	rows, err := raw.QueryContext(ctx, "SELECT id, note FROM orders ORDER BY note")
	must(err, "select orders")
	seen := map[OrderID]string{}
	for rows.Next() {
		var id OrderID
		var note string
		must(rows.Scan(&id, &note), "scan order")
		seen[id] = note
	}
	must(rows.Err(), "rows")
	want := map[OrderID]string{oid: "explicit", oid2: "explicit-db", OrderID(filled): "filled", row.ID: "named"}
	if len(seen) != len(want) {
		fail("orders %v, want %v", seen, want)
	}
	now := time.Now()
	for id, note := range want {
		if seen[id] != note {
			fail("order %d: note %q, want %q", id, seen[id], note)
		}
		checkSnowflake(ctx, raw, cfg, int64(id), "OrderID", "orders", start, now)
		fmt.Printf("order %-11s %d decodes and looks up as OrderID\n", note, id)
	}
	checkSnowflake(ctx, raw, cfg, item, "OrderItemID", "order_items", start, now)
	fmt.Printf("order item %d decodes and looks up as OrderItemID\n", item)
	for _, id := range []int64{int64(uid), uid2} {
		name, err := LookupTable(ctx, raw, cfg, id)
		if err != nil || name != "UserID" {
			fail("LookupTable(user %d) = %q, %v", id, name, err)
		}
		o, err := UserID(id).Origin(ctx, raw, cfg)
		if err != nil || o.Table != "users" || id < o.Range.First || id > o.Range.Last {
			fail("UserID(%d).Origin = %+v, %v", id, o, err)
		}
		fmt.Printf("user %d looks up as UserID, range %d..%d\n", id, o.Range.First, o.Range.Last)
	}
	// Text forms: users are written usr_ and 11 base58 digits, orders ord_
	// and 11 base62 digits, in String, text and JSON, and parse back; an
	// order's text is not a user's.
	for _, id := range []UserID{uid, UserID(uid2)} {
		s := id.String()
		if !strings.HasPrefix(s, "usr_") || len(s) != 15 {
			fail("UserID(%d).String() = %q, want usr_ and 11 base58 digits", id, s)
		}
		back, err := ParseUserID(s)
		if err != nil || back != id {
			fail("ParseUserID(%q) = %d, %v; want %d", s, back, err, id)
		}
		j, err := json.Marshal(struct{ User UserID }{id})
		must(err, "marshal user")
		var v struct{ User UserID }
		if string(j) != ` + "`" + `{"User":"` + "`" + `+s+` + "`" + `"}` + "`" + ` || json.Unmarshal(j, &v) != nil || v.User != id {
			fail("JSON of UserID %d: %s, read back %d", id, j, v.User)
		}
		fmt.Printf("user %d is %s in text and JSON\n", id, s)
	}
	if s := oid.String(); !strings.HasPrefix(s, "ord_") || len(s) != 15 {
		fail("OrderID(%d).String() = %q", oid, s)
	} else if _, err := ParseUserID(s); !errors.Is(err, ErrInvalidID) || !strings.Contains(err.Error(), "usr_") {
		fail("ParseUserID(%q) of an order = %v, want ErrInvalidID naming the prefix usr_", s, err)
	} else if back, err := ParseOrderID(s); err != nil || back != oid {
		fail("ParseOrderID(%q) = %d, %v", s, back, err)
	}
	fmt.Println("an order's text does not parse as a UserID")

	// Keyed text: payments filled by the wrapper are written pay_, a
	// version digit and 16 base62 characters under the secret in
	// E2E_PAY_KEY; consecutive keys give unrelated texts, which parse back
	// only while the secret is set.
	os.Setenv("E2E_PAY_KEY", "1:e2e-secret-0123456789abcdef")
	_, err = db.ExecContext(ctx, "INSERT INTO payments (amount) VALUES (1), (2)")
	must(err, "insert payments")
	var pays []PaymentID
	rows, err = raw.QueryContext(ctx, "SELECT id FROM payments ORDER BY id")
	must(err, "select payments")
	for rows.Next() {
		var p PaymentID
		must(rows.Scan(&p), "scan payment")
		pays = append(pays, p)
	}
	must(rows.Err(), "payments rows")
	if len(pays) != 2 {
		fail("payments: %v", pays)
	}
	p0, p1 := pays[0].String(), pays[1].String()
	if !strings.HasPrefix(p0, "pay_1") || len(p0) != 21 || p0[5:8] == p1[5:8] {
		fail("payments %d and %d are %q and %q: want pay_1 and 16 unrelated base62 characters", pays[0], pays[1], p0, p1)
	}
	for i, s := range []string{p0, p1} {
		back, err := ParsePaymentID(s)
		if err != nil || back != pays[i] {
			fail("ParsePaymentID(%q) = %d, %v; want %d", s, back, err, pays[i])
		}
	}
	fmt.Printf("payments %d and %d are %s and %s\n", pays[0], pays[1], p0, p1)
	os.Unsetenv("E2E_PAY_KEY")
	if _, err := json.Marshal(pays[0]); !errors.Is(err, keyset.ErrTextKey) || !strings.Contains(err.Error(), "E2E_PAY_KEY") {
		fail("JSON of a payment without E2E_PAY_KEY: %v", err)
	}
	if _, err := ParsePaymentID(p0); !errors.Is(err, keyset.ErrTextKey) {
		fail("ParsePaymentID without E2E_PAY_KEY: %v", err)
	}
	fmt.Println("without E2E_PAY_KEY a payment's text is neither written nor read")

	// TypeID: an account is account_ and 26 base32 characters of a UUIDv7
	// whose time is the key's, in String and JSON, and parses back. The
	// table is spread (its time field reversed): the TypeID carries the key
	// before its shape, and parses back to the stored key.
	res, err = db.ExecContext(ctx, "INSERT INTO accounts (name) VALUES ($1)", "ann")
	must(err, "insert account")
	var acc AccountID
	must(raw.QueryRowContext(ctx, "SELECT id FROM accounts").Scan(&acc), "select account")
	as := acc.String()
	ap, err := acc.Decode()
	must(err, "decode account")
	if !strings.HasPrefix(as, "account_") || len(as) != 34 || ap.Worker != worker+3 ||
		ap.Time.Before(start.Add(-time.Second)) || ap.Time.After(time.Now().Add(time.Second)) {
		fail("account %d is %q, worker %d, time %s", acc, as, ap.Worker, ap.Time)
	}
	var ms int64
	for _, c := range as[8:18] { // the first 10 characters: 2 zero bits, then the UUID's 48 bits of time
		ms = ms<<5 | int64(strings.IndexRune("0123456789abcdefghjkmnpqrstvwxyz", c))
	}
	if ms != ap.Time.UnixMilli() {
		fail("account %q: UUIDv7 time %d ms, key time %d ms", as, ms, ap.Time.UnixMilli())
	}
	if back, err := ParseAccountID(as); err != nil || back != acc {
		fail("ParseAccountID(%q) = %d, %v", as, back, err)
	}
	j, err := json.Marshal(acc)
	must(err, "marshal account")
	var acc2 AccountID
	if string(j) != ` + "`" + `"` + "`" + `+as+` + "`" + `"` + "`" + ` || json.Unmarshal(j, &acc2) != nil || acc2 != acc {
		fail("JSON of account %d: %s, read back %d", acc, j, acc2)
	}
	fmt.Printf("account %d is %s, its UUIDv7 time %s\n", acc, as, ap.Time.UTC().Format(time.RFC3339Nano))
	if _, err := LookupTable(ctx, raw, cfg, 1<<40); !errors.Is(err, idsql.ErrNotFound) {
		fail("LookupTable(unknown) = %v, want ErrNotFound", err)
	}

	// Shard-gene keys: filled per row from user_id, or made for a value
	// first; each carries its user's shard and the app ID.
	res, err = db.ExecContext(ctx, "INSERT INTO carts (user_id) VALUES ($1), ($2)", 17, 18)
	must(err, "insert carts")
	cid, err := NewCartIDFor(ctx, db.Keys(), int64(99))
	must(err, "NewCartIDFor")
	_, err = db.ExecContext(ctx, "INSERT INTO carts (id, user_id) VALUES ($1, $2)", cid, 99)
	must(err, "insert explicit cart")
	rows, err = raw.QueryContext(ctx, "SELECT id, user_id FROM carts")
	must(err, "select carts")
	for rows.Next() {
		var id CartID
		var user int64
		must(rows.Scan(&id, &user), "scan cart")
		shard, err := CartIDShardOf(user)
		must(err, "CartIDShardOf")
		p, err := DecodeCartID(int64(id))
		if err != nil || id.Shard() != shard || p.Shard != shard || id.App() != 2 {
			fail("cart %d of user %d: shard %d (parts %+v, %v), want %d, app 2", id, user, id.Shard(), p, err, shard)
		}
		if name, err := LookupTable(ctx, raw, cfg, int64(id)); err != nil || name != "CartID" {
			fail("LookupTable(cart %d) = %q, %v", id, name, err)
		}
		fmt.Printf("cart %d of user %d: shard %d, app %d, index %d\n", id, user, id.Shard(), id.App(), p.Index)
	}
	must(rows.Err(), "rows")

	// NULL handling.
	var plain OrderID
	if err := raw.QueryRowContext(ctx, "SELECT NULL::bigint").Scan(&plain); !errors.Is(err, ErrInvalidID) {
		fail("NULL into OrderID: %v", err)
	}
	var ptr *OrderID = &plain
	must(raw.QueryRowContext(ctx, "SELECT NULL::bigint").Scan(&ptr), "NULL into *OrderID")
	var null sql.Null[OrderID]
	must(raw.QueryRowContext(ctx, "SELECT NULL::bigint").Scan(&null), "NULL into sql.Null")
	if ptr != nil || null.Valid {
		fail("NULL scanned as %v, %+v", ptr, null)
	}
	fmt.Println("NULL: error into OrderID, nil into *OrderID, invalid sql.Null[OrderID]")

	// A configuration changed without regenerating is refused.
	changed := *cfg
	changed.Layout = keyset.LayoutConfig{Preset: "sony"}
	if err := CheckConfig(&changed); err == nil {
		fail("CheckConfig accepted another layout")
	} else if _, lerr := LookupTable(ctx, raw, &changed, int64(oid)); lerr == nil {
		fail("LookupTable accepted another layout")
	} else {
		fmt.Println("changed layout:", err)
	}
	fmt.Println("PASS")
}

func checkSnowflake(ctx context.Context, raw *sql.DB, cfg *keyset.Config, id int64, typ, table string, start, now time.Time) {
	var (
		p   struct{ Time time.Time; Worker int64 }
		err error
	)
	switch typ {
	case "OrderID":
		var d OrderIDParts
		d, err = OrderID(id).Decode()
		p.Time, p.Worker = d.Time, d.Worker
	case "OrderItemID":
		var d OrderItemIDParts
		d, err = DecodeOrderItemID(id)
		p.Time, p.Worker = d.Time, d.Worker
	}
	must(err, fmt.Sprintf("decode %s %d", typ, id))
	want := int64(worker) // each table has a worker ID of its own
	if typ == "OrderItemID" {
		want = worker + 1
	}
	if p.Worker != want {
		fail("%s %d: worker %d, want %d", typ, id, p.Worker, want)
	}
	// Cached tables may hand out IDs of ticks filled up to a second ahead.
	if p.Time.Before(start.Add(-time.Second)) || p.Time.After(now.Add(2*time.Second)) {
		fail("%s %d: time %v outside [%v, %v]", typ, id, p.Time, start, now)
	}
	name, err := LookupTable(ctx, raw, cfg, id)
	if err != nil || name != typ {
		fail("LookupTable(%d) = %q, %v; want %s", id, name, err, typ)
	}
	o, err := OrderID(id).Origin(ctx, raw, cfg)
	if typ == "OrderID" && (err != nil || o.Table != table || o.Lease.WorkerID != worker) {
		fail("Origin(%d) = %+v, %v", id, o, err)
	}
}
`
