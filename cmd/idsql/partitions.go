package main

import (
	"context"
	"io"
)

func runPartitions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("partitions", "[--config idsql.yaml] --table T --from YYYY-MM [--months N]",
		"Prints PostgreSQL declarative partitions of snowflake table T by key range, one per\n"+
			"calendar month in UTC from --from: for each month a statement\n"+
			"  CREATE TABLE T_2026_01 PARTITION OF T FOR VALUES FROM (lo) TO (hi+1);\n"+
			"where [lo, hi] is the month's keys ('idsql bounds'). Consecutive months share their\n"+
			"bounds: no gaps, no overlaps. Create T with PARTITION BY RANGE of its key column\n"+
			"first; PostgreSQL refuses a row whose key lies in no partition, so add the next months\n"+
			"(or a DEFAULT partition) before they come. Segment tables are refused: their keys\n"+
			"carry no time.", stderr)
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	table := fs.String("table", "", "snowflake table")
	fromS := fs.String("from", "", "first month, YYYY-MM (UTC)")
	months := fs.Int("months", 12, "number of months")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usagef("unexpected argument %q", rest[0])
	case *table == "":
		return usagef("--table is required")
	case *fromS == "":
		return usagef("--from is required (a month: 2026-01)")
	case *months < 1:
		return usagef("--months %d: want at least 1", *months)
	}
	from, err := parseWhen("from", *fromS)
	if err != nil {
		return err
	}
	from = from.UTC()
	if from.Day() != 1 || from.Hour() != 0 || from.Minute() != 0 || from.Second() != 0 || from.Nanosecond() != 0 {
		return usagef("--from %s: give a month (2026-01)", *fromS)
	}
	cfg, err := loadConfig(*cfgPath, true)
	if err != nil {
		return err
	}
	script, err := cfg.MonthlyPartitionsSQL(*table, from, *months)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, script)
	return err
}
