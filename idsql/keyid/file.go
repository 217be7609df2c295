package keyid

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// File describes what a generated file was generated from, as far as its
// code depends on it. Generated code builds one where it needs it (it keeps
// no package-level state) and calls its methods.
type File struct {
	// Package is the generated package's name; it prefixes errors.
	Package string
	// Name is the generated file's name, "idsql_gen.go", as errors name it.
	Name string
	// Layout is the snowflake layout baked into the file; the zero Layout
	// (no time bits) when no table is a snowflake table.
	Layout snowflake.Layout
	// Tables are the tables the file declares types for.
	Tables []Table
}

// Table is one table a generated file declares a key type for.
type Table struct {
	Name     string // the configured table name: "public.order_items"
	Type     string // the key type's name: "OrderItemID"
	Strategy string // "snowflake" or "segment"
	GoName   string // the configured go_name; "" when the name was derived
	// Gene is the shard and app layout of a segment table's keys; the zero
	// Gene for plain keys.
	Gene keyset.Gene
	// Text is the table's text form; the zero TextForm for decimal.
	Text keyset.TextForm
	// Shape is the table's key shape; the zero Shape for ordered.
	Shape keyset.Shape
}

// TypeOf returns the name of the key type f declares for table, or "".
func (f *File) TypeOf(table string) string {
	for _, t := range f.Tables {
		if t.Name == table {
			return t.Type
		}
	}
	return ""
}

// Check reports whether cfg is the configuration f was generated from, as
// far as the generated code depends on it: the snowflake layout (when f
// has one), and every table's name, strategy, go_name, key layout and text
// form. The error names
// every difference.
func (f *File) Check(cfg *keyset.Config) error {
	if cfg == nil {
		return fmt.Errorf("%s: CheckConfig: nil configuration", f.Package)
	}
	var errs []error
	if f.Layout.TimeBits != 0 {
		errs = append(errs, f.checkLayout(cfg))
	}
	for _, t := range f.Tables {
		errs = append(errs, checkTable(cfg, t))
	}
	for _, name := range cfg.TableNames() {
		if f.TypeOf(name) == "" {
			errs = append(errs, fmt.Errorf("table %q is configured but has no generated type", name))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%s: %s does not match the configuration; run go generate: %w", f.Package, f.Name, err)
	}
	return nil
}

// checkLayout compares cfg's layout with f's. The layouts' names do not
// matter: a preset and the same bits written out decode alike.
func (f *File) checkLayout(cfg *keyset.Config) error {
	got, err := cfg.SnowflakeLayout()
	if err != nil {
		return err
	}
	want := f.Layout
	if got.TimeBits != want.TimeBits || got.WorkerBits != want.WorkerBits || got.SequenceBits != want.SequenceBits ||
		got.Unit != want.Unit || !got.Epoch.Equal(want.Epoch) || got.WorkerLow != want.WorkerLow {
		return fmt.Errorf("layout is %s, generated for %s", describe(got), describe(want))
	}
	return nil
}

// describe describes a layout for CheckConfig's errors.
func describe(l snowflake.Layout) string {
	order := ""
	if l.WorkerLow {
		order = " (worker below sequence)"
	}
	return fmt.Sprintf("%d/%d/%d bits%s of %v since %s", l.TimeBits, l.WorkerBits, l.SequenceBits, order, l.Unit,
		l.Epoch.UTC().Format(time.RFC3339Nano))
}

// describeGene describes a gene layout for CheckConfig's errors.
func describeGene(g keyset.Gene) string {
	if g.Plain() {
		return "plain (no shard or app bits)"
	}
	return fmt.Sprintf("%d shard bits, app %d in %d bits", g.ShardBits, g.App, g.AppBits)
}

// checkTable compares one table of cfg with the generated one.
func checkTable(cfg *keyset.Config, t Table) error {
	c, ok := cfg.Tables[t.Name]
	switch {
	case !ok:
		return fmt.Errorf("table %q is no longer configured", t.Name)
	case string(c.Strategy) != t.Strategy:
		return fmt.Errorf("table %q has strategy %s, generated for %s", t.Name, c.Strategy, t.Strategy)
	case c.GoName != t.GoName:
		return fmt.Errorf("table %q has go_name %q, generated for %q", t.Name, c.GoName, t.GoName)
	case c.Gene() != t.Gene:
		return fmt.Errorf("table %q has key layout %s, generated for %s", t.Name, describeGene(c.Gene()), describeGene(t.Gene))
	case c.Text.Encoding != t.Text.Encoding || c.Text.Prefix != t.Text.Prefix || c.Text.KeyEnv != t.Text.KeyEnv:
		// Field by field: a generated typeid form is bound to its layout,
		// which CheckConfig compares on its own.
		return fmt.Errorf("table %q has text form %s, generated for %s", t.Name, c.Text, t.Text)
	case c.Shape.String() != t.Shape.String():
		return fmt.Errorf("table %q has shape %s, generated for %s", t.Name, c.Shape, t.Shape)
	}
	return nil
}

// Origin looks id up in the idsql records of db (PostgreSQL, the database
// the keys were issued with; see idsql.Lookup) and returns the lease or
// segment range it came from as a key of table. It fails with Check's error
// when cfg does not match f, and wraps idsql.ErrNotFound when no record says
// table issued id.
func (f *File) Origin(ctx context.Context, db *sql.DB, cfg *keyset.Config, table string, id int64) (idsql.Origin, error) {
	if err := f.Check(cfg); err != nil {
		return idsql.Origin{}, err
	}
	origins, err := idsql.Lookup(ctx, db, cfg, id)
	if err != nil {
		return idsql.Origin{}, err
	}
	for _, o := range origins {
		if o.Table == table {
			return o, nil
		}
	}
	return idsql.Origin{}, fmt.Errorf("%s: %d was not issued for %s: %w", f.Package, id, table, idsql.ErrNotFound)
}

// Lookup says which of f's key types an arbitrary ID belongs to
// ("OrderID"), from the idsql records in db through idsql.Lookup. It fails
// with Check's error when cfg does not match f, wraps idsql.ErrNotFound
// when no record of one of f's tables explains id, and names every
// candidate when several do (segment ranges of different tables can hold
// the same number).
func (f *File) Lookup(ctx context.Context, db *sql.DB, cfg *keyset.Config, id int64) (string, error) {
	if err := f.Check(cfg); err != nil {
		return "", err
	}
	origins, err := idsql.Lookup(ctx, db, cfg, id)
	if err != nil {
		return "", err
	}
	var names []string
	for _, o := range origins {
		if n := f.TypeOf(o.Table); n != "" && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	switch len(names) {
	case 0:
		return "", fmt.Errorf("%s: lookup %d: no generated table: %w", f.Package, id, idsql.ErrNotFound)
	case 1:
		return names[0], nil
	}
	return "", fmt.Errorf("%s: lookup %d: ambiguous: %s", f.Package, id, strings.Join(names, " or "))
}
