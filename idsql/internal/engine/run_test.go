package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// recordingDoor records what Run hands it to send, and answers with err.
type recordingDoor struct {
	refuse error // Named's answer
	err    error // Send's answer
	sent   []string
	args   [][]driver.NamedValue
	stmts  []*Stmt
}

func (d *recordingDoor) Named(_ *rewrite.Plan, args []driver.NamedValue) ([]driver.NamedValue, error) {
	return args, d.refuse
}

func (d *recordingDoor) Filled(_ []driver.NamedValue, f *Filled) []driver.NamedValue { return f.Args }

func (d *recordingDoor) Send(_ context.Context, st *Stmt, query string, args []driver.NamedValue) (int, error) {
	d.sent, d.args, d.stmts = append(d.sent, query), append(d.args, args), append(d.stmts, st)
	return len(d.sent), d.err
}

// Run plans, fills and sends a statement into a configured table, sends
// any other as it came, sends nothing and draws no key when the door or
// the engine refuses, keeps a NamedExec's own keys where the statement
// can, and maps a sent statement's error.
func TestRun(t *testing.T) {
	ctx := context.Background()
	keys := &counter{}
	e, rw, cat := engineOfT(t, Config{Keys: keys})
	d := &recordingDoor{}
	one := []driver.NamedValue{{Ordinal: 1, Value: int64(7)}}
	run := func(s Statement[[]driver.NamedValue]) (Ran[int], error) {
		s.Rewriter, s.Catalog = rw, cat
		return Run(ctx, e, Door[[]driver.NamedValue, int](d), &s)
	}

	ran, err := run(Statement[[]driver.NamedValue]{Query: "INSERT INTO t (v) VALUES (?)", Args: one})
	if err != nil {
		t.Fatal(err)
	}
	if ran.Stmt == nil || ran.Result != 1 || len(d.sent) != 1 || d.sent[0] != ran.Stmt.Plan.Query || d.stmts[0] != ran.Stmt {
		t.Fatalf("filled INSERT: ran %+v, door sent %q", ran, d.sent)
	}
	if got := d.args[0]; len(got) != 2 || ran.Filled.IDs[0] != 1 || !strings.Contains(d.sent[0], "id") {
		t.Errorf("filled INSERT sent %q with %v, keys %v; want the key column and key 1 added", d.sent[0], got, ran.Filled.IDs)
	}

	if ran, err = run(Statement[[]driver.NamedValue]{Query: "SELECT v FROM t", Args: one}); err != nil || ran.Stmt != nil ||
		d.sent[1] != "SELECT v FROM t" || len(d.args[1]) != 1 || d.stmts[1] != nil {
		t.Errorf("SELECT: ran %+v, %v; door sent %q with %v; want it as it came", ran, err, d.sent[1], d.args[1])
	}

	d.refuse = errors.New("refused by the door")
	if _, err = run(Statement[[]driver.NamedValue]{Query: "INSERT INTO t (v) VALUES (?)", Args: one}); !errors.Is(err, d.refuse) {
		t.Errorf("door refusal: %v", err)
	}
	d.refuse = nil
	two := []driver.NamedValue{{Ordinal: 1, Value: int64(1)}}
	if _, err = run(Statement[[]driver.NamedValue]{Query: "INSERT INTO t (v) VALUES (?, ?)", Args: two}); err == nil {
		t.Error("an INSERT of one column with two values was sent")
	}
	if len(d.sent) != 2 || keys.n != 1 {
		t.Errorf("after two refusals the door sent %d statements and %d keys were drawn; want 2 and 1", len(d.sent), keys.n)
	}

	// A NamedExec of two rows, one with its own key: it keeps it.
	named := "INSERT INTO t (v) VALUES (?), (?)"
	st, err := e.Plan(ctx, rw, cat, named)
	if err != nil {
		t.Fatal(err)
	}
	if !e.OwnKeys(st.Plan, 2) {
		t.Fatal("OwnKeys refused the own keys of a statement that does not list the key")
	}
	ran, err = run(Statement[[]driver.NamedValue]{Query: named, Args: two[:1:1], Stmt: st,
		Named: &NamedRows{Table: "t", Keys: []int64{500, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if ids := ran.Filled.IDs; len(ids) != 2 || ids[0] != 500 || ids[1] != 2 {
		t.Errorf("NamedExec rows with keys 500 and 0 took %v; want [500 2]", ids)
	}
	if e.OwnKeys(st.Plan, 1) {
		t.Error("OwnKeys kept the keys of one row for a two-row statement")
	}
}

// A NamedExec's rows keep their own keys only where the engine adds the
// key column, one key per row, and the table is not sharded.
func TestOwnKeys(t *testing.T) {
	ctx := context.Background()
	e, err := New(Config{Dialect: dialect.SQLite, Prefix: "test", Keys: &counter{},
		Tables: Tables([]string{"z", "s"}, map[string]table{"z": {key: "id", zero: true}, "s": {key: "id", shard: "v", bits: 2}})})
	if err != nil {
		t.Fatal(err)
	}
	cat := e.Catalog(columnsOfT{})
	for _, c := range []struct {
		query string
		rows  int
		keep  bool
	}{
		{"INSERT INTO z (v) VALUES (?), (?)", 2, true},
		{"INSERT INTO z (v) VALUES (?), (?)", 1, false},   // one row's keys for two rows
		{"INSERT INTO z (id, v) VALUES (?, ?)", 1, false}, // the statement lists the key
		{"INSERT INTO s (v) VALUES (?), (?)", 2, false},   // sharded: every row takes its shard's key
	} {
		st, err := e.Plan(ctx, e.Default(), cat, c.query)
		if err != nil || st == nil {
			t.Fatalf("%s: %v, %v", c.query, st, err)
		}
		if got := e.OwnKeys(st.Plan, c.rows); got != c.keep {
			t.Errorf("OwnKeys(%s, %d rows) = %v; want %v", c.query, c.rows, got, c.keep)
		}
	}
}

// Run maps the error of a statement it sent as Engine.Sent does: one that
// a connection pooler split says how to mend it.
func TestRunMapsTheSentError(t *testing.T) {
	ctx := context.Background()
	e, err := New(Config{Dialect: dialect.PostgreSQL, Prefix: "test", Keys: &counter{},
		Tables: Tables([]string{"t"}, map[string]table{"t": {key: "id"}})})
	if err != nil {
		t.Fatal(err)
	}
	split := errors.New(`pq: bind message supplies 2 parameters, but prepared statement "" requires 1`)
	d := &recordingDoor{err: split}
	for _, q := range []string{"INSERT INTO t (v) VALUES ($1)", "SELECT v FROM t WHERE v = $1"} {
		_, err := Run(ctx, e, Door[[]driver.NamedValue, int](d), &Statement[[]driver.NamedValue]{
			Query: q, Args: []driver.NamedValue{{Ordinal: 1, Value: int64(1)}}, Catalog: e.Catalog(bigintColumns{})})
		if !errors.Is(err, split) || !strings.Contains(err.Error(), "as PgBouncer in transaction mode does") {
			t.Errorf("%s, split by a pooler: %v; want the cause, and how to mend it", q, err)
		}
	}
	if len(d.sent) != 2 {
		t.Errorf("the door sent %d statements; want 2", len(d.sent))
	}
}
