package idsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"reflect"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"
)

// DB is a drop-in *sqlx.DB whose INSERTs into configured tables get their
// keys filled. Every sqlx and database/sql method is there; NamedExec also
// writes the keys it inserts back into the caller's structs.
type DB struct {
	*sqlx.DB
	connector *Connector
}

// Tx is a drop-in *sqlx.Tx of a DB.
type Tx struct {
	*sqlx.Tx
	db *DB
}

// Open opens a DB on the registered driver driverName (e.g. "postgres" from
// lib/pq, "sqlite" from modernc.org/sqlite) with dsn, filling keys as cfg
// says. It does not connect yet; call Ping to check the server.
func Open(driverName, dsn string, cfg *Config, opts Options) (*DB, error) {
	d, err := lookupDriver(driverName)
	if err != nil {
		return nil, err
	}
	opts.DriverName = driverName
	wd := &wrappedDriver{inner: d, cfg: cfg, opts: opts}
	c, err := wd.OpenConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("idsql: open %s: %w", driverName, err)
	}
	return NewDB(c.(*Connector)), nil
}

// NewDB returns a DB over a Connector. sqlx's bind type follows the
// Connector's dialect; DriverName is the inner driver's name when sqlx reads
// that name as the dialect's placeholders.
func NewDB(c *Connector) *DB {
	return &DB{DB: sqlx.NewDb(sql.OpenDB(c), c.name), connector: c}
}

// Keys returns the DB's key set: NextID gives a key before inserting, from
// the same generator the wrapper uses.
func (db *DB) Keys() *Keys { return db.connector.keys }

// NextID returns a new key for table.
func (db *DB) NextID(ctx context.Context, table string) (int64, error) {
	return db.connector.keys.NextID(ctx, table)
}

// Beginx begins a transaction.
func (db *DB) Beginx() (*Tx, error) { return db.BeginTxx(context.Background(), nil) }

// BeginTxx begins a transaction with options.
func (db *DB) BeginTxx(ctx context.Context, opts *sql.TxOptions) (*Tx, error) {
	tx, err := db.DB.BeginTxx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &Tx{Tx: tx, db: db}, nil
}

// MustBegin begins a transaction and panics on error, as sqlx's does.
func (db *DB) MustBegin() *Tx {
	tx, err := db.Beginx()
	if err != nil {
		panic(err)
	}
	return tx
}

// NamedExec is NamedExecContext with a background context.
func (db *DB) NamedExec(query string, arg any) (sql.Result, error) {
	return db.NamedExecContext(context.Background(), query, arg)
}

// NamedExecContext runs a named statement with arg: a struct, a map, or a
// slice of them (a batch INSERT). For an INSERT into a configured table the
// zero key fields of arg get new keys before the statement runs, so after
// the call a struct's key field holds the key that was inserted. Pass
// pointers (or a slice of structs) for the keys to be written back.
func (db *DB) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	ctx, err := db.fillNamed(ctx, db.DB, query, arg)
	if err != nil {
		return nil, err
	}
	return db.DB.NamedExecContext(ctx, query, arg)
}

// NamedExec is NamedExecContext with a background context.
func (tx *Tx) NamedExec(query string, arg any) (sql.Result, error) {
	return tx.NamedExecContext(context.Background(), query, arg)
}

// NamedExecContext is DB.NamedExecContext within the transaction.
func (tx *Tx) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	ctx, err := tx.db.fillNamed(ctx, tx.Tx, query, arg)
	if err != nil {
		return nil, err
	}
	return tx.Tx.NamedExecContext(ctx, query, arg)
}

// binder is what fillNamed needs of a DB or Tx.
type binder interface {
	BindNamed(query string, arg any) (string, []any, error)
}

// fillNamed gives arg's zero key fields new keys when query is an INSERT
// into a configured table, and returns a context that makes the driver
// insert exactly arg's keys.
func (db *DB) fillNamed(ctx context.Context, b binder, query string, arg any) (context.Context, error) {
	bound, _, err := b.BindNamed(query, arg)
	if err != nil {
		return ctx, err // sqlx reports it again, the same way
	}
	var table string
	rows := elements(reflect.ValueOf(arg))
	rw := db.connector.namedRewriter()
	p, err := rw.Plan(ctx, bound, nil)
	switch {
	case err == nil && p != nil:
		// The driver adds the key column: it must insert exactly the
		// keys given to the caller's rows.
		if len(rows) != p.Rows {
			return ctx, nil // a shape sqlx expands differently: the driver fills
		}
		table = p.Table.String()
		if db.connector.driver.cfg.Tables[table].Shard != nil {
			return ctx, nil // each key needs its row's shard: the driver fills (not written back)
		}
	default:
		// The statement lists the key itself: zero key fields get keys
		// before sqlx binds them. Anything else the driver decides.
		t, ok := rw.KeyListed(bound)
		if !ok {
			return ctx, nil
		}
		table = t.String()
	}
	column := db.connector.driver.cfg.Tables[table].KeyColumn()
	ids := make([]int64, len(rows))
	for i, row := range rows {
		if id, ok, err := db.mapKey(ctx, table, row, column); ok {
			if err != nil {
				return ctx, err
			}
			ids[i] = id
			continue
		}
		key := keyField(db.Mapper, row, column)
		if !key.IsValid() {
			return ctx, nil // no key field: the driver fills, nothing to write back
		}
		if ids[i], err = db.ensureKey(ctx, table, key); err != nil {
			return ctx, err
		}
	}
	if p == nil {
		return ctx, nil
	}
	return withPresetIDs(ctx, table, ids), nil
}

// ensureKey returns the key in v, first storing a new one there when v is
// zero and settable.
func (db *DB) ensureKey(ctx context.Context, table string, v reflect.Value) (int64, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			if !v.CanSet() {
				return db.connector.keys.NextID(ctx, table)
			}
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	if v.CanInt() && v.Int() != 0 {
		return v.Int(), nil
	}
	if vr, ok := v.Interface().(driver.Valuer); ok && !v.IsZero() {
		val, err := vr.Value()
		if n, ok := val.(int64); err == nil && ok && n != 0 {
			return n, nil
		}
	}
	id, err := db.connector.keys.NextID(ctx, table)
	if err != nil {
		return 0, err
	}
	switch {
	case !v.CanSet():
	case v.CanInt():
		v.SetInt(id)
	case v.CanUint():
		v.SetUint(uint64(id))
	case v.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(id))
	}
	return id, nil
}

// elements returns the rows of a named argument: the elements of a slice or
// array, or the argument itself.
func elements(v reflect.Value) []reflect.Value {
	v = indirect(v)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return []reflect.Value{v}
	}
	rows := make([]reflect.Value, v.Len())
	for i := range rows {
		rows[i] = v.Index(i)
	}
	return rows
}

// keyField finds the key column's field in a struct row, or returns the
// invalid Value when row is no struct or has no such field.
func keyField(m *reflectx.Mapper, row reflect.Value, column string) reflect.Value {
	row = indirect(row)
	if row.Kind() != reflect.Struct {
		return reflect.Value{}
	}
	if fi := m.TypeMap(row.Type()).GetByPath(column); fi != nil {
		return reflectx.FieldByIndexes(row, fi.Index)
	}
	return reflect.Value{}
}

// mapKey returns the key in a map row's column entry, first storing a new
// one there when it is missing or zero. ok is false when row is no map with
// string keys or its values cannot hold an int64.
func (db *DB) mapKey(ctx context.Context, table string, row reflect.Value, column string) (id int64, ok bool, err error) {
	row = indirect(row)
	t := row.Type()
	if row.Kind() != reflect.Map || t.Key().Kind() != reflect.String || !reflect.TypeFor[int64]().AssignableTo(t.Elem()) {
		return 0, false, nil
	}
	k := reflect.ValueOf(column).Convert(t.Key())
	if cur := row.MapIndex(k); cur.IsValid() {
		if cur = indirect(cur); cur.CanInt() && cur.Int() != 0 {
			return cur.Int(), true, nil
		}
	}
	if id, err = db.connector.keys.NextID(ctx, table); err != nil {
		return 0, true, err
	}
	row.SetMapIndex(k, reflect.ValueOf(id))
	return id, true, nil
}

// indirect follows pointers and interfaces.
func indirect(v reflect.Value) reflect.Value {
	for (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}
