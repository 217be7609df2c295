package gen

import (
	"fmt"
	"go/token"
	"strings"
	"unicode"
)

// initialisms are words written in capitals in Go names (a short list after
// golint's: only those likely in table names).
var initialisms = map[string]string{
	"api": "API", "http": "HTTP", "id": "ID", "ip": "IP", "json": "JSON",
	"sql": "SQL", "uid": "UID", "uri": "URI", "url": "URL", "uuid": "UUID",
}

// TypeName derives the Go type name of a table's keys: the table name
// without its schema, in CamelCase, its last word made singular, plus "ID".
//
//	orders             -> OrderID
//	public.order_items -> OrderItemID
//	categories         -> CategoryID
//	Audit              -> AuditID
//
// Singular forms are simple ("ies" -> "y", "sses"/"xes"/"ches"/"shes" lose
// "es", a final "s" goes unless the word ends in "ss", "us" or "is");
// set go_name in the configuration where they are wrong.
func TypeName(table string) (string, error) {
	name := table
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	var words []string
	for w := range strings.SplitSeq(name, "_") {
		if w != "" {
			words = append(words, w)
		}
	}
	if len(words) == 0 {
		return "", fmt.Errorf("cannot derive a Go name from %q; set go_name", table)
	}
	words[len(words)-1] = singular(words[len(words)-1])
	var b strings.Builder
	for _, w := range words {
		if up, ok := initialisms[strings.ToLower(w)]; ok {
			b.WriteString(up)
			continue
		}
		b.WriteString(strings.ToUpper(w[:1]))
		b.WriteString(w[1:])
	}
	b.WriteString("ID")
	out := b.String()
	if !token.IsIdentifier(out) || !unicode.IsUpper(rune(out[0])) {
		return "", fmt.Errorf("cannot derive a Go name from %q (got %q); set go_name", table, out)
	}
	return out, nil
}

// singular returns a plural English word's singular, by the simple rules
// TypeName documents. The case of the word is kept.
func singular(w string) string {
	lw := strings.ToLower(w)
	switch {
	case len(lw) > 3 && strings.HasSuffix(lw, "ies"):
		return w[:len(w)-3] + matchCase(w[len(w)-3:], "y")
	case strings.HasSuffix(lw, "sses"), strings.HasSuffix(lw, "xes"),
		strings.HasSuffix(lw, "ches"), strings.HasSuffix(lw, "shes"):
		return w[:len(w)-2]
	case strings.HasSuffix(lw, "ss"), strings.HasSuffix(lw, "us"), strings.HasSuffix(lw, "is"):
		return w
	case len(lw) > 1 && strings.HasSuffix(lw, "s"):
		return w[:len(w)-1]
	}
	return w
}

// matchCase returns repl in upper case when like is upper case.
func matchCase(like, repl string) string {
	if like == strings.ToUpper(like) {
		return strings.ToUpper(repl)
	}
	return repl
}

// validTypeName reports whether a go_name override can name a generated
// type: an exported Go identifier.
func validTypeName(name string) bool {
	return token.IsIdentifier(name) && unicode.IsUpper(rune(name[0]))
}
