package server

import (
	"bytes"
	"context"
	_ "embed"
	"html/template"
	"net/http"
	"time"

	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/segment"
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
	Segment         segment.Snapshot
	SegmentServed   map[string]segServed

	Snowflake   []snowRow
	Leases      []registry.Record
	LeasesError string
	HasRegistry bool

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
		SegmentServed:   map[string]segServed{},
		Requests:        map[string]uint64{},
		HasRegistry:     srv.s.Registry != nil,
	}
	if pg.Refresh < 1 {
		pg.Refresh = 1
	}
	if g := srv.s.Segments; g != nil {
		pg.Segment = g.Snapshot()
		pg.Instance = pg.Segment.Instance
		for _, e := range srv.segmentEntries() {
			pg.SegmentServed[e.key.Name()] = segServed{e.served.Load(), e.errors.Load(), e.lastErr.Load()}
		}
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
					row.HighWater = gen.HighWater()
					row.Buffered = cached.Buffered()
				default:
					row.Kind = "generator"
					row.WorkerID = gen.WorkerID()
					row.HighWater = gen.HighWater()
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
