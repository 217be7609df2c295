package idsql

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"reflect"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"

	"github.com/idsql/idsql/idsql/internal/engine"
	"github.com/idsql/idsql/idsql/internal/rewrite"
	"github.com/idsql/idsql/idsql/keyform"
)

// DB is a drop-in *sqlx.DB whose INSERTs into configured tables get their
// keys filled. Every sqlx and database/sql method is there; NamedExec also
// writes the keys it inserts back into the caller's structs.
type DB struct {
	*sqlx.DB
	connector *Connector
	named     *namedBinds // NamedExec's statements, compiled once
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
	return &DB{DB: sqlx.NewDb(sql.OpenDB(c), c.name), connector: c, named: new(namedBinds)}
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
func (db *DB) MustBegin() *Tx { return db.MustBeginTx(context.Background(), nil) }

// MustBeginTx begins a transaction with options and panics on error, as
// sqlx's does.
func (db *DB) MustBeginTx(ctx context.Context, opts *sql.TxOptions) *Tx {
	tx, err := db.BeginTxx(ctx, opts)
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
// rows whose key is zero (or missing, when the statement does not list the
// key column) get new keys, and once the statement has succeeded the
// caller's key fields hold them; a failed statement leaves them as they
// were. Pass pointers (or a slice of structs) for the keys to be written
// back. The statement is bound once, as sqlx binds it.
//
// Only the NamedExec methods of DB and Tx write keys back. sqlx's free
// functions (sqlx.NamedExec, sqlx.NamedExecContext) given a DB or Tx, and
// the methods of the embedded *sqlx.DB or *sqlx.Tx, insert the same keys
// but leave the caller's key fields as they were: read them back with
// RETURNING, or take them first with NextID.
func (db *DB) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	return db.namedExec(ctx, db.DB, query, arg)
}

// NamedExec is NamedExecContext with a background context.
func (tx *Tx) NamedExec(query string, arg any) (sql.Result, error) {
	return tx.NamedExecContext(context.Background(), query, arg)
}

// NamedExecContext is DB.NamedExecContext within the transaction.
func (tx *Tx) NamedExecContext(ctx context.Context, query string, arg any) (sql.Result, error) {
	return tx.db.namedExec(ctx, tx.Tx, query, arg)
}

// binder is what a named execution needs of a *sqlx.DB or *sqlx.Tx.
type binder interface {
	BindNamed(query string, arg any) (string, []any, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// namedExec binds query with arg once, runs it on b with the keys its rows
// take, and writes those keys back into arg once it has succeeded.
func (db *DB) namedExec(ctx context.Context, b binder, query string, arg any) (sql.Result, error) {
	bindType := sqlx.BindType(db.DriverName())
	bound, args, err := db.named.bind(b, db.Mapper, bindType, query, arg)
	if err != nil {
		return nil, err
	}
	ctx, done, rebind, err := db.fillNamed(ctx, bound, arg)
	if err != nil {
		return nil, err
	}
	if rebind {
		// Keys were set in arg's rows before binding (see keysBefore).
		if bound, args, err = db.named.bind(b, db.Mapper, bindType, query, arg); err != nil {
			done(err)
			return nil, err
		}
	}
	res, err := b.ExecContext(ctx, bound, args...)
	done(err)
	return res, err
}

// fillNamed prepares bound, a named INSERT into a configured table bound
// with arg: the context it returns tells the driver the rows' own keys and
// brings back the keys it generates, which done (called with the
// statement's error) writes into arg's rows when the statement succeeded.
// rebind reports that it set keys in arg's rows instead, which the
// statement must be bound again to carry.
func (db *DB) fillNamed(ctx context.Context, bound string, arg any) (_ context.Context, done func(error), rebind bool, _ error) {
	nothing := func(error) {}
	rows := elements(reflect.ValueOf(arg))
	rw := db.connector.namedRewriter()
	p, err := rw.Plan(ctx, bound, nil)
	if err != nil || p == nil {
		// A table that keeps zero keys, and a statement listing the key:
		// zero keys get new ones before sqlx binds them.
		t, ok := rw.KeyListed(bound)
		if !ok {
			return ctx, nothing, false, nil // the driver decides
		}
		done, n, err := db.keysBefore(ctx, t.String(), rows)
		return ctx, done, n > 0, err
	}
	table := p.Table.String()
	column := db.connector.driver.cfg.Tables[table].KeyColumn()
	refs := make([]keyRef, len(rows))
	readable := true
	for i, row := range rows {
		refs[i] = keyOf(db.Mapper, row, column)
		readable = readable && refs[i].valid()
	}
	nm := &namedExec{rows: engine.NamedRows{Table: table}, plan: p, query: bound, rw: rw}
	if readable && db.connector.eng.OwnKeys(p, len(rows)) {
		// The engine adds the key column: rows that have a key keep it.
		nm.rows.Keys = make([]int64, len(rows))
		for i, r := range refs {
			nm.rows.Keys[i] = r.get()
		}
	}
	c := db.connector
	uuids := c.eng.UUIDKeys(table)
	c.namedN.Add(1)
	done = func(err error) {
		c.namedN.Add(-1)
		if err != nil || len(nm.got) != len(refs) {
			return
		}
		for i, k := range nm.got {
			switch {
			case k == 0 || !refs[i].valid():
			case uuids != nil:
				if b, err := uuids.UUID(k); err == nil {
					refs[i].setUUID(b)
				}
			default:
				refs[i].set(k)
			}
		}
	}
	return withNamed(ctx, nm), done, false, nil
}

// keysBefore gives the zero keys of rows new keys of table before the
// statement binds them, drawn by the engine in one call, and returns a
// done that puts the old values back when the statement fails, and how
// many keys it set. When the keys cannot be drawn it changes no row.
func (db *DB) keysBefore(ctx context.Context, table string, rows []reflect.Value) (func(error), int, error) {
	column := db.connector.driver.cfg.Tables[table].KeyColumn()
	uuids := db.connector.eng.UUIDKeys(table)
	var refs []keyRef
	var keys []int64
	for _, row := range rows {
		r := keyOf(db.Mapper, row, column)
		if !r.valid() || !r.settable() || uuids == nil && r.get() != 0 || uuids != nil && !r.zeroUUID() {
			continue
		}
		refs = append(refs, r)
		keys = append(keys, 0)
	}
	if err := db.connector.eng.FillZeros(ctx, table, keys); err != nil {
		return nil, 0, err
	}
	uuidOf := make([][16]byte, len(keys))
	for i, k := range keys {
		if uuids == nil {
			continue
		}
		var err error
		if uuidOf[i], err = uuids.UUID(k); err != nil {
			return nil, 0, err // no row changed yet
		}
	}
	undo := make([]func(), len(refs))
	for i, r := range refs {
		undo[i] = r.saved()
		if uuids != nil {
			r.setUUID(uuidOf[i])
		} else {
			r.set(keys[i])
		}
	}
	return func(err error) {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}, len(undo), nil
}

// keyRef is one row's key: a struct field, or a map entry.
type keyRef struct {
	field reflect.Value // the struct field, when valid
	m, k  reflect.Value // the map and key, when m is valid
}

// keyOf finds the key column's field in a struct row, or its entry in a
// map row with string keys whose values can hold an int64. The keyRef is
// not valid when there is neither.
func keyOf(mapper *reflectx.Mapper, row reflect.Value, column string) keyRef {
	row = indirect(row)
	switch row.Kind() {
	case reflect.Struct:
		if fi := mapper.TypeMap(row.Type()).GetByPath(column); fi != nil {
			return keyRef{field: reflectx.FieldByIndexes(row, fi.Index)}
		}
	case reflect.Map:
		t := row.Type()
		if t.Key().Kind() == reflect.String && reflect.TypeFor[int64]().AssignableTo(t.Elem()) {
			return keyRef{m: row, k: reflect.ValueOf(column).Convert(t.Key())}
		}
	}
	return keyRef{}
}

func (r keyRef) valid() bool { return r.field.IsValid() || r.m.IsValid() }

// settable reports whether set can store a key.
func (r keyRef) settable() bool { return r.m.IsValid() || r.field.CanSet() }

// zeroUUID reports whether the row's UUID key means "no key" as a bind
// value would (rewrite.IsZeroKey: missing, NULL, the nil UUID).
func (r keyRef) zeroUUID() bool {
	v := r.field
	if r.m.IsValid() {
		v = r.m.MapIndex(r.k)
	}
	return !v.IsValid() || !v.CanInterface() || rewrite.IsZeroKey(v.Interface())
}

// get returns the row's key, or 0 when it is zero, NULL or missing.
func (r keyRef) get() int64 {
	v := r.field
	if r.m.IsValid() {
		v = r.m.MapIndex(r.k)
	}
	if !v.IsValid() {
		return 0
	}
	if v.Kind() == reflect.Pointer && v.IsNil() {
		return 0
	}
	if v.CanInterface() {
		if vr, ok := v.Interface().(driver.Valuer); ok {
			val, err := vr.Value()
			if n, ok := val.(int64); err == nil && ok {
				return n
			}
			return 0
		}
	}
	v = indirect(v)
	switch {
	case v.CanInt():
		return v.Int()
	case v.CanUint():
		return int64(v.Uint())
	}
	return 0
}

// set stores a key in the row, allocating a nil pointer field.
func (r keyRef) set(id int64) {
	if r.m.IsValid() {
		r.m.SetMapIndex(r.k, reflect.ValueOf(id))
		return
	}
	v, ok := r.target()
	if !ok {
		return
	}
	switch {
	case v.CanInt():
		v.SetInt(id)
	case v.CanUint():
		v.SetUint(uint64(id))
	case v.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(id))
	case v.CanAddr():
		if sc, ok := v.Addr().Interface().(interface{ Scan(any) error }); ok {
			_ = sc.Scan(id) // sql.NullInt64 and the like
		}
	}
}

// setUUID stores a UUID key in the row: a field of 16 bytes (an array such
// as [16]byte, google/uuid's UUID or gofrs/uuid's) takes its bytes, a
// []byte field a copy of them, a string field, a map entry or an
// interface its canonical text; a field of another type is left as it
// is.
func (r keyRef) setUUID(b [16]byte) {
	text := keyform.FormatUUID(b)
	if r.m.IsValid() {
		r.m.SetMapIndex(r.k, reflect.ValueOf(text))
		return
	}
	v, ok := r.target()
	if !ok {
		return
	}
	bytes := reflect.ValueOf(b)
	switch {
	case v.Kind() == reflect.Interface:
		v.Set(reflect.ValueOf(text))
	case v.Kind() == reflect.String:
		v.SetString(text)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8:
		v.SetBytes(append([]byte(nil), b[:]...))
	case bytes.CanConvert(v.Type()):
		v.Set(bytes.Convert(v.Type()))
	}
}

// target returns the field a key is stored in (through a pointer, made
// when nil), false when it cannot be set.
func (r keyRef) target() (reflect.Value, bool) {
	v := r.field
	if !v.CanSet() {
		return v, false
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		v = v.Elem()
	}
	return v, true
}

// saved returns a function that puts the row's key back as it is now.
func (r keyRef) saved() func() {
	if r.m.IsValid() {
		old := r.m.MapIndex(r.k)
		return func() { r.m.SetMapIndex(r.k, old) } // an invalid old deletes the entry
	}
	old := reflect.New(r.field.Type()).Elem()
	old.Set(r.field)
	return func() { r.field.Set(old) }
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

// indirect follows pointers and interfaces.
func indirect(v reflect.Value) reflect.Value {
	for (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	return v
}
