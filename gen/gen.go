package gen

import (
	"bytes"
	"errors"
	"fmt"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/shape"
)

// Options say what to generate. Package is required; the zero value of the
// other fields means the default.
type Options struct {
	// Package is the generated file's package name. Required.
	Package string
	// Source is the configuration's path as written in the generated
	// header; empty means "idsql.yaml". Keep it relative, so the file does
	// not depend on where the repository is checked out.
	Source string
	// Output is the generated file's name as CheckConfig's errors mention
	// it; empty means "idsql_gen.go".
	Output string
}

func (o Options) withDefaults() Options {
	if o.Source == "" {
		o.Source = "idsql.yaml"
	}
	if o.Output == "" {
		o.Output = "idsql_gen.go"
	}
	return o
}

// Table is one configured table as the generated code names it.
type Table struct {
	Name     string // the configured table name, e.g. "public.order_items"
	Strategy keyset.Strategy
	GoName   string // the go_name override, "" when derived
	Type     string // the Go type name, e.g. "OrderItemID"
	// Gene is the shard and app layout of a segment table's keys; the zero
	// Gene for plain keys.
	Gene keyset.Gene
	// ShardColumn is the column a sharded table takes each key's shard from.
	ShardColumn string
	// Text is the table's text form; the zero TextForm for decimal.
	Text keyset.TextForm
	// Shape is the table's key shape, and Space the key space it acts
	// in (keyset.Config.Codec); the zero Shape for ordered.
	Shape keyset.Shape
	Space shape.Space
}

// Spread reports whether the table's shape is a spread.
func (t Table) Spread() bool { return !t.Shape.IsOrdered() }

// Tables returns cfg's tables in name order with their Go type names. Two
// tables whose generated identifiers would clash are an error naming both;
// errors are *keyset.FieldError values naming the field (without a file or
// line: GenerateFile adds those).
func Tables(cfg *keyset.Config) ([]Table, error) {
	var out []Table
	owner := map[string]string{} // generated identifier -> table
	for _, name := range reserved {
		owner[name] = ""
	}
	for _, name := range cfg.TableNames() {
		tc := cfg.Tables[name]
		t := Table{Name: name, Strategy: tc.Strategy, GoName: tc.GoName, Gene: tc.Gene(), Text: tc.Text}
		if tc.Spread() {
			codec, err := cfg.Codec(name)
			if err != nil {
				return nil, err
			}
			f := codec.ShapeFunc()
			t.Shape, t.Space = f.Shape(), f.Space()
		}
		if tc.Shard != nil {
			t.ShardColumn = tc.Shard.Column
		}
		field := "tables." + name
		switch {
		case tc.GoName != "":
			if !validTypeName(tc.GoName) {
				return nil, &keyset.FieldError{Field: field + ".go_name",
					Err: fmt.Errorf("%q is not an exported Go identifier", tc.GoName)}
			}
			t.Type = tc.GoName
			field += ".go_name"
		default:
			typ, err := TypeName(name)
			if err != nil {
				return nil, &keyset.FieldError{Field: field, Err: err}
			}
			t.Type = typ
		}
		switch tc.Strategy {
		case keyset.Snowflake, keyset.Segment:
		case keyset.UUID7:
			return nil, &keyset.FieldError{Field: "tables." + name + ".strategy",
				Err: errors.New("idsqlgen does not emit key types for uuid7 tables yet: leave the table out of the generator's configuration")}
		default:
			return nil, &keyset.FieldError{Field: "tables." + name + ".strategy",
				Err: fmt.Errorf("unknown strategy %q", tc.Strategy)}
		}
		for _, id := range identifiers(t.Type) {
			other, taken := owner[id]
			switch {
			case taken && other == "":
				return nil, &keyset.FieldError{Field: field,
					Err: fmt.Errorf("generated name %s of table %q is reserved by idsqlgen; set go_name", id, name)}
			case taken:
				return nil, &keyset.FieldError{Field: field,
					Err: fmt.Errorf("generated name %s of table %q clashes with table %q's; set go_name on one of them", id, name, other)}
			}
			owner[id] = name
		}
		out = append(out, t)
	}
	return out, nil
}

// reserved are the package-level names every generated file declares.
var reserved = []string{"IDSource", "ErrInvalidID", "CheckConfig", "LookupTable"}

// identifiers lists the package-level names generated for a type.
func identifiers(typ string) []string {
	return []string{typ, typ + "Table", typ + "Parts", "New" + typ, "New" + typ + "s", "Decode" + typ, "Parse" + typ,
		typ + "ShardOf", "New" + typ + "For"}
}

// Generate returns the Go source of typed ID helpers for cfg's tables.
func Generate(cfg *keyset.Config, opts Options) ([]byte, error) {
	opts = opts.withDefaults()
	if !token.IsIdentifier(opts.Package) || opts.Package == "_" {
		return nil, fmt.Errorf("gen: package name %q is not a Go identifier", opts.Package)
	}
	if len(cfg.Tables) == 0 {
		return nil, &keyset.FieldError{Field: "tables", Err: errors.New("no tables to generate")}
	}
	tables, err := Tables(cfg)
	if err != nil {
		return nil, err
	}
	var layout *layoutSpec
	if slices.ContainsFunc(tables, func(t Table) bool { return t.Strategy == keyset.Snowflake }) {
		l, err := cfg.SnowflakeLayout()
		if err != nil {
			return nil, &keyset.FieldError{Field: "layout", Err: err}
		}
		layout = &layoutSpec{l}
	}
	f := render(cfg, opts, tables, layout)
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("gen: render: %w", err)
	}
	return buf.Bytes(), nil
}

// GenerateFile reads and validates the configuration at path and generates
// its helpers. Configuration errors are *keyset.FieldError values naming the
// file, line and field. opts.Source defaults to path.
func GenerateFile(path string, opts Options) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gen: %w", err)
	}
	cfg, err := keyset.Parse(path, data, time.Now())
	if err != nil {
		return nil, err
	}
	if opts.Source == "" {
		opts.Source = filepath.ToSlash(path)
	}
	out, err := Generate(cfg, opts)
	if fe, ok := errors.AsType[*keyset.FieldError](err); ok && fe.File == "" {
		fe.File = path
		fe.Line = keyset.FieldLine(data, fe.Field)
	}
	return out, err
}

// WriteFile generates the helpers for the configuration at configPath into
// outPath. It writes through a temporary file and a rename, so a failed run
// leaves the old file as it was, and leaves a file that is already up to
// date untouched (its modification time too).
func WriteFile(configPath, outPath string, opts Options) error {
	if opts.Output == "" {
		opts.Output = filepath.Base(outPath)
	}
	src, err := GenerateFile(configPath, opts)
	if err != nil {
		return err
	}
	if old, err := os.ReadFile(outPath); err == nil && bytes.Equal(old, src) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(outPath), "."+filepath.Base(outPath)+".*")
	if err != nil {
		return fmt.Errorf("gen: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(src); err != nil {
		tmp.Close()
		return fmt.Errorf("gen: write %s: %w", outPath, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("gen: write %s: %w", outPath, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("gen: write %s: %w", outPath, err)
	}
	if err := os.Rename(tmp.Name(), outPath); err != nil {
		return fmt.Errorf("gen: write %s: %w", outPath, err)
	}
	return nil
}
