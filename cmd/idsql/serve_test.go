package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// startServe runs `idsql serve --addr 127.0.0.1:0 args...` until the test
// ends and returns the URLs of its banner by name ("monitor", "segment",
// ...; "" holds the banner's text), read up to the line starting with last,
// a function that stops the server and returns its exit code, and its
// stderr.
func startServe(t *testing.T, last string, args ...string) (urls map[string]string, stop func() int, errw *bytes.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pr, pw := io.Pipe()
	errw = &bytes.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), pw, errw)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	urls = map[string]string{}
	for sc.Scan() {
		urls[""] += sc.Text() + "\n"
		if m := regexp.MustCompile(`^  (\w+)\s+(http://\S+)$`).FindStringSubmatch(sc.Text()); m != nil {
			urls[m[1]] = m[2]
		}
		if strings.HasPrefix(strings.TrimSpace(sc.Text()), last) {
			break
		}
	}
	if urls["monitor"] == "" {
		t.Fatalf("no banner; stderr %s", errw.String())
	}
	go io.Copy(io.Discard, pr)
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			return code
		case <-time.After(20 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
	return urls, stop, errw
}

// getOK fails the test unless url answers 200, and returns the body.
func getOK(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %q", url, resp.StatusCode, body)
	}
	return string(body)
}

// serveAndGet runs `idsql serve --addr 127.0.0.1:0 args...` in-process,
// asks each path for a 200 answer, then cancels it as SIGTERM would and
// checks that it exited 0. It returns the start-up banner.
func serveAndGet(t *testing.T, args []string, paths ...string) string {
	t.Helper()
	urls, stop, errw := startServe(t, "monitor", args...)
	base := strings.TrimSuffix(urls["monitor"], "/")
	for _, p := range paths {
		getOK(t, base+p)
	}
	if code := stop(); code != 0 {
		t.Fatalf("serve exited %d: %s", code, errw.String())
	}
	return urls[""]
}
