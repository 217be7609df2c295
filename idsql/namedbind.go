package idsql

import (
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/jmoiron/sqlx"
	"github.com/jmoiron/sqlx/reflectx"
)

// maxNamedQueries bounds a DB's cache of named statements; past it the
// cache starts over.
const maxNamedQueries = 1024

// namedBinds binds NamedExec's statements as sqlx does, without compiling
// a statement's names again at every execution (sqlx's BindNamed does,
// which was the largest part of what NamedExec cost). A statement and an
// argument type are bound through the cache only once a first binding was
// found identical, query and arguments, to sqlx's own; until then, and for
// any argument that is not a struct or a map[string]any, sqlx binds.
type namedBinds struct {
	m sync.Map // query -> *namedQuery
	n atomic.Int64
}

// namedQuery is one named statement compiled: its text with bind
// variables, and the names they take in order.
type namedQuery struct {
	bound string
	names []string
	ok    bool     // the compiled form may be used (names found, no `:` error)
	types sync.Map // reflect.Type -> *namedType
}

// namedType is how an argument type answers a namedQuery's names.
type namedType struct {
	paths [][]int // a struct's field index paths, one per name
	same  bool    // the first binding equalled sqlx's
}

// bind binds query with arg as b.BindNamed would.
func (nb *namedBinds) bind(b binder, mapper *reflectx.Mapper, bindType int, query string, arg any) (string, []any, error) {
	v := reflect.ValueOf(arg)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	m, isMap := arg.(map[string]any)
	if !isMap && v.Kind() != reflect.Struct {
		return b.BindNamed(query, arg) // slices (batch rows), other maps, ...
	}
	q := nb.query(query, bindType)
	if !q.ok {
		return b.BindNamed(query, arg)
	}
	t := v.Type()
	if e, ok := q.types.Load(t); ok {
		if nt := e.(*namedType); nt.same {
			args := make([]any, len(q.names))
			for i, name := range q.names {
				if isMap {
					args[i] = m[name]
				} else {
					args[i] = reflectx.FieldByIndexesReadOnly(v, nt.paths[i]).Interface()
				}
			}
			if !isMap || len(m) >= len(q.names) && hasAll(m, q.names) {
				return q.bound, args, nil
			}
		}
		return b.BindNamed(query, arg)
	}
	// The first binding of this statement with this type: sqlx binds, and
	// the cache serves the type from now on only if it binds the same.
	bound, want, err := b.BindNamed(query, arg)
	nt := &namedType{}
	if !isMap {
		nt.paths = mapper.TraversalsByName(t, q.names)
	}
	if err == nil && bound == q.bound && len(want) == len(q.names) {
		nt.same = true
		for i, name := range q.names {
			var got any
			if isMap {
				got = m[name]
			} else if len(nt.paths[i]) > 0 {
				got = reflectx.FieldByIndexesReadOnly(v, nt.paths[i]).Interface()
			} else {
				nt.same = false
				break
			}
			if !reflect.DeepEqual(got, want[i]) {
				nt.same = false
				break
			}
		}
	}
	q.types.Store(t, nt)
	return bound, want, err
}

// hasAll reports whether m has every name.
func hasAll(m map[string]any, names []string) bool {
	for _, name := range names {
		if _, ok := m[name]; !ok {
			return false
		}
	}
	return true
}

// query returns the compiled form of query.
func (nb *namedBinds) query(query string, bindType int) *namedQuery {
	if e, ok := nb.m.Load(query); ok {
		return e.(*namedQuery)
	}
	q := compileNamed(query, bindType)
	if nb.n.Add(1) > maxNamedQueries {
		nb.m.Clear()
		nb.n.Store(1)
	}
	nb.m.Store(query, q)
	return q
}

// compileNamed replaces each :name of query by a bind variable of
// bindType, as sqlx reads names: a name is letters, digits, '_' and '.';
// "::" stands for one ':' and ":=" is kept as it is. A ':' inside a name
// leaves the statement to sqlx (ok false), which reports it.
func compileNamed(query string, bindType int) *namedQuery {
	q := &namedQuery{ok: true}
	out := make([]byte, 0, len(query))
	n := 0
	for i := 0; i < len(query); i++ {
		c := query[i]
		if c != ':' {
			out = append(out, c)
			continue
		}
		switch {
		case i+1 < len(query) && query[i+1] == ':':
			out = append(out, ':')
			i++
			continue
		case i+1 < len(query) && query[i+1] == '=':
			out = append(out, ':', '=')
			i++
			continue
		}
		j := i + 1
		for j < len(query) && isNameByte(query[j]) {
			j++
		}
		if j == i+1 || j < len(query) && query[j] == ':' {
			q.ok = false // an empty name, or ':' inside one: sqlx decides
			return q
		}
		q.names = append(q.names, query[i+1:j])
		n++
		switch bindType {
		case sqlx.DOLLAR:
			out = append(append(out, '$'), strconv.Itoa(n)...)
		case sqlx.QUESTION, sqlx.UNKNOWN:
			out = append(out, '?')
		default:
			q.ok = false // named and @p bind variables: sqlx binds
			return q
		}
		i = j - 1
	}
	q.bound = string(out)
	return q
}

// isNameByte reports whether c may be part of a named parameter's name.
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.'
}
