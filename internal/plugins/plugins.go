// Package plugins is the table idsql's plug-ins register in by name, as
// database/sql's drivers do: holder kinds (holder/holderkind), segment
// stores and key buffers (idsql/kinds). A name that is not registered is
// an error that says which import registers it, when it is one of idsql's
// own, or which names are known.
package plugins

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Table holds the plug-ins of one sort, by name.
type Table[T any] struct {
	what    string            // the sort, in messages: "holder", "segment store"
	imports map[string]string // name -> the package of idsql that registers it
	mu      sync.RWMutex
	m       map[string]T
}

// New returns an empty table of plug-ins called what in messages; imports
// names the package that registers each of idsql's own, for the error a
// program that does not link one gets.
func New[T any](what string, imports map[string]string) *Table[T] {
	return &Table[T]{what: what, imports: imports, m: map[string]T{}}
}

// Register adds v under name; it panics when the name is taken, as
// sql.Register does.
func (t *Table[T]) Register(name string, v T) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, dup := t.m[name]; dup {
		panic(fmt.Sprintf("%s %q registered twice", t.what, name))
	}
	t.m[name] = v
}

// Get returns what is registered under name, if anything.
func (t *Table[T]) Get(name string) (T, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	v, ok := t.m[name]
	return v, ok
}

// Lookup returns what is registered under name, or an error that says
// which import registers it, or which names are known.
func (t *Table[T]) Lookup(name string) (T, error) {
	if v, ok := t.Get(name); ok {
		return v, nil
	}
	var zero T
	if path, known := t.imports[name]; known {
		return zero, fmt.Errorf("%s %q is not linked in: add import _ %q", t.what, name, path)
	}
	names := t.Names()
	for n := range t.imports {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return zero, fmt.Errorf("unknown %s %q (none is registered)", t.what, name)
	}
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	return zero, fmt.Errorf("unknown %s %q (want %s)", t.what, name, want)
}

// Names returns the registered names, sorted.
func (t *Table[T]) Names() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := make([]string, 0, len(t.m))
	for n := range t.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns a copy of the table.
func (t *Table[T]) All() map[string]T {
	t.mu.RLock()
	defer t.mu.RUnlock()
	all := make(map[string]T, len(t.m))
	for n, v := range t.m {
		all[n] = v
	}
	return all
}
