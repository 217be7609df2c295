package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// decoded is one ID taken apart, as --json prints it.
type decoded struct {
	ID       int64     `json:"id"`
	Time     time.Time `json:"time"`
	UnixMs   int64     `json:"unix_ms"`
	Worker   int64     `json:"worker"`
	Sequence int64     `json:"sequence"`
	Layout   string    `json:"layout"`
	// Table is the table whose text form the ID was given in, or the
	// --table given; "" for decimal.
	Table string `json:"table,omitempty"`
	// Key is ID before its table's shape (tables.T.shape), when the
	// shape is a spread; what time, worker and sequence describe.
	Key   int64  `json:"key,omitempty"`
	Shape string `json:"shape,omitempty"`
	// Text is ID in its table's text form (tables.T.text), whatever form
	// it was given in; "" for a decimal form or no table.
	Text string `json:"text,omitempty"`
	// UUID is the UUID the ID was given as, canonical (a uuid7 table's
	// key; ID is the key it carries); "" for other IDs.
	UUID  string `json:"uuid,omitempty"`
	Error string `json:"error,omitempty"`
	// Note warns of a decoding that is valid but unlikely, such as a time
	// right after the layout's epoch.
	Note string `json:"note,omitempty"`
}

// epochNote says why an ID whose time lies within a day of the layout's
// epoch is probably not a snowflake ID of that layout: every small number
// decodes to such a time.
func epochNote(p snowflake.Parts, l snowflake.Layout) string {
	since := p.Time.Sub(l.Epoch)
	if since >= 24*time.Hour {
		return ""
	}
	return fmt.Sprintf("its time is only %s after the layout's epoch (%s): a small number, more likely a segment ID or another counter than a snowflake ID",
		since, l.Epoch.UTC().Format(time.DateOnly))
}

// decodedSegment is one key of a segment table taken apart, as --table
// --json prints it: its shape undone (Key, the counter's number for a
// table without shard or app bits) and its shard and app bits.
type decodedSegment struct {
	ID    int64  `json:"id"`
	Table string `json:"table"`
	Key   int64  `json:"key,omitempty"`   // before the shape, when the table has one
	Shape string `json:"shape,omitempty"` // the table's spread shape
	Index int64  `json:"index"`
	Shard int    `json:"shard"`
	App   int64  `json:"app"`
	Error string `json:"error,omitempty"`
}

func runDecode(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("decode", "[--config idsql.yaml [--table T] | --layout leaf] [--json] ID...",
		"Takes snowflake IDs apart into time, worker ID and sequence. The layout comes\n"+
			"from --config (its layout:) or --layout (leaf, uid32, sony, sony-widths, js53); default leaf.\n"+
			"With --table, takes keys of that segment table apart into index, shard and app\n"+
			"(its shard: and app: bits in --config), or keys of that snowflake table, undoing\n"+
			"the table's shape (tables.T.shape; needed for a table with a spread shape). With --config\n"+
			"an ID may also be given in a table's text form (tables.T.text, e.g. ord_8VQTtCjBWgS,\n"+
			"or a TypeID such as user_01jq8y6t0070000000000g2w8a), and a key of a uuid7 table as\n"+
			"its UUID (any usual text form), which gives the key it carries; a keyed form's text\n"+
			"(text.key_env) needs its secret in the environment variable it names.", stderr)
	cfgPath := fs.String("config", "", "configuration file whose layout to use")
	table := fs.String("table", "", "table whose keys the IDs are: a segment or snowflake table, whose shape is undone (needs --config)")
	layoutName := fs.String("layout", "", "layout preset: leaf, uid32, sony (sony/sonyflake's IDs), sony-widths or js53")
	asJSON := fs.Bool("json", false, "print a JSON array instead of text")
	ids, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(ids) == 0 {
		return usagef("no ID given")
	}
	if *cfgPath != "" && *layoutName != "" {
		return usagef("give --config or --layout, not both")
	}
	if *table != "" && *cfgPath == "" {
		return usagef("--table needs --config")
	}
	layout := snowflake.Leaf
	// parseID reads an ID: in decimal, or with --config in a table's text form.
	parseID := func(s string) (int64, string, error) {
		id, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, "", fmt.Errorf("%q is not a 64-bit decimal integer (give --config to read the tables' text forms)", s)
		}
		return id, "", nil
	}
	var codecs *keyset.Codecs // the configuration's table codecs; nil without --config
	switch {
	case *cfgPath != "":
		cfg, err := loadConfig(*cfgPath, true)
		if err != nil {
			return err
		}
		if codecs, err = cfg.Codecs(); err != nil {
			return err
		}
		parseID = shapedKeys(codecs, *table)
		if tc := cfg.Tables[*table]; *table != "" && !tc.Leased() {
			return decodeSegment(cfg, codecs, *table, ids, *asJSON, stdout, stderr)
		}
		if layout, err = cfg.SnowflakeLayout(); err != nil {
			return err
		}
	case *layoutName != "":
		if layout, err = snowflake.Preset(*layoutName); err != nil {
			return usagef("%v", err)
		}
	}
	now := time.Now()
	var out []decoded
	failed := 0
	for _, s := range ids {
		d := decoded{Layout: layout.Name}
		id, table, err := parseID(s)
		if err != nil {
			d.Error = err.Error()
		} else {
			d.ID, d.Table = id, table
			d.Text = textOf(codecs, table, id)
			if b, err := keyform.ParseUUID(s); err == nil {
				d.UUID = keyform.FormatUUID(b) // read as the key it carries (keyset.Codecs.ParseKey)
			}
			key, shape, err := unshape(codecs, table, id)
			if err == nil {
				if shape != "" {
					d.Key, d.Shape = key, shape
				}
				var p snowflake.Parts
				if p, err = layout.Decode(key, now, time.Minute); err == nil {
					d.Time, d.UnixMs, d.Worker, d.Sequence = p.Time.UTC(), p.Time.UnixMilli(), p.Worker, p.Sequence
					d.Note = epochNote(p, layout)
				}
			}
			if err != nil {
				d.Error = err.Error()
			}
		}
		if d.Error != "" {
			failed++
			if !*asJSON {
				fmt.Fprintf(stderr, "idsql decode: %s: %s\n", s, d.Error)
			}
		}
		out = append(out, d)
	}
	if *asJSON {
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		for i, d := range out {
			if d.Error != "" {
				continue
			}
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			if d.UUID != "" {
				fmt.Fprintf(stdout, "%s\n  key       ", d.UUID)
			}
			fmt.Fprintf(stdout, "%d\n  time      %s (unix ms %d)\n  worker    %d\n  sequence  %d\n  layout    %s\n",
				d.ID, d.Time.Format("2006-01-02T15:04:05.000Z07:00"), d.UnixMs, d.Worker, d.Sequence, layout)
			if d.Shape != "" {
				fmt.Fprintf(stdout, "  shape     %s of table %s: key %d before it\n", d.Shape, d.Table, d.Key)
			}
			if d.Text != "" {
				fmt.Fprintf(stdout, "  text      %s, the text form of table %s\n", d.Text, d.Table)
			}
			if d.Note != "" {
				fmt.Fprintf(stdout, "  note      %s\n", d.Note)
			}
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d IDs could not be decoded", failed, len(ids))
	}
	return nil
}

// textOf returns id in table's text form (Codec.Format: "!(why)" when the
// form cannot write it, as a keyed form whose secret's variable is unset);
// "" for no table or a decimal form.
func textOf(codecs *keyset.Codecs, table string, id int64) string {
	if codecs == nil || table == "" {
		return ""
	}
	if c, err := codecs.Of(table); err == nil && !c.Form().Decimal() {
		return c.Format(id)
	}
	return ""
}

// decodeSegment takes keys of a segment table apart: its shape undone,
// then its shard and app bits.
func decodeSegment(cfg *keyset.Config, codecs *keyset.Codecs, table string, ids []string, asJSON bool, stdout, stderr io.Writer) error {
	tc, ok := cfg.Tables[table]
	if !ok || tc.Strategy != keyset.Segment {
		return usagef("--table %s: not a table of the configuration", table)
	}
	g := tc.Gene()
	codec, err := codecs.Of(table)
	if err != nil {
		return err
	}
	var out []decodedSegment
	failed := 0
	for _, s := range ids {
		d := decodedSegment{Table: table}
		id, from, err := codecs.ParseKey(s)
		switch {
		case err != nil:
			d.Error = err.Error()
		case from != "" && from != table:
			d.Error = fmt.Sprintf("a key of table %s (its text form), not of table %s", from, table)
		default:
			key, err := codec.Unshape(id)
			if err != nil {
				d.Error = err.Error()
				break
			}
			p := g.Decompose(key)
			d.ID, d.Index, d.Shard, d.App = id, p.Index, p.Shard, p.App
			if codec.Spread() {
				d.Key, d.Shape = key, codec.ShapeFunc().Shape().String()
			}
			if p.App != g.App || p.Index < 1 {
				d.Error = fmt.Sprintf("not a key of table %s: app bits %d (want %d), index %d", table, p.App, g.App, p.Index)
			}
		}
		if d.Error != "" {
			failed++
			if !asJSON {
				fmt.Fprintf(stderr, "idsql decode: %s: %s\n", s, d.Error)
			}
		}
		out = append(out, d)
	}
	if asJSON {
		if err := printJSON(stdout, out); err != nil {
			return err
		}
	} else {
		first := true
		for _, d := range out {
			if d.Error != "" {
				continue
			}
			if !first {
				fmt.Fprintln(stdout)
			}
			first = false
			fmt.Fprintf(stdout, "%d\n  table     %s\n", d.ID, table)
			if d.Shape != "" {
				fmt.Fprintf(stdout, "  shape     %s: key %d before it\n", d.Shape, d.Key)
			}
			if !g.Plain() {
				fmt.Fprintf(stdout, "  shard     %d of %d\n  app       %d\n", d.Shard, g.Shards(), d.App)
			}
			fmt.Fprintf(stdout, "  index     %d\n", d.Index)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d IDs could not be decoded", failed, len(ids))
	}
	return nil
}

// shapedKeys returns what reads an ID with the codecs: Codecs.ParseKey,
// the ID's table being the one --table names when its text form does not
// name one.
func shapedKeys(codecs *keyset.Codecs, table string) func(string) (int64, string, error) {
	return func(s string) (int64, string, error) {
		id, from, err := codecs.ParseKey(s)
		switch {
		case err != nil:
			return 0, "", err
		case from != "" && table != "" && from != table:
			return 0, "", fmt.Errorf("a key of table %s (its text form), not of table %s", from, table)
		case from == "":
			from = table
		}
		return id, from, nil
	}
}

// unshape returns id before the shape of table and the shape's name, ""
// for an ordered table (keyset.Codecs.UnshapeKey). Without a table (a
// decimal ID, no --table) a configuration with spread snowflake tables is
// refused: the ID could be a key of any of them, each shape reading it
// differently. Without a configuration (codecs nil) the ID is the key.
func unshape(codecs *keyset.Codecs, table string, id int64) (int64, string, error) {
	if codecs == nil {
		return id, "", nil
	}
	key, shape, err := codecs.UnshapeKey(table, id)
	if errors.Is(err, keyset.ErrTableNeeded) {
		err = fmt.Errorf("%w: say whose key it is with --table T", err)
	}
	return key, shape, err
}
