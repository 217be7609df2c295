package main

import (
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/pgtest"
)

// TestDecodeShape decodes a key of a table with a spread shape: with
// --table, or its text form, the shape is undone; a bare decimal ID is
// refused, since the shapes read it differently.
func TestDecodeShape(t *testing.T) {
	cfgPath := writeConfig(t, `namespace: shapes
layout: leaf
tables:
  orders: {strategy: snowflake, shape: {spread: reverse}, text: {encoding: base62, prefix: ord_}}
  carts: {strategy: segment, app: {id: 2, bits: 3}, shape: {spread: shard, bits: 5}}
  users: {strategy: segment, shape: {spread: reverse}}
`)
	cfg, err := keyset.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	made, _ := snowflake.Leaf.Compose(snowflake.Parts{Time: time.Now().Add(-time.Hour), Worker: 5, Sequence: 7})
	orders, err := cfg.Codec("orders")
	if err != nil {
		t.Fatal(err)
	}
	k, _ := orders.Shape(made)
	code, out, stderr := runCmd(t, "decode", "--config", cfgPath, "--table", "orders", itoa(k))
	if code != 0 || !strings.Contains(out, "worker    5\n  sequence  7\n") || !strings.Contains(out, "shape     {spread: reverse} of table orders: key "+itoa(made)+" before it") {
		t.Fatalf("decode --table orders %d: exit %d\n%s%s", k, code, out, stderr)
	}
	text := cfg.Tables["orders"].Text.Format(k)
	if code, out, stderr = runCmd(t, "decode", "--config", cfgPath, text); code != 0 || !strings.Contains(out, "worker    5\n") {
		t.Fatalf("decode %s: exit %d\n%s%s", text, code, out, stderr)
	}
	if code, _, stderr = runCmd(t, "decode", "--config", cfgPath, itoa(k)); code != 1 || !strings.Contains(stderr, "say whose key it is with --table T") {
		t.Errorf("decode of a bare decimal with a spread table: exit %d, %q", code, stderr)
	}
	carts, err := cfg.Codec("carts")
	if err != nil {
		t.Fatal(err)
	}
	gk, _ := cfg.Tables["carts"].Gene().Compose(9, 0)
	ck, _ := carts.Shape(gk)
	if code, out, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "carts", itoa(ck)); code != 0 || !strings.Contains(out, "index     9\n") {
		t.Errorf("decode --table carts %d: exit %d\n%s%s", ck, code, out, stderr)
	}
	if code, _, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "carts", itoa(gk)); code != 1 || !strings.Contains(stderr, "not a key of this shape") {
		t.Errorf("decode --table carts of an unshaped key: exit %d, %q", code, stderr)
	}
	// A segment table without shard or app bits: the shape is undone to
	// the counter's number. Its keys carry no time: bounds says so, and
	// does not send the user to decode for one.
	users, err := cfg.Codec("users")
	if err != nil {
		t.Fatal(err)
	}
	uk, _ := users.Shape(41)
	if code, out, stderr = runCmd(t, "decode", "--config", cfgPath, "--table", "users", itoa(uk)); code != 0 ||
		!strings.Contains(out, "shape     {spread: reverse}: key 41 before it\n  index     41\n") || strings.Contains(out, "shard") {
		t.Errorf("decode --table users %d: exit %d\n%s%s", uk, code, out, stderr)
	}
	code, _, stderr = runCmd(t, "bounds", "--config", cfgPath, "--table", "users", "--from", "2026-01-01", "--to", "2026-02-01")
	if code != 1 || !strings.Contains(stderr, "users is a segment table") || strings.Contains(stderr, "decode still gives") {
		t.Errorf("bounds --table users (spread segment): exit %d, %q", code, stderr)
	}
}

// TestMigrateReshape records shapes with migrate, refuses a changed one,
// and lets --reshape change it only for a table that issued no key.
func TestMigrateReshape(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	if _, err := raw.Exec("CREATE TABLE orders (id BIGINT PRIMARY KEY); CREATE TABLE users (id BIGINT PRIMARY KEY); INSERT INTO orders VALUES (12)"); err != nil {
		t.Fatal(err)
	}
	write := func(orders, users string) string {
		return writeConfig(t, "namespace: shapes\ntables:\n  orders: {strategy: segment, shape: "+orders+"}\n  users: {strategy: segment, shape: "+users+"}\n")
	}
	if code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", write("ordered", "{spread: reverse}")); code != 0 {
		t.Fatalf("migrate: exit %d\n%s%s", code, out, stderr)
	}
	changed := write("{spread: reverse}", "{spread: shard, bits: 4}")
	code, _, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", changed)
	if code == 0 || !strings.Contains(stderr, "configured with shape {spread: reverse}, but its keys were issued with shape ordered") {
		t.Fatalf("migrate with orders reshaped: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCmd(t, "migrate", "--dsn", dsn, "--config", changed, "--reshape", "orders")
	if code == 0 || !strings.Contains(stderr, "the table has issued keys (the table holds rows)") {
		t.Fatalf("migrate --reshape orders (it holds rows): exit %d, %q", code, stderr)
	}
	// users issued nothing: its record changes; orders' still refuses.
	code, out, stderr := runCmd(t, "migrate", "--dsn", dsn, "--config", changed, "--reshape", "users")
	if code == 0 || !strings.Contains(out, "table users: shape {spread: hashed, bits: 4} recorded") || !strings.Contains(stderr, "table orders") {
		t.Fatalf("migrate --reshape users: exit %d\n%s%s", code, out, stderr)
	}
	// Recorded under the spread's first name (shard, the configuration
	// above), matched under its current one.
	if code, out, stderr = runCmd(t, "migrate", "--dsn", dsn, "--config", write("ordered", "{spread: hashed, bits: 4}")); code != 0 {
		t.Fatalf("migrate with users reshaped: exit %d\n%s%s", code, out, stderr)
	}
}
