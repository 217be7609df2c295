package keyset

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// errEmptyConfig is Parse's error for a file with no YAML document (empty,
// or comments only).
var errEmptyConfig = errors.New("the file is empty (or holds only comments); a configuration needs at least a namespace and its tables, e.g.\n" +
	"  namespace: shop\n" +
	"  tables:\n" +
	"    orders: {strategy: snowflake}")

// unknownFieldRE matches the message yaml gives for a key that names no
// field of a struct decoded with KnownFields.
var unknownFieldRE = regexp.MustCompile(`^line (\d+): field (.+) not found in type (\S+)$`)

// unknownKeyError turns the first unknown-key message of a *yaml.TypeError
// into a *FieldError naming the YAML key (not the Go type) and the nearest
// known key, or returns nil when err holds none.
func unknownKeyError(data []byte, err error) *FieldError {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return nil
	}
	keys := yamlKeys()
	for _, msg := range te.Errors {
		m := unknownFieldRE.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		line, _ := strconv.Atoi(m[1])
		key, known := m[2], keys[m[3]]
		field := key
		if parent := keyParent(data, line, key); parent != "" {
			field = parent + "." + key
		}
		var b strings.Builder
		fmt.Fprintf(&b, "unknown key %q", key)
		if near := nearestKey(key, known); near != "" {
			fmt.Fprintf(&b, "; did you mean %q?", near)
		}
		if len(known) > 0 {
			fmt.Fprintf(&b, " (keys here: %s)", strings.Join(known, ", "))
		}
		return &FieldError{Line: line, Field: field, Err: errors.New(b.String())}
	}
	return nil
}

// yamlKeys maps the Go type names yaml puts in its messages
// ("keyset.TableConfig") to the YAML keys of that struct, for every struct
// reachable from Config.
func yamlKeys() map[string][]string {
	out := map[string][]string{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || out[t.String()] != nil {
			return
		}
		var names []string
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			names = append(names, name)
		}
		out[t.String()] = names
		for i := range t.NumField() {
			if t.Field(i).Tag.Get("yaml") != "" {
				walk(t.Field(i).Type)
			}
		}
	}
	walk(reflect.TypeOf(Config{}))
	return out
}

// keyParent returns the dotted path of the mapping holding key at line in
// the YAML document data ("tables.orders"), or "" at the top level or when
// it cannot be found.
func keyParent(data []byte, line int, key string) string {
	var root yaml.Node
	if yaml.Unmarshal(data, &root) != nil || len(root.Content) == 0 {
		return ""
	}
	var find func(n *yaml.Node, path string) (string, bool)
	find = func(n *yaml.Node, path string) (string, bool) {
		if n.Kind != yaml.MappingNode {
			return "", false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Line == line && k.Value == key {
				return path, true
			}
			sub := k.Value
			if path != "" {
				sub = path + "." + k.Value
			}
			if p, ok := find(n.Content[i+1], sub); ok {
				return p, true
			}
		}
		return "", false
	}
	p, _ := find(root.Content[0], "")
	return p
}

// nearestKey returns the known key closest to key by edit distance, if it
// is close enough to be a likely typo, else "".
func nearestKey(key string, known []string) string {
	best, bestD := "", len(key)/3+2
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
