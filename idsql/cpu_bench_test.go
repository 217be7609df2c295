package idsql_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"io"
	"testing"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql"
)

// The wrapper's own CPU per statement, with nothing else in the way: a
// driver that answers every Exec at once (and the catalog query with a
// fixed table), so what is left is database/sql plus, on the idsql side,
// idsql. Run:
//
//	go test -run '^$' -bench 'WrapperCPU' -count 8 ./idsql/
//
// raw: the INSERT with its key through database/sql alone; idsql: the
// INSERT without its key through idsql, which fills it.
func BenchmarkWrapperCPU(b *testing.B) {
	ctx := context.Background()
	raw := sql.OpenDB(instantConnector{})
	b.Cleanup(func() { raw.Close() })
	cfg := &idsql.Config{Namespace: "cpu", Dialect: "sqlite", Tables: map[string]idsql.TableConfig{"t": {Strategy: idsql.Snowflake}}}
	c, err := idsql.NewConnector(instantConnector{}, cfg, idsql.Options{KeysOptions: idsql.KeysOptions{Holder: holder.Fixed(1)}})
	if err != nil {
		b.Fatal(err)
	}
	db := sql.OpenDB(c)
	b.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, "INSERT INTO t (user_id, note) VALUES (?, ?)", 1, "warm"); err != nil {
		b.Fatal(err)
	}
	b.Run("raw", func(b *testing.B) {
		b.ReportAllocs()
		for i := int64(0); b.Loop(); i++ {
			if _, err := raw.ExecContext(ctx, "INSERT INTO t (user_id, note, id) VALUES (?, ?, ?)", i, "note", i+1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("idsql", func(b *testing.B) {
		b.ReportAllocs()
		for i := int64(0); b.Loop(); i++ {
			if _, err := db.ExecContext(ctx, "INSERT INTO t (user_id, note) VALUES (?, ?)", i, "note"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// instantConnector makes connections that answer at once: Exec affects
// one row, and every query returns table t's catalog (id bigint, user_id
// integer, note text).
type instantConnector struct{}

func (instantConnector) Connect(context.Context) (driver.Conn, error) { return instantConn{}, nil }
func (instantConnector) Driver() driver.Driver                        { return instantDriver{} }

type instantDriver struct{}

func (instantDriver) Open(string) (driver.Conn, error) { return instantConn{}, nil }

type instantConn struct{}

func (instantConn) Prepare(string) (driver.Stmt, error) { return nil, driver.ErrSkip }
func (instantConn) Close() error                        { return nil }
func (instantConn) Begin() (driver.Tx, error)           { return nil, driver.ErrSkip }
func (instantConn) ExecContext(context.Context, string, []driver.NamedValue) (driver.Result, error) {
	return driver.RowsAffected(1), nil
}
func (instantConn) QueryContext(context.Context, string, []driver.NamedValue) (driver.Rows, error) {
	return &catalogRows{}, nil
}

// catalogRows are the rows of the SQLite dialect's catalog query (name,
// has a default, type) for table t.
type catalogRows struct{ i int }

var catalogOfT = [][]driver.Value{{"id", false, "bigint"}, {"user_id", false, "integer"}, {"note", false, "text"}}

func (*catalogRows) Columns() []string { return []string{"name", "has_default", "type"} }
func (*catalogRows) Close() error      { return nil }
func (r *catalogRows) Next(dest []driver.Value) error {
	if r.i == len(catalogOfT) {
		return io.EOF
	}
	copy(dest, catalogOfT[r.i])
	r.i++
	return nil
}
