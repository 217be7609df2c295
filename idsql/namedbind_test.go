package idsql

import (
	"context"
	"database/sql"
	"reflect"
	"testing"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"
)

// sqlxBinder binds as a *sqlx.DB of a bind type does, counting its calls.
type sqlxBinder struct {
	bindType int
	calls    int
}

func (b *sqlxBinder) BindNamed(query string, arg any) (string, []any, error) {
	b.calls++
	return sqlx.BindNamed(b.bindType, query, arg)
}

func (b *sqlxBinder) ExecContext(context.Context, string, ...any) (sql.Result, error) {
	panic("not used")
}

// TestNamedBindsAsSqlx: every statement and argument binds exactly as
// sqlx binds it (query, arguments and error), the first time and from the
// cache; the cache serves a statement and type only after a first binding
// equal to sqlx's, and never serves what sqlx binds differently.
func TestNamedBindsAsSqlx(t *testing.T) {
	type inner struct {
		Note string `db:"note"`
	}
	type row struct {
		ID     int64  `db:"id"`
		UserID int64  `db:"user_id"`
		Inner  inner  `db:"inner"`
		Name   string `db:"näme"`
	}
	r := &row{ID: 7, UserID: 3, Inner: inner{Note: "n"}, Name: "x"}
	m := map[string]any{"id": int64(7), "user_id": int64(3), "note": "n"}
	for _, c := range []struct {
		query  string
		arg    any
		cached bool // the second binding comes from the cache
	}{
		{"INSERT INTO t (id, user_id) VALUES (:id, :user_id)", r, true},
		{"INSERT INTO t (id, user_id) VALUES (:id, :user_id)", m, true},
		{"INSERT INTO t (id, note) VALUES (:id, :inner.note)", r, true},
		{"INSERT INTO t (id) VALUES (:id) -- ::cast and :=", r, true},
		{"SELECT :id, 'a::b', :user_id", m, true},
		{"SELECT :id::bigint, :user_id", m, false}, // a ':' right after a name: sqlx's error
		{"INSERT INTO t (id) VALUES (:id)", *r, true},
		{"INSERT INTO t (id, name) VALUES (:id, :näme)", r, false},     // sqlx reads UTF-8 bytes as name bytes
		{"INSERT INTO t (id, v) VALUES (:id, :missing)", r, false},     // sqlx's error
		{"INSERT INTO t (id, v) VALUES (:id, :missing)", m, false},     // sqlx's error
		{"INSERT INTO t (id) VALUES (:id:user_id)", r, false},          // a ':' inside a name
		{"INSERT INTO t (id) VALUES (:id)", []*row{r, r}, false},       // batch rows: sqlx
		{"INSERT INTO t (id) VALUES (:id)", map[string]int64{}, false}, // other maps: sqlx
	} {
		for _, bt := range []int{sqlx.DOLLAR, sqlx.QUESTION} {
			var nb namedBinds
			b := &sqlxBinder{bindType: bt}
			mapper := reflectx.NewMapperFunc("db", sqlx.NameMapper)
			wantQ, wantArgs, wantErr := sqlx.BindNamed(bt, c.query, c.arg)
			for i := range 3 {
				calls := b.calls
				q, args, err := nb.bind(b, mapper, bt, c.query, c.arg)
				if q != wantQ || !reflect.DeepEqual(args, wantArgs) || (err == nil) != (wantErr == nil) ||
					err != nil && err.Error() != wantErr.Error() {
					t.Errorf("%s (%T, bind type %d), binding %d: %q %v %v; sqlx: %q %v %v", c.query, c.arg, bt, i+1, q, args, err, wantQ, wantArgs, wantErr)
				}
				if fromCache := b.calls == calls; i > 0 && fromCache != c.cached {
					t.Errorf("%s (%T, bind type %d), binding %d: from the cache %v, want %v", c.query, c.arg, bt, i+1, fromCache, c.cached)
				}
			}
		}
	}
}
