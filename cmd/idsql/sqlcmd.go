package main

import (
	"context"
	"io"

	"github.com/idsql/idsql/idsql"
)

func runSQL(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("sql", "--dialect postgres|mysql [--config idsql.yaml] [--db-block N]",
		"Prints the SQL that 'idsql migrate --db-defaults' runs, as a script for psql or the\n"+
			"mariadb client, for a DBA who installs the database-side key defaults by hand. Each\n"+
			"segment table's statement allocates a block of keys from the table's segment key\n"+
			"(which 'idsql migrate' creates first), logs it in idsql_alloc_log under the\n"+
			"instance \"database\", and points a sequence bounded to the block at the key column;\n"+
			"run it again to move a default whose block is nearly used up to a fresh block.\n"+
			"A snowflake table's reserves a worker ID of holder.database_workers in\n"+
			"idsql_workers and installs the function (PostgreSQL) or trigger (MariaDB) that\n"+
			"composes keys under it.\n"+
			"mysql means MariaDB (10.3 or later): MySQL 8 has no sequences.", stderr)
	dialect := fs.String("dialect", "", "postgres or mysql (MariaDB)")
	cfgPath := fs.String("config", "", "configuration file (default ./idsql.yaml)")
	block := fs.Int64("db-block", idsql.DefaultDBBlock, "keys per block")
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usagef("unexpected argument %q", rest[0])
	}
	if *dialect == "" {
		return usagef("--dialect is required: postgres or mysql")
	}
	cfg, err := loadConfig(*cfgPath, true)
	if err != nil {
		return err
	}
	script, err := idsql.DBDefaultsSQL(*dialect, cfg, *block)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, script)
	return err
}
