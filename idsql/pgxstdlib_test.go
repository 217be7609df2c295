package idsql_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/internal/pgtest"
)

// Through pgx's database/sql driver, pgx.NamedArgs are rewritten by the
// driver after the wrapper has numbered the key's parameter: the key's $n
// would then name one of the caller's values, and the row would be written
// with that value as its key. The wrapper refuses such a statement, naming
// the table and the way out; $n statements get their keys as with lib/pq.
func TestPgxStdlibNamedArgsRefused(t *testing.T) {
	raw, dsn := pgtest.Open(t)
	ctx := context.Background()
	if _, err := raw.ExecContext(ctx, `CREATE TABLE refs (id bigint PRIMARY KEY, ref bigint)`); err != nil {
		t.Fatal(err)
	}
	cfg := &keyset.Config{Namespace: "stdlib", Tables: map[string]keyset.TableConfig{"refs": {Strategy: keyset.Snowflake}}}
	if err := idsql.Migrate(ctx, raw, cfg); err != nil {
		t.Fatal(err)
	}
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	c, err := idsql.NewConnector(stdlib.GetConnector(*cc), cfg, idsql.Options{KeysOptions: keyset.KeysOptions{Holder: holder.Fixed(3)}})
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	defer db.Close()

	for _, args := range [][]any{
		{pgx.NamedArgs{"r": 42}},
		{pgx.StrictNamedArgs{"r": 42}},
		{pgx.QueryExecModeExec, pgx.NamedArgs{"r": 42}},
	} {
		_, err := db.ExecContext(ctx, "INSERT INTO refs (ref) VALUES (@r)", args...)
		if err == nil || !strings.Contains(err.Error(), "insert into refs") || !strings.Contains(err.Error(), "pgxid") {
			t.Errorf("%T: %v, want a refusal naming the table and idsql/pgxid", args[len(args)-1], err)
		}
		if err := db.QueryRowContext(ctx, "INSERT INTO refs (ref) VALUES (@r) RETURNING id", args...).Scan(new(int64)); err == nil {
			t.Errorf("%T: QueryRow accepted", args[len(args)-1])
		}
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO refs (ref) VALUES ($1)", 42); err != nil {
		t.Fatal(err)
	}
	var n int
	var id, ref int64
	if err := raw.QueryRowContext(ctx, "SELECT count(*), min(id), min(ref) FROM refs").Scan(&n, &id, &ref); err != nil {
		t.Fatal(err)
	}
	if n != 1 || id == ref || ref != 42 {
		t.Fatalf("refs holds %d rows, key %d, ref %d; want the one $1 row, with a generated key", n, id, ref)
	}
}
