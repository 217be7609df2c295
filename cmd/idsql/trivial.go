package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"time"
)

// runTrivial serves a constant on every path: the ceiling of Go's HTTP
// stack on this machine, which scripts/bench-server compares idsql serve
// against.
func runTrivial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trivial", "[--addr 127.0.0.1:8081]",
		"Benchmark baseline (hidden): answers every request with a constant 19-digit\n"+
			"number, as text/plain, like one ID.", stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	body := []byte("7139826715123912704")
	ct := []string{"text/plain; charset=utf-8"}
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = ct
			w.Write(body)
		}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		hs.Shutdown(sctx)
	}()
	if err := hs.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
