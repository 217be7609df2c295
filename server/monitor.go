package server

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"html/template"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/snowflake"
)

//go:embed monitor.html
var monitorHTML string

var monitorTmpl = template.Must(template.New("monitor").Funcs(template.FuncMap{
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000")
	},
	"used": func(s segment.SegmentStats) int64 {
		if s.Step <= 0 {
			return 0
		}
		return 100 * (s.Step - s.Idle) / s.Step
	},
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return now.Sub(t).Round(time.Millisecond).String() + " ago"
	},
}).Parse(monitorHTML))

// monitorPage is what the monitor template renders.
type monitorPage struct {
	Now       time.Time
	Started   time.Time
	Uptime    string
	Namespace string
	Layout    string
	Refresh   int // seconds
	Instance  string

	SegmentsEnabled bool
	Segment         segment.Snapshot // Keys is empty: they are in SegmentKeys and ShardGroups
	SegmentKeys     []segCard        // keys of no sharded table, in natural order (orders#2 before orders#10)
	ShardGroups     []shardGroup     // the keys of each sharded table, after the others

	Snowflake []snowRow
	// AnyKey is the table whose IDs answer snowflake keys that name no
	// table; AnyKeyOff, when there is none, says why (Settings.SnowflakeOff).
	AnyKey, AnyKeyOff string
	Leases            []registry.Record
	LeasesError       string
	HasRegistry       bool

	Requests map[string]uint64
	Errors   []kindCount

	// Session is set when the page was opened with a session cookie
	// (session.go): it then offers to log out.
	Session bool
}

type segServed struct {
	Served, Errors uint64
	LastError      *errRecord
}

// segCard is one segment key's card on the monitor page.
type segCard struct {
	segment.KeyStats
	Srv segServed
	Now time.Time
}

// used reports whether the key has held a range or answered a request.
func (c segCard) used() bool {
	return c.Current.Ready || c.Next.Ready || c.Loads > 0 || c.Srv.Served > 0 || c.Srv.Errors > 0
}

// shardGroup is the segment keys of one sharded table (orders#0,
// orders#1, ...), shown together and collapsed while none is used.
type shardGroup struct {
	Key   string // the table's segment key, without #shard
	Table string
	Cards []segCard
	Used  int // shards used (see segCard.used)
}

// segmentCards sorts the keys of snap into plain keys and the shard keys
// of each sharded table, each in natural order.
func (srv *Server) segmentCards(snap segment.Snapshot, served map[string]segServed, now time.Time) ([]segCard, []shardGroup) {
	tables := map[string]string{} // segment key -> sharded table
	for _, t := range srv.cfg.TableNames() {
		if srv.cfg.Tables[t].Gene().ShardBits > 0 {
			tables[srv.cfg.SegmentKey(t)] = t
		}
	}
	var plain []segCard
	groups := map[string]*shardGroup{}
	for _, ks := range snap.Keys {
		c := segCard{KeyStats: ks, Srv: served[ks.Key], Now: now}
		base, shard, ok := strings.Cut(ks.Key, "#")
		table, sharded := tables[base]
		if !ok || !sharded || strings.Trim(shard, "0123456789") != "" {
			plain = append(plain, c)
			continue
		}
		g := groups[base]
		if g == nil {
			g = &shardGroup{Key: base, Table: table}
			groups[base] = g
		}
		g.Cards = append(g.Cards, c)
		if c.used() {
			g.Used++
		}
	}
	byKey := func(a, b segCard) int { return naturalCompare(a.Key, b.Key) }
	slices.SortFunc(plain, byKey)
	var out []shardGroup
	for _, g := range groups {
		slices.SortFunc(g.Cards, byKey)
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b shardGroup) int { return naturalCompare(a.Key, b.Key) })
	return plain, out
}

// naturalCompare orders strings with runs of digits compared as numbers:
// orders#2 before orders#10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitRun(a), digitRun(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Or(cmp.Compare(len(na), len(nb)), strings.Compare(na, nb)); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digitRun returns the length of the run of ASCII digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && '0' <= s[n] && s[n] <= '9' {
		n++
	}
	return n
}

type snowRow struct {
	Table     string
	Started   bool
	Kind      string // "generator" or "cached ring"
	WorkerID  int64
	HighWater time.Time
	Buffered  int
	State     string // "running", or why it stopped
	Stopped   bool
	Served    uint64
	Errors    uint64
	LastError *errRecord
}

type kindCount struct {
	Kind  string
	Count uint64
}

// worker returns the worker ID the table issues under now, -1 when none.
func (e *snowEntry) worker() int64 {
	if src := e.src.Load(); src != nil && src.table != nil {
		if gen, _ := src.table.Generator(); gen != nil {
			return gen.WorkerID()
		}
	}
	return -1
}

func (srv *Server) page(ctx context.Context) monitorPage {
	now := srv.s.Now()
	pg := monitorPage{
		Now: now, Started: srv.started, Uptime: now.Sub(srv.started).Round(time.Second).String(),
		Namespace: srv.cfg.Namespace, Layout: srv.layout.String(),
		Refresh:         int(srv.s.Refresh / time.Second),
		SegmentsEnabled: srv.s.Segments != nil,
		Requests:        map[string]uint64{},
		HasRegistry:     srv.s.Registry != nil,
		AnyKeyOff:       srv.s.SnowflakeOff,
	}
	if srv.anyKey != nil {
		pg.AnyKey = srv.anyKey.table
	}
	if pg.Refresh < 1 {
		pg.Refresh = 1
	}
	if g := srv.s.Segments; g != nil {
		pg.Segment = g.Snapshot()
		pg.Instance = pg.Segment.Instance
		served := map[string]segServed{}
		for _, e := range srv.segmentEntries() {
			served[e.key.Name()] = segServed{e.served.Load(), e.errors.Load(), e.lastErr.Load()}
		}
		pg.SegmentKeys, pg.ShardGroups = srv.segmentCards(pg.Segment, served, now)
		pg.Segment.Keys = nil
	}
	for _, t := range srv.snowNames {
		e := srv.snow[t]
		row := snowRow{Table: t, Served: e.served.Load(), Errors: e.errors.Load(), LastError: e.lastErr.Load(), WorkerID: -1}
		if src := e.src.Load(); src != nil {
			row.Started = true
			row.State = "running"
			if msg := e.stoppedMsg.Load(); msg != nil {
				row.State, row.Stopped = *msg, true
			}
			row.Kind = "other"
			if src.table != nil {
				gen, cached := src.table.Generator()
				switch {
				case gen == nil:
					row.Kind = "generator"
					if !row.Stopped {
						row.State, row.Stopped = "between worker leases", true
					}
				case cached != nil:
					row.Kind = "cached ring"
					row.WorkerID = gen.WorkerID()
					row.HighWater = srv.highWater(gen)
					row.Buffered = cached.Buffered()
				default:
					row.Kind = "generator"
					row.WorkerID = gen.WorkerID()
					row.HighWater = srv.highWater(gen)
				}
			}
		}
		pg.Snowflake = append(pg.Snowflake, row)
	}
	if reg := srv.s.Registry; reg != nil {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		leases, err := reg.Leases(lctx, srv.cfg.Namespace, true)
		cancel()
		if err != nil {
			pg.LeasesError = err.Error()
		}
		pg.Leases = leases
	}
	for md := range numModes {
		pg.Requests[modeNames[md]] = srv.m.requests[md].Load()
	}
	for k := range numErrKinds {
		if n := srv.m.errors[k].Load(); n > 0 {
			pg.Errors = append(pg.Errors, kindCount{errKindNames[k], n})
		}
	}
	return pg
}

// highWater returns the time of gen's last tick, zero (shown as "—")
// before it issued an ID: its state then decodes to the layout's epoch,
// which is no time the table ever reached.
func (srv *Server) highWater(gen *snowflake.Generator) time.Time {
	if hw := gen.HighWater(); hw.After(srv.layout.Epoch) {
		return hw
	}
	return time.Time{}
}

func (srv *Server) serveMonitor(w http.ResponseWriter, r *http.Request) int {
	var b bytes.Buffer
	pg := srv.page(r.Context())
	pg.Session = len(srv.tokens) > 0 && srv.hasSession(r)
	if err := monitorTmpl.Execute(&b, pg); err != nil {
		srv.s.Log.Printf("idsql server: monitor page: %v", err)
		return srv.fail(w, r, nil, failure{kind: errInternal, status: http.StatusInternalServerError,
			msg: "monitor page failed (details in the server log)"})
	}
	h := w.Header()
	h["Content-Type"] = []string{"text/html; charset=utf-8"}
	h["Cache-Control"] = noStore
	h["Content-Security-Policy"] = []string{"default-src 'none'; style-src 'unsafe-inline'; form-action 'self'"}
	w.Write(b.Bytes())
	return http.StatusOK
}
