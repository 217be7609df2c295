package idsql

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/idsql/idsql/holder"
)

// checkLocalWorkers refuses, before any key is asked for, a configuration
// whose local holder (holder.kind: local, the default) has no worker ID for
// a snowflake table of this process: the holder would otherwise fail only
// at the table's first key, in the middle of an INSERT. The error shows
// the workers map to add, keyed by this process's identity, with worker
// IDs the map does not use yet.
func checkLocalWorkers(cfg *Config, inst holder.Instance) error {
	if cfg.Holder.Kind != "" && cfg.Holder.Kind != HolderLocal {
		return nil
	}
	id := inst.Key()
	var missing []string
	for _, t := range cfg.TableNames() {
		if cfg.Tables[t].Strategy != Snowflake {
			continue
		}
		if _, ok := cfg.Holder.Workers[t+"@"+id]; ok {
			continue
		}
		if _, ok := cfg.Holder.Workers[id]; ok {
			continue
		}
		missing = append(missing, t)
	}
	if len(missing) == 0 {
		return nil
	}
	used := map[int64]bool{}
	for _, w := range cfg.Holder.Workers {
		used[w] = true
	}
	var entries []string
	next := int64(1)
	for _, t := range missing {
		for used[next] {
			next++
		}
		entries = append(entries, strconv.Quote(t+"@"+id)+": "+strconv.FormatInt(next, 10))
		next++
	}
	tables := "snowflake table " + missing[0]
	if len(missing) > 1 {
		tables = "snowflake tables " + strings.Join(missing, ", ")
	}
	what := "has no workers map"
	if len(cfg.Holder.Workers) > 0 {
		what = "has no entry for this process"
	}
	return &FieldError{Field: "holder.workers", Err: fmt.Errorf(
		"the local holder (holder.kind: local, the default) %s, so %s would get no worker ID: "+
			"give each table of each process its own worker ID in idsql.yaml, for this process (identity %q; set holder.instance to choose it):\n"+
			"  holder:\n    kind: local\n    workers: {%s}\n"+
			"or let the database's worker table or ZooKeeper hand worker IDs out (holder.kind: postgres, mysql or zookeeper)",
		what, tables, id, strings.Join(entries, ", "))}
}
