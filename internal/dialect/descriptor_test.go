package dialect

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// descriptorFiles are the files that describe one database each, by the
// descriptor they declare.
var descriptorFiles = map[string]string{
	"postgres.go": "postgresDescriptor",
	"mysql.go":    "mysqlDescriptor",
	"sqlite.go":   "sqliteDescriptor",
}

// TestDescriptorsAnswerEveryQuestion reads each database's file and fails
// on a field of the descriptor, or of a struct inside it, that the file's
// literal leaves out: a database added or a question asked later must be
// answered for every database, false and "" included, instead of reading
// as a zero value nobody wrote. Only the worker table may be left empty as
// a whole (registrySpec{}), which says the database keeps none.
func TestDescriptorsAnswerEveryQuestion(t *testing.T) {
	fset := token.NewFileSet()
	structs := map[string][]string{} // type name -> field names
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files[name] = f
		{
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						structs[ts.Name.Name] = append(structs[ts.Name.Name], id.Name)
					}
				}
				return false
			})
		}
	}
	for _, want := range []string{"descriptor", "spec", "Syntax", "facts", "statementSpec", "registrySpec"} {
		if len(structs[want]) == 0 {
			t.Fatalf("struct %s not found in the package's source", want)
		}
	}
	if len(descriptorFiles) != len(descriptors)-1 {
		t.Fatalf("%d descriptor files for %d dialects", len(descriptorFiles), len(descriptors)-1)
	}
	for file, varName := range descriptorFiles {
		f := files[file]
		if f == nil {
			t.Fatalf("%s not parsed", file)
		}
		lit := findVar(f, varName)
		if lit == nil {
			t.Fatalf("%s declares no %s", file, varName)
		}
		checkAnswers(t, file, "descriptor", lit, structs)
	}
}

// findVar returns the composite literal a file's var name is set to.
func findVar(f *ast.File, name string) *ast.CompositeLit {
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if id.Name == name && i < len(vs.Values) {
					lit, _ := vs.Values[i].(*ast.CompositeLit)
					return lit
				}
			}
		}
	}
	return nil
}

// checkAnswers fails for each field of struct typ that lit leaves out,
// and checks the literals of the package's structs inside it the same way.
func checkAnswers(t *testing.T, where, typ string, lit *ast.CompositeLit, structs map[string][]string) {
	t.Helper()
	if typ == "registrySpec" && len(lit.Elts) == 0 {
		return // no worker table
	}
	keyed := map[string]bool{}
	for _, e := range lit.Elts {
		kv, ok := e.(*ast.KeyValueExpr)
		if !ok {
			t.Errorf("%s: %s literal with an unkeyed element", where, typ)
			continue
		}
		key := kv.Key.(*ast.Ident).Name
		keyed[key] = true
		inner := kv.Value
		if u, ok := inner.(*ast.UnaryExpr); ok && u.Op == token.AND {
			inner = u.X
		}
		if c, ok := inner.(*ast.CompositeLit); ok {
			if id, ok := c.Type.(*ast.Ident); ok && structs[id.Name] != nil {
				checkAnswers(t, where+": "+key, id.Name, c, structs)
			}
		}
	}
	var missing []string
	for _, f := range structs[typ] {
		if !keyed[f] {
			missing = append(missing, f)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("%s: %s leaves unanswered: %s", where, typ, strings.Join(missing, ", "))
	}
}
