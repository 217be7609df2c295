//go:build linux

package integration

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/idsql/idsql/holder/zookeeper"
)

// Diagnostics from PostgreSQL's side: which helper waits for which lock,
// held by whom. Each helper connects with application_name chaos/<name>
// (see appDSN), so a blocked successor can be traced to the transaction
// that blocks it, often one of a stopped process.

// appPrefix starts the application_name of every helper's connections.
const appPrefix = "chaos/"

// appDSN returns dsn with application_name set to chaos/<name>.
func appDSN(dsn, name string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn // not a URL: leave it as it is
	}
	q := u.Query()
	q.Set("application_name", appPrefix+name)
	u.RawQuery = q.Encode()
	return u.String()
}

// pgBackend is a client backend of the chaos database.
type pgBackend struct {
	pid       int
	app       string
	state     string
	wait      string // wait_event_type/wait_event, "" when not waiting
	xact      time.Duration
	blockedBy []int
	query     string
}

func (b pgBackend) String() string {
	who := strings.TrimPrefix(b.app, appPrefix)
	if who == "" {
		who = "?"
	}
	s := fmt.Sprintf("%s (backend %d, %s", who, b.pid, b.state)
	if b.xact > 0 {
		s += fmt.Sprintf(", transaction open %s", b.xact.Round(10*time.Millisecond))
	}
	if b.wait != "" {
		s += ", waiting on " + b.wait
	}
	return s + ", last statement: " + b.query + ")"
}

// backends lists the client backends of the chaos database other than its
// own, by backend PID.
func (c *chaos) backends(ctx context.Context) (map[int]pgBackend, error) {
	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT pid, application_name, coalesce(state, ''),
			coalesce(wait_event_type || '/' || wait_event, ''),
			coalesce((extract(epoch FROM clock_timestamp() - xact_start) * 1e6)::bigint, 0),
			array_to_string(pg_blocking_pids(pid), ','),
			left(regexp_replace(coalesce(query, ''), '\s+', ' ', 'g'), 90)
		FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[int]pgBackend{}
	for rows.Next() {
		var b pgBackend
		var us int64
		var blockers string
		if err := rows.Scan(&b.pid, &b.app, &b.state, &b.wait, &us, &blockers, &b.query); err != nil {
			return nil, err
		}
		b.xact = time.Duration(us) * time.Microsecond
		for _, f := range strings.Split(blockers, ",") {
			if pid, err := strconv.Atoi(f); err == nil {
				b.blockedBy = append(b.blockedBy, pid)
			}
		}
		out[b.pid] = b
	}
	return out, rows.Err()
}

// lockWaits describes the lock waits of process name's backends, each
// followed to the transactions at the head of the queue, which wait for
// nothing (often a stopped process's). It returns "" when none of its
// backends waits for a lock, and the helpers at the heads.
func (c *chaos) lockWaits(name string) (string, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	bs, err := c.backends(ctx)
	if err != nil {
		return "(pg_stat_activity: " + err.Error() + ")", nil
	}
	var parts []string
	heads := map[string]bool{}
	for _, b := range bs {
		if b.app != appPrefix+name || len(b.blockedBy) == 0 {
			continue
		}
		// The heads of the chain: blockers that wait for no one.
		seen := map[int]bool{b.pid: true}
		queue := append([]int(nil), b.blockedBy...)
		var chain []string
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if seen[pid] {
				continue
			}
			seen[pid] = true
			x, ok := bs[pid]
			switch {
			case !ok:
				chain = append(chain, fmt.Sprintf("backend %d (gone)", pid))
			case len(x.blockedBy) == 0:
				chain = append(chain, x.String())
				heads[strings.TrimPrefix(x.app, appPrefix)] = true
			default:
				queue = append(queue, x.blockedBy...)
			}
		}
		parts = append(parts, fmt.Sprintf("%s waits for %s", b, strings.Join(chain, " and ")))
	}
	var hs []string
	for h := range heads {
		hs = append(hs, h)
	}
	return strings.Join(parts, "; "), hs
}

// active returns how many backends of the named helpers run a statement
// now that waits for no lock: one a helper sent before it was stopped is
// still on its way. (One waiting for a lock is lockHolders' business.)
func (c *chaos) active(names []string) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	apps := make([]string, len(names))
	for i, n := range names {
		apps[i] = appPrefix + n
	}
	var n int
	err = db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE state = 'active' AND wait_event_type IS DISTINCT FROM 'Lock' AND application_name = ANY(string_to_array($1, ','))`, strings.Join(apps, ",")).Scan(&n)
	return n, err
}

// lockHolders returns, for those of the named helpers whose open
// transaction holds a lock that another process's claim of a worker ID or
// allocation of a segment range waits for, what it holds: an advisory lock
// (holder/workertable's namespace lock) or a lock stronger than ACCESS SHARE
// on one of idsql's tables (a heartbeat's row lock on its lease in
// idsql_workers, an allocation's in idsql_alloc).
func (c *chaos) lockHolders(names []string) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	db, err := sql.Open("postgres", c.dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	apps := make([]string, len(names))
	for i, n := range names {
		apps[i] = appPrefix + n
	}
	rows, err := db.QueryContext(ctx, `SELECT a.application_name, a.pid, coalesce(a.state, ''),
			coalesce((extract(epoch FROM clock_timestamp() - a.xact_start) * 1e6)::bigint, 0),
			l.locktype, coalesce(r.relname, ''), l.mode,
			left(regexp_replace(coalesce(a.query, ''), '\s+', ' ', 'g'), 90)
		FROM pg_locks l
		JOIN pg_stat_activity a ON a.pid = l.pid
		LEFT JOIN pg_class r ON l.locktype = 'relation' AND r.oid = l.relation
		WHERE l.granted AND a.application_name = ANY(string_to_array($1, ','))
		AND (l.locktype = 'advisory' OR (r.relname LIKE 'idsql\_%' AND l.mode <> 'AccessShareLock'))
		ORDER BY a.application_name, l.locktype, r.relname`, strings.Join(apps, ","))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var b pgBackend
		var us int64
		var kind, rel, mode string
		if err := rows.Scan(&b.app, &b.pid, &b.state, &us, &kind, &rel, &mode, &b.query); err != nil {
			return nil, err
		}
		b.xact = time.Duration(us) * time.Microsecond
		name := strings.TrimPrefix(b.app, appPrefix)
		if _, dup := out[name]; dup {
			continue
		}
		what := "an advisory lock"
		if kind != "advisory" {
			what = mode + " on " + rel
		}
		out[name] = what + ": " + b.String()
	}
	return out, rows.Err()
}

// claimed returns those of the worker IDs ws on which a claim is still
// live, for the modes where a stopped or killed owner's claim expires in a
// server: an unexpired row of idsql_workers (PostgreSQL modes, database
// clock) or the ephemeral worker node (ZooKeeper recycle). ok is false for
// the other modes, which the test cannot ask (ZooKeeper sticky's successor
// waits for the claim itself; local claims do not expire).
func (c *chaos) claimed(ws []int64) (live []int64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch {
	case c.m.kind == "postgres":
		db, err := sql.Open("postgres", c.dsn)
		if err != nil {
			return nil, true, err
		}
		defer db.Close()
		var list []string
		for _, w := range ws {
			list = append(list, strconv.FormatInt(w, 10))
		}
		rows, err := db.QueryContext(ctx, `SELECT DISTINCT worker_id FROM idsql_workers
			WHERE namespace = $1 AND released IS NULL AND expires > clock_timestamp()
			AND worker_id = ANY(string_to_array($2, ',')::bigint[]) ORDER BY worker_id`,
			chaosNamespace, strings.Join(list, ","))
		if err != nil {
			return nil, true, err
		}
		defer rows.Close()
		for rows.Next() {
			var w int64
			if err := rows.Scan(&w); err != nil {
				return nil, true, err
			}
			live = append(live, w)
		}
		return live, true, rows.Err()
	case c.m.kind == "zookeeper" && c.m.mode == "recycle":
		conn, _, err := zk.Connect([]string{c.zk.Addr()}, 10*time.Second, zk.WithLogger(quiet{}))
		if err != nil {
			return nil, true, err
		}
		defer conn.Close()
		for _, w := range ws {
			node := path.Join(zookeeper.DefaultRoot, chaosNamespace, "workers", strconv.FormatInt(w, 10))
			exists, _, err := conn.Exists(node)
			if err != nil {
				return nil, true, fmt.Errorf("exists %s: %w", node, err)
			}
			if exists {
				live = append(live, w)
			}
		}
		return live, true, nil
	}
	return nil, false, nil
}

// awaitExpired waits until the claims on ws have expired after their
// owners stopped or were killed: at least the timeout, then, where the
// test can ask (see claimed), until the server no longer holds them, at
// most within; elsewhere chaosExpired. It returns the ones still claimed.
func (c *chaos) awaitExpired(ws []int64, within time.Duration) []int64 {
	start := time.Now()
	// The owners stay stopped (or dead) at least the timeout: that is
	// the fault, not a wait for one. (A claim a server shows expired
	// sooner, such as a PostgreSQL sticky row, must still be past it.)
	time.Sleep(chaosTimeout)
	deadline := start.Add(within)
	for {
		live, ok, err := c.claimed(ws)
		switch {
		case !ok:
			// Nothing to ask: the owners stay stopped (or dead) for
			// chaosExpired, which is the fault itself, not a wait for
			// one.
			time.Sleep(chaosExpired - time.Since(start))
			return nil
		case err != nil:
			c.note("cannot tell whether the claims on workers %v expired: %v", ws, err)
			time.Sleep(chaosExpired - time.Since(start))
			return nil
		case len(live) == 0:
			return nil
		case time.Now().After(deadline):
			return live
		}
		time.Sleep(200 * time.Millisecond)
	}
}
