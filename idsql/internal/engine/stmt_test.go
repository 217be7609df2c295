package engine

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/internal/dialect"
)

// counter is a key source of 1, 2, 3, ... for every table.
type counter struct{ n int64 }

func (c *counter) Source(context.Context, string) (Source, error) { return c, nil }

func (c *counter) NextID(context.Context) (int64, error) {
	c.n++
	return c.n, nil
}

func (c *counter) AppendIDs(_ context.Context, dst []int64, n int) ([]int64, error) {
	for range n {
		c.n++
		dst = append(dst, c.n)
	}
	return dst, nil
}

func (c *counter) AppendShardIDs(context.Context, []int64, string, []int) ([]int64, error) {
	return nil, errors.New("no sharded tables here")
}

// columnsOfT answers every catalog query with table t's columns: a key
// column id and a column v.
type columnsOfT struct{}

func (columnsOfT) ReadColumns(_ context.Context, _ string, _ []any, row func(name, hasDefault, typ any)) error {
	row("id", false, "INTEGER")
	row("v", false, "INTEGER")
	return nil
}

// engineOfT returns an engine of cfg for SQLite with one table, t, keyed
// by id, its rewriter and a catalog where t has columns id and v.
func engineOfT(t *testing.T, cfg Config) (*Engine, *rewrite.Rewriter, *Catalog) {
	t.Helper()
	cfg.Dialect, cfg.Prefix = dialect.SQLite, "test"
	cfg.Tables = Tables([]string{"t"}, map[string]table{"t": {key: "id"}})
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := e.Rewriter(dialect.SQLMode{})
	if err != nil {
		t.Fatal(err)
	}
	return e, rw, e.Catalog(columnsOfT{})
}

// A connection's Buffers reuse the last execution's arrays, but not ones
// a large INSERT grew past maxReused: the next execution starts small
// again, and its arguments and keys are its own.
func TestBuffersReuse(t *testing.T) {
	ctx := context.Background()
	keys := &counter{}
	e, rw, cat := engineOfT(t, Config{Keys: keys})
	small, err := e.Plan(ctx, rw, cat, "INSERT INTO t (v) VALUES (?)")
	if err != nil {
		t.Fatal(err)
	}
	const rows = maxReused // each row takes a key: twice maxReused arguments
	big, err := e.Plan(ctx, rw, cat, "INSERT INTO t (v) VALUES (?)"+strings.Repeat(", (?)", rows-1))
	if err != nil {
		t.Fatal(err)
	}
	var buf Buffers
	fill := func(st *Stmt, n int) *Filled {
		t.Helper()
		args := make([]driver.NamedValue, n)
		for i := range args {
			args[i] = driver.NamedValue{Ordinal: i + 1, Value: int64(100 + i)}
		}
		f, err := e.Fill(ctx, cat, st, args, nil, &buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.IDs) != n || len(f.Args) != 2*n {
			t.Fatalf("%d rows filled with %d keys and %d arguments", n, len(f.IDs), len(f.Args))
		}
		return f
	}
	first := &fill(small, 1).Args[0]
	if again := &fill(small, 1).Args[0]; again != first {
		t.Error("a second one-row execution did not reuse the first one's arguments")
	}
	if f := fill(big, rows); cap(f.Args) <= maxReused || cap(f.IDs) < rows {
		t.Fatalf("a %d-row execution has arrays of capacity %d and %d", rows, cap(f.Args), cap(f.IDs))
	}
	last := keys.n
	f := fill(small, 1)
	if cap(f.Args) > maxReused || cap(f.IDs) > maxReused {
		t.Errorf("after a large execution the next keeps arrays of capacity %d and %d, past %d", cap(f.Args), cap(f.IDs), maxReused)
	}
	if f.IDs[0] != last+1 || f.Args[0].Value != int64(100) || f.Args[1].Value != last+1 {
		t.Errorf("one row after a large execution: keys %v, arguments %v; want key %d and value 100", f.IDs, f.Args, last+1)
	}
}

// Observe hears of every filled execution: its table, its keys, and the
// time the key source took, with the execution's context.
func TestObserve(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "caller")
	type seen struct {
		from  any
		table string
		keys  int
		took  time.Duration
	}
	var got []seen
	keys := &slowCounter{wait: 2 * time.Millisecond}
	e, rw, cat := engineOfT(t, Config{Keys: keys,
		Observe: func(ctx context.Context, table string, n int, took time.Duration) {
			got = append(got, seen{ctx.Value(ctxKey{}), table, n, took})
		}})
	st, err := e.Plan(ctx, rw, cat, "INSERT INTO t (v) VALUES (?), (?)")
	if err != nil {
		t.Fatal(err)
	}
	args := []driver.NamedValue{{Ordinal: 1, Value: int64(1)}, {Ordinal: 2, Value: int64(2)}}
	if _, err := e.Fill(ctx, cat, st, args, nil, &Buffers{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].from != "caller" || got[0].table != "t" || got[0].keys != 2 || got[0].took < keys.wait {
		t.Fatalf("observed %+v; want one execution of table t with 2 keys, the caller's context, taking at least %s", got, keys.wait)
	}
}

// slowCounter is a counter whose every draw waits first.
type slowCounter struct {
	counter
	wait time.Duration
}

func (c *slowCounter) Source(context.Context, string) (Source, error) { return c, nil }

func (c *slowCounter) AppendIDs(ctx context.Context, dst []int64, n int) ([]int64, error) {
	time.Sleep(c.wait)
	return c.counter.AppendIDs(ctx, dst, n)
}

// failing is a key source whose every draw fails with err.
type failing struct{ err error }

func (f failing) Source(context.Context, string) (Source, error) { return f, nil }
func (f failing) NextID(context.Context) (int64, error)          { return 0, f.err }
func (f failing) AppendIDs(_ context.Context, dst []int64, _ int) ([]int64, error) {
	return dst, f.err
}
func (f failing) AppendShardIDs(_ context.Context, dst []int64, _ string, _ []int) ([]int64, error) {
	return dst, f.err
}

// bigintColumns answers every catalog query with a bigint key column id
// and a column v, as PostgreSQL names them.
type bigintColumns struct{}

func (bigintColumns) ReadColumns(_ context.Context, _ string, _ []any, row func(name, hasDefault, typ any)) error {
	row("id", false, "bigint")
	row("v", false, "integer")
	return nil
}

// A key source's own statement that a transaction pooler split (lib/pq
// binding an unnamed statement on another server connection, here while
// reading a table's shape) fails the INSERT with the words that say how
// to mend it, as the INSERT's own split does, and the cause kept.
func TestFillSaysHowToMendASplitDraw(t *testing.T) {
	ctx := context.Background()
	cause := errors.New(`table t: read its shape from idsql_shapes: pq: bind message supplies 2 parameters, but prepared statement "" requires 1`)
	e, err := New(Config{Dialect: dialect.PostgreSQL, Prefix: "test", Keys: failing{cause},
		Tables: Tables([]string{"t"}, map[string]table{"t": {key: "id"}})})
	if err != nil {
		t.Fatal(err)
	}
	cat := e.Catalog(bigintColumns{})
	st, err := e.Plan(ctx, e.Default(), cat, "INSERT INTO t (v) VALUES ($1)")
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Fill(ctx, cat, st, []driver.NamedValue{{Ordinal: 1, Value: int64(1)}}, nil, nil)
	if !errors.Is(err, cause) || !strings.Contains(err.Error(), "as PgBouncer in transaction mode does") {
		t.Errorf("Fill with a split draw: %v; want the cause, and how to mend a split statement", err)
	}
}
