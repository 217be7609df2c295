package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// boundsOut is the answer of idsql bounds, as --json prints it.
type boundsOut struct {
	Table  string    `json:"table"`
	Column string    `json:"column"`
	Layout string    `json:"layout"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Lo     int64     `json:"lo"`
	Hi     int64     `json:"hi"`
	// LoText and HiText are lo and hi in the table's text form; empty for
	// decimal.
	LoText string `json:"lo_text,omitempty"`
	HiText string `json:"hi_text,omitempty"`
}

// timeLayouts are the forms --from and --to take, without a zone in UTC.
var timeLayouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", time.DateOnly, "2006-01"}

// parseWhen reads a time given on the command line: RFC 3339, or a date
// and time, a date or a month (2026-01), in UTC.
func parseWhen(flagName, s string) (time.Time, error) {
	for _, layout := range timeLayouts {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("--%s %q: want RFC 3339 (2026-01-01T00:00:00Z), a date (2026-01-01) or a month (2026-01), in UTC without a zone", flagName, s)
}

func runBounds(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bounds", "[--config idsql.yaml] --table T --from TIME --to TIME [--json]",
		"Prints the smallest key range [lo, hi] holding every key of snowflake table T whose\n"+
			"time (as 'idsql decode' shows it) lies in [from, to): WHERE id BETWEEN lo AND hi finds\n"+
			"exactly the rows made in that time, through the key's index. A time is RFC 3339, or a\n"+
			"date and time, a date (2026-01-01) or a month (2026-01) in UTC. Times outside the\n"+
			"layout are refused, not clamped. Segment tables are refused: their keys carry no time.\n"+
			"With a text form (tables.T.text) that sorts as its keys (not a keyed one), lo and hi are\n"+
			"shown in it too.", stderr)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	table := fs.String("table", "", "snowflake table")
	fromS := fs.String("from", "", "start of the range (included)")
	toS := fs.String("to", "", "end of the range (excluded)")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q", rest[0])
	case *table == "":
		return usagef("--table is required")
	case *fromS == "" || *toS == "":
		return usagef("--from and --to are required")
	}
	from, err := parseWhen("from", *fromS)
	if err != nil {
		return err
	}
	to, err := parseWhen("to", *toS)
	if err != nil {
		return err
	}
	cfg, err := loadConfig(*cfgPath, true)
	if err != nil {
		return err
	}
	lo, hi, err := cfg.Bounds(*table, from, to)
	if err != nil {
		return err
	}
	layout, err := cfg.SnowflakeLayout()
	if err != nil {
		return err
	}
	tc := cfg.Tables[*table]
	out := boundsOut{Table: *table, Column: tc.KeyColumn(), Layout: layout.String(), From: from.UTC(), To: to.UTC(), Lo: lo, Hi: hi}
	// A text range only where the texts sort as the keys.
	if c, err := cfg.Codec(*table); err == nil && c.SortsAsKeys() {
		out.LoText, out.HiText = c.Format(lo), c.Format(hi)
	}
	if *asJSON {
		return printJSON(stdout, out)
	}
	const stamp = "2006-01-02T15:04:05.999999999Z07:00"
	fmt.Fprintf(stdout, "table   %s\nlayout  %s\nfrom    %s\nto      %s (excluded)\nlo      %d\nhi      %d\n",
		out.Table, out.Layout, from.UTC().Format(stamp), to.UTC().Format(stamp), lo, hi)
	if out.LoText != "" {
		fmt.Fprintf(stdout, "text    %s .. %s (%s)\n", out.LoText, out.HiText, tc.Text)
	}
	return nil
}
