package server

import (
	"context"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/idsql/idsql/idsql/segment"
)

// metrics are the server's instruments, on a registry of its own (two
// servers in one process do not share, and the global default registry is
// left alone). Counters the monitor page shows too are plain atomics,
// exported by stateCollector when /metrics is scraped, as are the
// generators' own counters and gauges.
type metrics struct {
	reg     *prometheus.Registry
	handler http.Handler

	requests [numModes]atomic.Uint64
	errors   [numErrKinds]atomic.Uint64

	latency   *prometheus.HistogramVec
	latencyOK [numEndpoints]prometheus.Observer // latency of status 200, resolved once
	wait      [numModes]prometheus.Observer
}

// durationBuckets spread from 1 µs to 4 s, four times apart: a handler
// answers from memory in about a microsecond, and waits for a database or
// the next tick take milliseconds to seconds.
func durationBuckets() []float64 { return prometheus.ExponentialBuckets(1e-6, 4, 12) }

func newMetrics(srv *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "idsql_http_request_duration_seconds",
		Help:    "Time the server spent answering a request (from routing to the last byte handed to net/http), by endpoint and status code.",
		Buckets: durationBuckets(),
	}, []string{"endpoint", "code"})
	for ep := range numEndpoints {
		m.latencyOK[ep] = m.latency.WithLabelValues(endpointNames[ep], "200")
	}
	wait := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "idsql_generator_wait_seconds",
		Help:    "Time an ID request spent in its generator: nothing while IDs are buffered, a segment refill or a snowflake tick when they are not.",
		Buckets: durationBuckets(),
	}, []string{"mode"})
	for md := range numModes {
		m.wait[md] = wait.WithLabelValues(modeNames[md])
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector(),
		m.latency, wait, stateCollector{srv},
	)
	if ts := srv.s.Store; ts != nil {
		m.reg.MustRegister(ts.hist)
	}
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: srv.s.Log})
	return m
}

func (m *metrics) observeRequest(ep endpoint, code int, d time.Duration) {
	if code == http.StatusOK {
		m.latencyOK[ep].Observe(d.Seconds())
		return
	}
	m.latency.WithLabelValues(endpointNames[ep], strconv.Itoa(code)).Observe(d.Seconds())
}

func (m *metrics) observeWait(md mode, d time.Duration) { m.wait[md].Observe(d.Seconds()) }

func (srv *Server) serveMetrics(w http.ResponseWriter, r *http.Request) int {
	w.Header()["Cache-Control"] = noStore
	srv.m.handler.ServeHTTP(w, r)
	return http.StatusOK
}

// TimedStore is a segment.Store that times every allocation, the segment
// refills (and the direct allocations of batches that outran both
// segments), for the server's /metrics:
//
//	ts := server.NewTimedStore(store)
//	gen, err := segment.New(ctx, ts, segment.Settings{})
//	srv, err := server.New(server.Settings{Keys: keys, Segments: gen, Store: ts})
//
// It adds two clock readings to an allocation, which costs a database
// round trip anyway.
type TimedStore struct {
	store      segment.Store
	hist       *prometheus.HistogramVec
	ok, failed prometheus.Observer
}

var _ segment.Store = (*TimedStore)(nil)

// NewTimedStore returns store, timed.
func NewTimedStore(store segment.Store) *TimedStore {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "idsql_segment_refill_seconds",
		Help:    "Time one segment range allocation took in the database, by result (ok or error).",
		Buckets: prometheus.ExponentialBuckets(250e-6, 2, 16), // 250 µs to 8 s
	}, []string{"result"})
	return &TimedStore{store: store, hist: h, ok: h.WithLabelValues("ok"), failed: h.WithLabelValues("error")}
}

// Keys implements segment.Store.
func (t *TimedStore) Keys(ctx context.Context) ([]string, error) { return t.store.Keys(ctx) }

// Allocate implements segment.Store, timing the allocation.
func (t *TimedStore) Allocate(ctx context.Context, req segment.Request) (segment.Range, error) {
	start := time.Now()
	r, err := t.store.Allocate(ctx, req)
	if err != nil {
		t.failed.Observe(time.Since(start).Seconds())
	} else {
		t.ok.Observe(time.Since(start).Seconds())
	}
	return r, err
}

// stateCollector exports, at each scrape, the server's counters and the
// state of its generators: segment buffers and counters, and each
// snowflake table's lease.
type stateCollector struct{ srv *Server }

var (
	descServed = prometheus.NewDesc("idsql_ids_served_total",
		"IDs handed out over HTTP, by generator kind and table or segment key (keys naming no snowflake table count under the table that served them).",
		[]string{"mode", "key"}, nil)
	descErrors = prometheus.NewDesc("idsql_http_errors_total",
		"Failed HTTP requests, by kind.", []string{"kind"}, nil)
	descStart = prometheus.NewDesc("idsql_start_time_seconds",
		"Unix time the server started.", nil, nil)

	descSegLoads = prometheus.NewDesc("idsql_segment_allocations_total",
		"Ranges installed by background loads (refills).", []string{"key"}, nil)
	descSegDirect = prometheus.NewDesc("idsql_segment_direct_allocations_total",
		"Ranges allocated directly by batch requests that outran both segments.", []string{"key"}, nil)
	descSegLoadErrors = prometheus.NewDesc("idsql_segment_load_errors_total",
		"Failed range loads.", []string{"key"}, nil)
	descSegWaits = prometheus.NewDesc("idsql_segment_waits_total",
		"Requests that found both segments empty and waited for a range.", []string{"key"}, nil)
	descSegTimeouts = prometheus.NewDesc("idsql_segment_timeouts_total",
		"Waits that timed out (segments not ready).", []string{"key"}, nil)
	descSegIdle = prometheus.NewDesc("idsql_segment_idle_ids",
		"IDs left in a segment buffer (current: the one IDs come from; next: the one loaded in advance).", []string{"key", "buffer"}, nil)
	descSegRange = prometheus.NewDesc("idsql_segment_range_size",
		"Number of IDs in the range a segment buffer holds (0 when it holds none).", []string{"key", "buffer"}, nil)
	descSegStep = prometheus.NewDesc("idsql_segment_step",
		"Size requested by the key's last load.", []string{"key"}, nil)
	descSegLoading = prometheus.NewDesc("idsql_segment_loading",
		"1 while a background load of the key is under way.", []string{"key"}, nil)

	descLease = prometheus.NewDesc("idsql_snowflake_lease_active",
		"1 while the table's generator issues IDs under a worker lease, 0 when it is not started or between leases.", []string{"table"}, nil)
	descWorker = prometheus.NewDesc("idsql_snowflake_worker_id",
		"Worker ID each running snowflake table issues under.", []string{"table"}, nil)
	descHighWater = prometheus.NewDesc("idsql_snowflake_high_water_seconds",
		"Unix time of the newest tick the table's generator has issued IDs in.", []string{"table"}, nil)
	descKeySpaceUsed = prometheus.NewDesc("idsql_key_space_used_ratio",
		"Highest key this process issued for a table with a max_id, as a fraction of max_id (1 once exhausted: keys are never wrapped). Alert well before 1.",
		[]string{"table"}, nil)
	descKeySpaceMax = prometheus.NewDesc("idsql_key_space_max_id",
		"The max_id of a table that has one.", []string{"table"}, nil)

	descBuffered = prometheus.NewDesc("idsql_snowflake_buffered_ids",
		"IDs waiting in a cached table's ring buffer.", []string{"table"}, nil)
)

func (stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descServed, descErrors, descStart, descSegLoads, descSegDirect, descSegLoadErrors,
		descSegWaits, descSegTimeouts, descSegIdle, descSegRange, descSegStep, descSegLoading,
		descLease, descWorker, descHighWater, descBuffered, descKeySpaceUsed, descKeySpaceMax} {
		ch <- d
	}
}

func (c stateCollector) Collect(ch chan<- prometheus.Metric) {
	srv := c.srv
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, e := range srv.segmentEntries() {
		counter(descServed, e.served.Load(), "segment", e.key.Name())
	}
	for _, t := range srv.snowNames {
		counter(descServed, srv.snow[t].served.Load(), "snowflake", t)
	}
	for k := range numErrKinds {
		counter(descErrors, srv.m.errors[k].Load(), errKindNames[k])
	}
	gauge(descStart, float64(srv.started.UnixNano())/1e9)

	if g := srv.s.Segments; g != nil {
		for _, k := range g.Snapshot().Keys {
			counter(descSegLoads, k.Loads, k.Key)
			counter(descSegDirect, k.Direct, k.Key)
			counter(descSegLoadErrors, k.LoadErrors, k.Key)
			counter(descSegWaits, k.Waits, k.Key)
			counter(descSegTimeouts, k.Timeouts, k.Key)
			for _, b := range []struct {
				name string
				s    segment.SegmentStats
			}{{"current", k.Current}, {"next", k.Next}} {
				gauge(descSegIdle, float64(b.s.Idle), k.Key, b.name)
				gauge(descSegRange, float64(b.s.Step), k.Key, b.name)
			}
			gauge(descSegStep, float64(k.Step), k.Key)
			gauge(descSegLoading, boolValue(k.Loading), k.Key)
		}
	}

	for _, ks := range srv.s.Keys.KeySpaces() {
		gauge(descKeySpaceUsed, ks.Used(), ks.Table)
		gauge(descKeySpaceMax, float64(ks.MaxID), ks.Table)
	}

	for _, t := range srv.snowNames {
		src := srv.snow[t].src.Load()
		if src == nil || src.table == nil {
			gauge(descLease, 0, t)
			continue
		}
		gen, cached := src.table.Generator()
		gauge(descLease, boolValue(gen != nil), t)
		if gen == nil {
			continue
		}
		gauge(descWorker, float64(gen.WorkerID()), t)
		if hw := gen.HighWater(); !hw.IsZero() {
			gauge(descHighWater, float64(hw.UnixNano())/1e9, t)
		}
		if cached != nil {
			gauge(descBuffered, float64(cached.Buffered()), t)
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
