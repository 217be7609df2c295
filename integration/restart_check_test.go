//go:build linux

package integration

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The chaos tests prove each server restart from the server itself: its
// uptime after the restart must be shorter than the time since the test
// stopped it (a restart the harness only claimed would show the old
// process's uptime). TestDBDefaultChaos and the Redis test do the same
// with the database's uptime and Redis's run_id.

// pgUptime asks PostgreSQL at dsn how long it has run.
func pgUptime(dsn string) (time.Duration, error) {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var s float64
	err = db.QueryRowContext(ctx, `SELECT extract(epoch FROM now() - pg_postmaster_start_time())::float8`).Scan(&s)
	return time.Duration(s * float64(time.Second)), err
}

// zkUptime asks ZooKeeper at addr how long it has run (mntr's zk_uptime,
// in milliseconds).
func zkUptime(addr string) (time.Duration, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("mntr")); err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(c)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "zk_uptime\t"); ok {
			ms, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Duration(ms) * time.Millisecond, err
		}
	}
	return 0, fmt.Errorf("mntr of %s has no zk_uptime (%v)", addr, sc.Err())
}

// etcdUptime asks etcd at addr how long it has run (its metric
// process_start_time_seconds).
func etcdUptime(addr string) (time.Duration, error) {
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "process_start_time_seconds "); ok {
			s, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return 0, err
			}
			return time.Since(time.Unix(0, int64(s*float64(time.Second)))), nil
		}
	}
	return 0, fmt.Errorf("%s/metrics has no process_start_time_seconds (%v)", addr, sc.Err())
}

// restarted returns an error unless uptime says the server started after
// stopped, when the test asked it to stop (to a second: PostgreSQL and
// etcd count whole seconds in places).
func restarted(what string, stopped time.Time, uptime func() (time.Duration, error)) error {
	up, err := uptime()
	if err != nil {
		return fmt.Errorf("%s: its uptime after the restart: %w", what, err)
	}
	if since := time.Since(stopped); up > since+time.Second {
		return fmt.Errorf("%s has run %s, since before it was stopped %s ago: it never restarted", what, up.Round(time.Millisecond), since.Round(time.Millisecond))
	}
	return nil
}
