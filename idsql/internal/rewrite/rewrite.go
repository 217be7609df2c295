package rewrite

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/idsql/idsql/internal/dialect"
)

// syntax is how the rewriter reads statements: its dialect's Syntax in the
// Config's sql_mode.
type syntax = dialect.Syntax

// positional reports whether placeholders are ? rather than $n.
func positional(s *syntax) bool { return s.Bind == dialect.Question }

// Table names a table whose key the rewriter fills.
//
// Names are catalog names. In the PostgreSQL dialect they are compared
// exactly with identifiers as PostgreSQL resolves them: unquoted SQL
// identifiers fold to lower case, quoted ones keep their case, so a
// configured "orders" matches orders, ORDERS and "orders" but not "Orders".
// In the SQLite and MySQL dialects every comparison ignores case, as both do
// for column names.
//
// An empty Schema matches the table in any schema (orders, public.orders,
// shop.orders). A Schema matches statements naming that schema, and
// unqualified names, which are assumed to resolve to it.
type Table struct {
	Schema    string // optional
	Name      string // required
	KeyColumn string // the key column; "" means "id"
	// KeepZero turns off filling keys the statement gives as DEFAULT, NULL,
	// 0 or a bind value that is 0 or NULL (see Plan): such statements
	// then pass unchanged, as every statement listing the key does.
	KeepZero bool
	// Label is what String returns, when set: the caller's own name for
	// the table (idsql's configuration name, "Mixed Case" quoted, say).
	Label string
	// ShardColumn, when set, is the column whose value picks the shard of
	// each row's key: a plan that fills the table says where each row's
	// value is (Plan.Shards), and a statement that does not give every
	// row a bind parameter or a literal there is refused with an *Error.
	ShardColumn string
}

// String returns the table's Label, or its configured name,
// schema-qualified when a schema is configured.
func (t Table) String() string {
	if t.Label != "" {
		return t.Label
	}
	if t.Schema != "" {
		return t.Schema + "." + t.Name
	}
	return t.Name
}

func (t Table) key() string {
	if t.KeyColumn == "" {
		return "id"
	}
	return t.KeyColumn
}

// Column is one column of a table as the catalog describes it.
type Column struct {
	Name       string // exact catalog name
	HasDefault bool   // the column has a default (DEFAULT, identity, serial)
}

// Catalog answers questions about the live schema. The rewriter asks it only
// for INSERTs into configured tables that it cannot fill from the text alone:
// statements without a column list (for the column order) and statements it
// cannot fill (whether the key column has a default, so the statement may
// pass unchanged).
type Catalog interface {
	// Columns returns the columns of the table in table order, or an empty
	// slice when there is no such table. schema is "" when the statement
	// does not qualify the name (the search path decides).
	Columns(ctx context.Context, schema, table string) ([]Column, error)
}

// DefaultCacheSize is the number of plans a Rewriter keeps when
// Config.CacheSize is zero.
const DefaultCacheSize = 1024

// maxCachedQuery is the longest query text kept in the cache.
const maxCachedQuery = 1 << 20

// Config configures a Rewriter. The zero value of every field but Tables
// means its default.
type Config struct {
	// Tables lists the tables whose key column is filled.
	Tables []Table
	// Dialect is the database's SQL dialect (default PostgreSQL):
	//   - PostgreSQL: numbered $1, $2, ... placeholders and PostgreSQL's
	//     lexical rules (E'...' strings, $tag$ quoting, nested comments),
	//     with standard_conforming_strings on.
	//   - SQLite: positional ? placeholders. Constructs that SQLite and
	//     MySQL read differently (backslashes in literals, '#' and '--x'
	//     comments, nested or executable comments, named parameters) make
	//     a statement "not understood".
	//   - MySQL, and MariaDB: positional ? placeholders and MySQL's lexical
	//     rules (backslash escapes in '...' and "..." unless
	//     NoBackslashEscapes, backtick identifiers, '#' and '-- ' comments,
	//     /*! ... */ executable comments), and MySQL's INSERT forms
	//     (INSERT ... SET, VALUES ROW(...), PARTITION, row aliases).
	Dialect dialect.Dialect
	// NoBackslashEscapes says the MySQL server runs with NO_BACKSLASH_ESCAPES
	// in sql_mode: backslash is then a plain character in string literals.
	// By default MySQL reads \' in '...' as an escaped quote. Only for the
	// MySQL dialect; the mode must hold for every connection.
	NoBackslashEscapes bool
	// ANSIQuotes says the MySQL server runs with ANSI_QUOTES in sql_mode:
	// "..." then quotes an identifier, not a string. Only for the MySQL
	// dialect; the mode must hold for every connection.
	ANSIQuotes bool
	// CacheSize bounds the number of cached plans (default
	// DefaultCacheSize; negative disables the cache). When the cache is
	// full, about half of it is dropped.
	CacheSize int
}

// Rewriter plans the rewriting of INSERT statements into configured tables.
// It is safe for concurrent use.
type Rewriter struct {
	tables []Table
	syn    syntax
	max    int

	cache sync.Map // query -> *entry
	n     atomic.Int64
	mu    sync.Mutex // serialises stores and eviction

	// listed caches KeyListed's answers (query -> listedAnswer), bounded
	// by max: NamedExec asks it at every execution of such a statement.
	listed  sync.Map
	listedN atomic.Int64
}

// listedAnswer is one answer of KeyListed.
type listedAnswer struct {
	t  Table
	ok bool
}

type entry struct {
	plan *Plan
	err  error
}

// New validates cfg and returns a Rewriter.
func New(cfg Config) (*Rewriter, error) {
	cfg.Dialect = cmp.Or(cfg.Dialect, dialect.Default)
	syn := cfg.Dialect.Syntax()
	switch {
	case syn.Bind == 0:
		return nil, fmt.Errorf("rewrite: Config.Dialect: unknown dialect %s", cfg.Dialect)
	case cfg.NoBackslashEscapes && !cfg.Dialect.SessionMode():
		return nil, fmt.Errorf("rewrite: Config.NoBackslashEscapes: a MySQL sql_mode, set for dialect %s", cfg.Dialect)
	case cfg.ANSIQuotes && !cfg.Dialect.SessionMode():
		return nil, fmt.Errorf("rewrite: Config.ANSIQuotes: a MySQL sql_mode, set for dialect %s", cfg.Dialect)
	}
	syn = syn.WithSQLMode(cfg.NoBackslashEscapes, cfg.ANSIQuotes)
	seen := make(map[Table]bool, len(cfg.Tables))
	tables := make([]Table, 0, len(cfg.Tables))
	for i, t := range cfg.Tables {
		if t.Name == "" {
			return nil, fmt.Errorf("rewrite: Config.Tables[%d].Name is empty", i)
		}
		t.KeyColumn = t.key()
		k := t
		if !syn.FoldUnquoted {
			k = Table{Schema: strings.ToLower(t.Schema), Name: strings.ToLower(t.Name)}
		} else {
			k = Table{Schema: t.Schema, Name: t.Name}
		}
		if seen[k] {
			return nil, fmt.Errorf("rewrite: Config.Tables[%d]: table %s is listed twice", i, t)
		}
		seen[k] = true
		tables = append(tables, t)
	}
	max := cfg.CacheSize
	if max == 0 {
		max = DefaultCacheSize
	}
	return &Rewriter{tables: tables, syn: syn, max: max}, nil
}

// Plan is the decision for one query text. A nil *Plan means "send the query
// unchanged, with the caller's arguments". A non-nil Plan is immutable and
// reusable: at every execution, Decide says which rows take a generated
// key, and Plan.Query runs with the arguments ArgsFor builds from the
// caller's arguments and that many freshly generated IDs.
//
// A statement that lists the key column itself gets a Plan when some row
// gives the key as DEFAULT, NULL or 0 (each replaced by a new placeholder
// for a generated key) or as a bind parameter: such a parameter keeps the
// caller's value unless it is 0 or NULL, which ArgsFor replaces with a
// generated key, so the decision is made per row at every execution.
// Table.KeepZero turns this off.
type Plan struct {
	// Query is the rewritten statement.
	Query string
	// Table is the configured table being filled.
	Table Table
	// Rows is the number of rows that may take a generated key, in text
	// order (at least 1): every VALUES row when the statement does not
	// list the key column. Decide tells how many keys one execution takes.
	Rows int
	// Params is the number of arguments the caller's statement takes: the
	// highest $n for PostgreSQL, the number of ? for SQLite and MySQL.
	Params int
	// Shards, for a table with a ShardColumn, says for each of the Rows
	// rows, in order, what it gives that column: a bind parameter or a
	// literal. Nil for other tables.
	Shards []Value
	// Upsert: the statement may update an existing row instead of
	// inserting one (ON CONFLICT ... DO UPDATE, ON DUPLICATE KEY UPDATE),
	// which then keeps its key: a generated key is written only if the
	// row was inserted.
	Upsert bool

	positional bool  // ? placeholders
	at         []int // positional: for each added placeholder, how many caller args precede it
	addedN     int   // while building: the number of added placeholders
	// slots, when not nil, says for each of the Rows rows where its key
	// comes from; nil means every row's key is an added placeholder
	// taking a generated key.
	slots []slot
}

// slot is where one row's key comes from.
type slot struct {
	// arg is the index of the caller's argument that gives the key, kept
	// unless it is zero; -1 when the key is always generated.
	arg int
	// added: the key goes to a placeholder the rewrite added (in order of
	// the added placeholders); otherwise to the caller's argument arg, in
	// place.
	added bool
}

// Listed reports whether the statement gives its rows' keys itself (it
// lists the key column, or assigns it in MySQL's SET): a row then keeps a
// key that is not 0 or NULL.
func (p *Plan) Listed() bool { return p.slots != nil }

// added returns the number of placeholders the rewrite added.
func (p *Plan) added() int {
	if p.slots == nil {
		return p.Rows
	}
	n := 0
	for _, s := range p.slots {
		if s.added {
			n++
		}
	}
	return n
}

// Rows is what one execution's arguments decide about a plan's rows:
// which of them take a generated key. Decide tests each row's key once;
// ArgsFor and GeneratedFor read the answer.
type Rows struct {
	need int
	// gen says, for each of the plan's rows, whether it takes a generated
	// key; nil when every row does (the statement does not list the key).
	gen []bool
}

// Need returns the number of keys the execution takes.
func (r Rows) Need() int { return r.need }

// Gen returns, for each of the plan's rows, whether it takes a generated
// key; nil when every row does. Its array may be reused by the next
// Decide given it as buf.
func (r Rows) Gen() []bool { return r.gen }

// Decide tests once, for each of p's rows, whether it takes a generated
// key with args: a row whose key is not given, or is given as a bind value
// that is 0 or NULL. The answer's per-row flags are appended to buf[:0].
func (p *Plan) Decide(args []driver.NamedValue, buf []bool) Rows {
	if p.slots == nil {
		return Rows{need: p.Rows}
	}
	return p.decideSlots(args, buf)
}

// decideSlots is Decide for a plan that lists the key.
func (p *Plan) decideSlots(args []driver.NamedValue, buf []bool) Rows {
	gen := buf[:0]
	n := 0
	for _, s := range p.slots {
		g := s.arg < 0 || s.arg < len(args) && IsZeroKey(args[s.arg].Value)
		if g {
			n++
		}
		gen = append(gen, g)
	}
	return Rows{need: n, gen: gen}
}

// IsZeroKey reports whether a bind value given for a key column means "no
// key": nil (NULL), a zero integer or float of any type, the nil UUID (its
// text, its 16 bytes, a 16-byte array type such as google/uuid's UUID), a
// nil pointer, or a driver.Valuer whose value is one of those.
func IsZeroKey(v any) bool {
	for range 4 { // a Valuer returning a Valuer, at most a few levels
		switch x := v.(type) {
		case nil:
			return true
		case int64:
			return x == 0
		case string:
			return x == nilUUID
		case []byte:
			return len(x) == 16 && [16]byte(x) == [16]byte{}
		case driver.Valuer:
			rv := reflect.ValueOf(x)
			if rv.Kind() == reflect.Pointer && rv.IsNil() {
				return true
			}
			val, err := x.Value()
			if err != nil {
				return false // the driver reports it when it converts the value
			}
			v = val
			continue
		}
		rv := reflect.ValueOf(v)
		for rv.Kind() == reflect.Pointer {
			if rv.IsNil() {
				return true
			}
			rv = rv.Elem()
		}
		switch {
		case rv.CanInt():
			return rv.Int() == 0
		case rv.CanUint():
			return rv.Uint() == 0
		case rv.CanFloat():
			return rv.Float() == 0
		case rv.Kind() == reflect.Array && rv.Len() == 16 && rv.Type().Elem().Kind() == reflect.Uint8:
			return rv.IsZero()
		}
		return false
	}
	return false
}

// nilUUID is the nil UUID's text.
const nilUUID = "00000000-0000-0000-0000-000000000000"

// A Boxer makes the interface value that carries a key in an argument.
type Boxer interface {
	Box(id int64) any
}

// ArgsFor returns the arguments for Query: args with the IDs placed where
// Query expects them (PostgreSQL: appended as $Params+1...; SQLite and
// MySQL: at the ? positions of the added placeholders; a caller's 0 or NULL
// key argument replaced in place), with Ordinal renumbered from 1. IDs go
// to the rows Decide chose with args, in row order, each key's interface
// value made by box (nil: Go's own conversion, which allocates for most
// keys). It appends to dst[:0] and allocates only when dst is too small.
// ids must hold exactly rows.Need() IDs (ArgsFor panics otherwise: that is
// a bug in the caller). args should hold exactly Params values; when it
// does not, the IDs are appended after them and the server reports the
// wrong count, as it would have without the rewrite.
func (p *Plan) ArgsFor(dst, args []driver.NamedValue, ids []int64, rows Rows, box Boxer) []driver.NamedValue {
	switch {
	case p.slots != nil:
		return p.slotArgs(dst, args, ids, rows, box)
	case len(ids) != p.Rows:
		panic(fmt.Sprintf("rewrite: Plan.ArgsFor got %d IDs for %d rows", len(ids), p.Rows))
	case !p.positional || len(args) != p.Params:
		// Numbered placeholders: the keys follow the caller's arguments.
		dst = append(dst[:0], args...)
		for _, id := range ids {
			dst = append(dst, driver.NamedValue{Value: boxed(box, id)})
		}
	case len(ids) == 1:
		// One row (the commonest statement): its arguments copied around
		// its key.
		n, at := len(args)+1, p.at[0]
		if cap(dst) < n {
			dst = make([]driver.NamedValue, n)
		}
		dst = dst[:n]
		// Element by element: for a few arguments this is cheaper than
		// copy, which calls into the runtime.
		for i := range at {
			dst[i] = args[i]
		}
		dst[at] = driver.NamedValue{Value: boxed(box, ids[0])}
		for i := at; i < len(args); i++ {
			dst[i+1] = args[i]
		}
	default:
		dst = dst[:0]
		k := 0
		for i, id := range ids {
			dst = append(dst, args[k:p.at[i]]...)
			k = p.at[i]
			dst = append(dst, driver.NamedValue{Value: boxed(box, id)})
		}
		dst = append(dst, args[k:]...)
	}
	for i := range dst {
		dst[i].Ordinal = i + 1
	}
	return dst
}

// boxed returns id as an interface value, made by box when there is one.
func boxed(box Boxer, id int64) any {
	if box != nil {
		return box.Box(id)
	}
	return id
}

// GeneratedFor appends to dst[:0], for each of the plan's rows in order,
// the generated key ArgsFor gave it from ids, or 0 when the row kept the
// caller's key; rows and ids are those given to ArgsFor.
func (p *Plan) GeneratedFor(dst []int64, rows Rows, ids []int64) []int64 {
	dst = dst[:0]
	if rows.gen == nil {
		return append(dst, ids...)
	}
	next := 0
	for _, g := range rows.gen {
		if g {
			dst = append(dst, ids[next])
			next++
		} else {
			dst = append(dst, 0)
		}
	}
	return dst
}

// slotArgs is Args for a plan whose rows may give their keys.
func (p *Plan) slotArgs(dst, args []driver.NamedValue, ids []int64, rows Rows, box Boxer) []driver.NamedValue {
	if len(ids) != rows.need || len(rows.gen) != len(p.slots) {
		panic(fmt.Sprintf("rewrite: Plan.ArgsFor got %d IDs for %d keys", len(ids), rows.need))
	}
	// The values of the added placeholders, in order, and the caller's
	// arguments replaced in place.
	var buf [8]driver.NamedValue
	addedVals := buf[:0]
	dst = append(dst[:0], args...)
	next := 0
	for i, s := range p.slots {
		var v any
		switch {
		case rows.gen[i]:
			v = boxed(box, ids[next])
			next++
		case s.arg < len(args):
			v = args[s.arg].Value
		}
		if s.added {
			addedVals = append(addedVals, driver.NamedValue{Value: v})
		} else if s.arg < len(args) {
			dst[s.arg].Value = v
		}
	}
	if len(addedVals) > 0 {
		if !p.positional || len(args) != p.Params {
			dst = append(dst, addedVals...)
		} else {
			// Interleave: added placeholder i comes after at[i] caller
			// arguments. Work from the end so dst can grow in place.
			n := len(dst)
			dst = append(dst, addedVals...)
			k := len(dst) - 1
			for i := len(addedVals) - 1; i >= 0; i-- {
				for n > p.at[i] {
					n--
					dst[k] = dst[n]
					k--
				}
				dst[k] = addedVals[i]
				k--
			}
		}
	}
	for i := range dst {
		dst[i].Ordinal = i + 1
	}
	return dst
}

// Error reports an INSERT into a configured table that the rewriter cannot
// fill and that may not pass unchanged (its key column has no default), or
// a failure to consult the Catalog.
type Error struct {
	Table  string // the configured table, as Table.String
	Pos    int    // byte offset in the query where understanding stopped
	Near   string // up to 40 bytes of the query from Pos
	Reason string // what the rewriter met and what to do about it
	Err    error  // the cause, when there is one (a Catalog error)
}

// Error formats the error with the table, the reason and the position. It
// carries no package prefix: the front door that returns it to its caller
// adds its own (idsql: or pgxid:), since this package is not one a user
// knows.
func (e *Error) Error() string {
	s := "insert into " + e.Table + ": " + e.Reason
	if e.Pos >= 0 {
		s += fmt.Sprintf(" (at byte %d, near %q)", e.Pos, e.Near)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrNoCatalog is the cause of an Error when a Catalog was needed and Plan
// was given none.
var ErrNoCatalog = errors.New("rewrite: no catalog to consult")

func newError(t *Table, q string, pos int, reason string, cause error) *Error {
	e := &Error{Table: t.String(), Pos: pos, Reason: reason, Err: cause}
	if pos >= 0 && pos <= len(q) {
		end := pos + 40
		if end > len(q) {
			end = len(q)
		}
		e.Near = q[pos:end]
	}
	return e
}

// Plan decides how to execute query. It returns nil, nil for statements to
// send unchanged: anything that is not an INSERT into a configured table,
// INSERTs that list the key column, and statements it cannot fill whose
// key columns have database defaults. For an INSERT it fills it returns the
// Plan. Otherwise it returns an *Error.
//
// cat may be nil when no statement needs it; decisions are cached by query
// text for the Rewriter's life, including those the Catalog informed.
// Catalog failures are returned and not cached.
func (r *Rewriter) Plan(ctx context.Context, query string, cat Catalog) (*Plan, error) {
	if len(r.tables) == 0 || !r.mayInsert(query) {
		return nil, nil
	}
	if r.max > 0 {
		if v, ok := r.cache.Load(query); ok {
			e := v.(*entry)
			return e.plan, e.err
		}
	}
	p, keep, err := r.analyze(ctx, query, cat)
	if keep && r.max > 0 && len(query) <= maxCachedQuery {
		r.store(strings.Clone(query), &entry{p, err}) // do not pin a larger buffer
	}
	return p, err
}

func (r *Rewriter) store(query string, e *entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n.Load() >= int64(r.max) {
		// Drop about half the entries, in the map's arbitrary order.
		drop := r.n.Load() - int64(r.max)/2
		r.cache.Range(func(k, _ any) bool {
			r.cache.Delete(k)
			r.n.Add(-1)
			drop--
			return drop > 0
		})
	}
	if _, loaded := r.cache.LoadOrStore(query, e); !loaded {
		r.n.Add(1)
	}
}

// mayInsert is the allocation-free fast reject: a statement that does not
// contain the word INSERT (or REPLACE, in the SQLite and MySQL dialects) in
// any case cannot insert.
func (r *Rewriter) mayInsert(q string) bool {
	for i := 0; i+6 <= len(q); i++ {
		switch q[i] | 0x20 {
		case 'i':
			if foldEq(q[i:i+6], "insert") {
				return true
			}
		case 'r':
			if r.syn.Replace && i+7 <= len(q) && foldEq(q[i:i+7], "replace") {
				return true
			}
		}
	}
	return false
}

// foldEq reports whether s equals the lower-case ASCII word w, ignoring
// ASCII case.
func foldEq(s, w string) bool {
	if len(s) != len(w) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// KeyListed returns the configured table that query inserts into when query
// is a single INSERT statement (a trailing semicolon allowed) that lists the
// table's key column itself and takes VALUES rows (or, in MySQL, assigns the
// key in INSERT ... SET), the case Plan passes through unchanged. The sqlx
// layer uses it to give zero key fields of named arguments a key before they
// are bound.
func (r *Rewriter) KeyListed(query string) (Table, bool) {
	if !r.mayInsert(query) {
		return Table{}, false
	}
	if v, ok := r.listed.Load(query); ok {
		a := v.(listedAnswer)
		return a.t, a.ok
	}
	t, ok := r.keyListed(query)
	if r.max > 0 && len(query) <= maxCachedQuery {
		if r.listedN.Add(1) > int64(r.max) {
			r.listed.Clear()
			r.listedN.Store(1)
		}
		r.listed.Store(strings.Clone(query), listedAnswer{t, ok})
	}
	return t, ok
}

// keyListed is KeyListed without its cache.
func (r *Rewriter) keyListed(query string) (Table, bool) {
	lx := lex(query, r.syn)
	if lx.bad >= 0 || len(lx.toks) == 0 {
		return Table{}, false
	}
	p := &parser{r: r, q: query, toks: lx.toks}
	end := len(p.toks)
	if p.punct(end-1, ';') {
		end--
	}
	for k := range end {
		if p.punct(k, ';') {
			return Table{}, false
		}
	}
	if !p.kw(0, "insert") {
		return Table{}, false
	}
	o := p.insert(0, end, true)
	if o == nil || !o.keyListed || o.failReason != "" {
		return Table{}, false
	}
	if o.ncols < 0 {
		return *o.tbl, true // MySQL: INSERT ... SET key = ...
	}
	// The parser stops at a listed key; VALUES must follow the list's ")".
	k := 0
	for k < end && p.toks[k].start < o.colsEnd {
		k++
	}
	if !p.punct(k, ')') || !(p.kw(k+1, "values") || r.syn.MySQLInsert && p.kw(k+1, "value")) {
		return Table{}, false
	}
	return *o.tbl, true
}
