package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// runTrivial serves a constant on every path: the ceiling of Go's HTTP
// stack on this machine, which scripts/bench-server compares idsql serve
// against. A path that is a count, /N (1 <= N <= maxTrivialLines), gets N
// lines of the constant, as a batch endpoint writes N IDs.
func runTrivial(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("trivial", "[--addr 127.0.0.1:8081]",
		"Benchmark baseline (hidden): answers every request with a constant 19-digit\n"+
			"number, as text/plain, like one ID; /N answers N lines of it, like a batch.", stderr)
	addr := fs.String("addr", "127.0.0.1:8081", "listen address")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	body := []byte("7139826715123912704")
	ct := []string{"text/plain; charset=utf-8"}
	lines := trivialLines(body)
	hs := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["Content-Type"] = ct
			if b := lines(r.URL.Path); b != nil {
				w.Write(b)
				return
			}
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

// maxTrivialLines is the largest count idsql trivial answers as lines.
const maxTrivialLines = 10000

// trivialLines returns the answer to a path /N: N lines of body, made once
// per N and then read without a lock (the baseline must cost no more than
// writing them); nil for any other path.
func trivialLines(body []byte) func(path string) []byte {
	var made sync.Map // int -> []byte
	return func(path string) []byte {
		n, err := strconv.Atoi(strings.TrimPrefix(path, "/"))
		if err != nil || n < 1 || n > maxTrivialLines {
			return nil
		}
		if b, ok := made.Load(n); ok {
			return b.([]byte)
		}
		b := make([]byte, 0, n*(len(body)+1))
		for range n {
			b = append(append(b, body...), '\n')
		}
		made.Store(n, b)
		return b
	}
}
