package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"testing"
	"time"
)

// serveAndGet runs `idsql <args>` (a serve command listening on port 0)
// in-process, asks each path for a 200 answer, then cancels it as SIGTERM
// would and checks that it exited 0. It returns the start-up banner.
func serveAndGet(t *testing.T, args []string, paths ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var errw bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, args, pw, &errw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	base, banner := "", ""
	for sc.Scan() {
		banner += sc.Text() + "\n"
		if m := regexp.MustCompile(`monitor\s+(http://\S+)/`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("no banner; stderr %s", errw.String())
	}
	go io.Copy(io.Discard, pr)
	for _, p := range paths {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d %q", p, resp.StatusCode, body)
		}
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, errw.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	return banner
}
