package server_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// discardWriter is a reusable ResponseWriter, so the benchmarks measure the
// handler alone.
type discardWriter struct {
	h    http.Header
	code int
	n    int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
func (w *discardWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }

func benchmarkPath(b *testing.B, h http.Handler, path string, ids int) {
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		r := httptest.NewRequest("GET", path, nil)
		w := &discardWriter{h: http.Header{}}
		for pb.Next() {
			w.code = 0
			h.ServeHTTP(w, r)
			if w.code != 0 && w.code != 200 {
				b.Errorf("%s: status %d", path, w.code)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
	b.ReportMetric(float64(b.N*ids)/b.Elapsed().Seconds(), "ids/s")
}

func BenchmarkHandler(b *testing.B) {
	f := newFixture(b, nil)
	for _, bc := range []struct {
		path string
		ids  int
	}{
		{"/api/segment/get/users", 1},
		{"/api/snowflake/get/orders", 1},
		{"/api/snowflake/get/cached_orders", 1},
		{"/api/segment/get/users/1000", 1000},
		{"/api/snowflake/get/orders/1000", 1000},
	} {
		b.Run(bc.path[5:], func(b *testing.B) { benchmarkPath(b, f.srv, bc.path, bc.ids) })
	}
}
