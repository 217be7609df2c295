package server

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
)

// metrics are the server's own counters; the generators' counters are read
// from their snapshots when /metrics is scraped.
type metrics struct {
	requests [numModes]atomic.Uint64
	errors   [numErrKinds]atomic.Uint64
}

// promWriter writes the Prometheus text exposition format (version 0.0.4).
type promWriter struct{ b bytes.Buffer }

func (p *promWriter) family(name, typ, help string) {
	p.b.WriteString("# HELP ")
	p.b.WriteString(name)
	p.b.WriteByte(' ')
	p.b.WriteString(help)
	p.b.WriteString("\n# TYPE ")
	p.b.WriteString(name)
	p.b.WriteByte(' ')
	p.b.WriteString(typ)
	p.b.WriteByte('\n')
}

// sample writes one line; labels alternate names and values.
func (p *promWriter) sample(name string, v float64, labels ...string) {
	p.b.WriteString(name)
	if len(labels) > 0 {
		p.b.WriteByte('{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.b.WriteByte(',')
			}
			p.b.WriteString(labels[i])
			p.b.WriteString(`="`)
			p.b.WriteString(labelEscaper.Replace(labels[i+1]))
			p.b.WriteByte('"')
		}
		p.b.WriteByte('}')
	}
	p.b.WriteByte(' ')
	p.b.Write(strconv.AppendFloat(nil, v, 'g', -1, 64))
	p.b.WriteByte('\n')
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

func (srv *Server) serveMetrics(w http.ResponseWriter, r *http.Request) int {
	var p promWriter
	segs := srv.segmentEntries()

	p.family("idsql_requests_total", "counter", "ID requests accepted (valid key and count), by generator kind.")
	for md := range numModes {
		p.sample("idsql_requests_total", float64(srv.m.requests[md].Load()), "mode", modeNames[md])
	}
	p.family("idsql_ids_served_total", "counter", "IDs handed out over HTTP, by generator kind and key.")
	for _, e := range segs {
		p.sample("idsql_ids_served_total", float64(e.served.Load()), "mode", "segment", "key", e.key.Name())
	}
	for _, t := range srv.snowNames {
		p.sample("idsql_ids_served_total", float64(srv.snow[t].served.Load()), "mode", "snowflake", "key", t)
	}
	p.family("idsql_http_errors_total", "counter", "Failed HTTP requests, by kind.")
	for k := range numErrKinds {
		p.sample("idsql_http_errors_total", float64(srv.m.errors[k].Load()), "kind", errKindNames[k])
	}
	if g := srv.s.Segments; g != nil {
		snap := g.Snapshot()
		type fam struct {
			name, typ, help string
			val             func(i int) float64
		}
		fams := []fam{
			{"idsql_segment_allocations_total", "counter", "Ranges installed by background loads.",
				func(i int) float64 { return float64(snap.Keys[i].Loads) }},
			{"idsql_segment_direct_allocations_total", "counter", "Ranges allocated directly by batch requests that outran both segments.",
				func(i int) float64 { return float64(snap.Keys[i].Direct) }},
			{"idsql_segment_load_errors_total", "counter", "Failed range loads.",
				func(i int) float64 { return float64(snap.Keys[i].LoadErrors) }},
			{"idsql_segment_waits_total", "counter", "Requests that found both segments empty and waited for a range.",
				func(i int) float64 { return float64(snap.Keys[i].Waits) }},
			{"idsql_segment_timeouts_total", "counter", "Waits that timed out (segments not ready).",
				func(i int) float64 { return float64(snap.Keys[i].Timeouts) }},
			{"idsql_segment_idle_ids", "gauge", "IDs left in the current and the next segment.",
				func(i int) float64 { return float64(snap.Keys[i].Current.Idle + snap.Keys[i].Next.Idle) }},
			{"idsql_segment_step", "gauge", "Size requested by the key's last load.",
				func(i int) float64 { return float64(snap.Keys[i].Step) }},
		}
		for _, f := range fams {
			p.family(f.name, f.typ, f.help)
			for i := range snap.Keys {
				p.sample(f.name, f.val(i), "key", snap.Keys[i].Key)
			}
		}
	}
	p.family("idsql_snowflake_worker_id", "gauge", "Worker ID each started snowflake table issues under.")
	for _, t := range srv.snowNames {
		if w := srv.snow[t].worker(); w >= 0 {
			p.sample("idsql_snowflake_worker_id", float64(w), "table", t)
		}
	}
	p.family("idsql_start_time_seconds", "gauge", "Unix time the server started.")
	p.sample("idsql_start_time_seconds", float64(srv.started.Unix()))

	h := w.Header()
	h["Content-Type"] = []string{"text/plain; version=0.0.4; charset=utf-8"}
	h["Cache-Control"] = noStore
	w.Write(p.b.Bytes())
	return http.StatusOK
}
