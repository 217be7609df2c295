package keyset

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/snowflake"
)

// local reports whether k is the local holder (the default).
func (k HolderKind) local() bool { return k == "" || k == holderLocal }

// localWorkers returns the local holder's map from identity to worker ID:
// holder.workers, or with holder.instance: ordinal and no map, this pod's
// ordinal plus holder.ordinal_offset for its identity. Any configuration
// with instance: ordinal needs an identity that ends in a pod ordinal.
func localWorkers(cfg *Config, layout snowflake.Layout, inst holder.Instance) (map[string]int64, error) {
	hc := cfg.Holder
	if hc.Instance != InstanceOrdinal {
		return hc.Workers, nil
	}
	fail := func(format string, args ...any) error {
		return &FieldError{Field: "holder.instance", Err: fmt.Errorf(format, args...)}
	}
	id := inst.Key()
	ord, err := podOrdinal(id)
	if err != nil {
		return nil, fail("%s: %w", InstanceOrdinal, err)
	}
	if !hc.Kind.local() || len(hc.Workers) > 0 {
		return hc.Workers, nil
	}
	w := ord + hc.OrdinalOffset
	if last := hc.lastProcessWorker(layout); w > last {
		return nil, fail("%s: pod %s has ordinal %d, and with holder.ordinal_offset %d its worker ID %d does not fit layout %s's %d worker bits (0..%d%s)",
			InstanceOrdinal, id, ord, hc.OrdinalOffset, w, layout.Name, layout.WorkerBits, last, hc.reservedNote(layout))
	}
	if tables := cfg.SnowflakeTables(); len(tables) > 1 {
		return nil, fail("%s: the pod ordinal gives this process one worker ID (%d), but snowflake tables %s need one each: "+
			"map them in holder.workers, or let etcd, ZooKeeper or the worker table hand worker IDs out", InstanceOrdinal, w, strings.Join(tables, ", "))
	}
	return map[string]int64{id: w}, nil
}

// SnowflakeTables returns the names of c's tables whose keys are issued
// under a worker lease (snowflake and uuid7 tables, Leased), in order.
func (c *Config) SnowflakeTables() []string {
	var tables []string
	for _, t := range c.TableNames() {
		if c.Tables[t].Leased() {
			tables = append(tables, t)
		}
	}
	return tables
}

// podOrdinal returns the ordinal a StatefulSet gives its pod's host name:
// 3 for web-3 (or web-3.web.shop.svc).
func podOrdinal(host string) (int64, error) {
	name, _, _ := strings.Cut(host, ".")
	i := strings.LastIndexByte(name, '-')
	n, err := strconv.ParseInt(name[i+1:], 10, 64)
	if i < 1 || err != nil || n < 0 || name[i+1] == '+' {
		return 0, fmt.Errorf("host name %q does not end in -<ordinal>, as a StatefulSet pod's does (web-3)", host)
	}
	return n, nil
}

// checkLocalWorkers refuses, before any key is asked for, a configuration
// whose local holder (holder.kind: local, the default) has no worker ID for
// a snowflake table of this process: the holder would otherwise fail only
// at the table's first key, in the middle of an INSERT. The error shows
// the workers map to add, keyed by this process's identity, with worker
// IDs the map does not use yet.
func checkLocalWorkers(cfg *Config, workers map[string]int64, inst holder.Instance) error {
	if !cfg.Holder.Kind.local() {
		return nil
	}
	id := inst.Key()
	var missing []string
	for _, t := range cfg.TableNames() {
		if !cfg.Tables[t].Leased() {
			continue
		}
		if _, ok := workers[t+"@"+id]; ok {
			continue
		}
		if _, ok := workers[id]; ok {
			continue
		}
		missing = append(missing, t)
	}
	if len(missing) == 0 {
		return nil
	}
	used := map[int64]bool{}
	for _, w := range workers {
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
	if len(workers) > 0 {
		what = "has no entry for this process"
	}
	return &FieldError{Field: "holder.workers", Err: fmt.Errorf(
		"the local holder (holder.kind: local, the default) %s, so %s would get no worker ID: "+
			"give each table of each process its own worker ID in idsql.yaml, for this process (identity %q; set holder.instance to choose it):\n"+
			"  holder:\n    kind: local\n    workers: {%s}\n"+
			"or let the database's worker table, ZooKeeper or etcd hand worker IDs out (holder.kind: postgres, mysql, zookeeper or etcd)",
		what, tables, id, strings.Join(entries, ", "))}
}
