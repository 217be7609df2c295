package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/snowflake"
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

// TestServeQuickStartConfig: serve runs on the README's quick-start
// configuration, whose local holder maps a worker ID to orders only: the
// table serve adds for snowflake keys that name no table gets none, so
// orders, the only snowflake table, answers them, and the monitor page
// says so. With two snowflake tables such keys are refused, naming
// --snowflake-table and the tables, while each table's own keys are
// served; a --snowflake-table the user names must start.
func TestServeQuickStartConfig(t *testing.T) {
	dir := t.TempDir()
	quick := writeConfig(t, "namespace: shop\nholder: {kind: local, instance: app, workers: {\"orders@app\": 1}}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  users:  {strategy: segment, step: 100}\n")
	urls, stop, errw := startServe(t, "monitor", "--config", quick, "--dsn", "sqlite:"+dir+"/ids.db", "--migrate")
	base := strings.TrimSuffix(urls["monitor"], "/")
	id, err := strconv.ParseInt(getOK(t, base+"/api/snowflake/get/anything"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := snowflake.Leaf.Decode(id, time.Now(), time.Minute); err != nil || p.Worker != 1 {
		t.Errorf("a key naming no table got %d (%+v, %v); want one of orders' worker 1", id, p, err)
	}
	if page := getOK(t, base+"/"); !strings.Contains(page, "Snowflake keys that name no table are answered by table <b>orders</b>.") {
		t.Errorf("the monitor page does not say which table answers keys that name none")
	}
	if code := stop(); code != 0 || !strings.Contains(errw.String(), "table orders answers them (choose with --snowflake-table)") {
		t.Errorf("serve exited %d; stderr %q", code, errw.String())
	}

	two := writeConfig(t, "namespace: shop\nholder: {kind: local, instance: app, workers: {\"orders@app\": 1, \"payments@app\": 2}}\n"+
		"tables:\n  orders: {strategy: snowflake}\n  payments: {strategy: snowflake}\n")
	urls, stop, errw = startServe(t, "monitor", "--config", two, "--dsn", "sqlite:"+dir+"/ids2.db", "--migrate")
	base = strings.TrimSuffix(urls["monitor"], "/")
	getOK(t, base+"/api/snowflake/get/payments")
	resp, err := http.Get(base + "/api/snowflake/get/anything")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(body), "name one of the snowflake tables (orders, payments) with --snowflake-table") {
		t.Errorf("a key naming no table with two snowflake tables: %d %s", resp.StatusCode, body)
	}
	if page := getOK(t, base+"/"); !strings.Contains(page, "Snowflake keys that name no table are refused:") {
		t.Errorf("the monitor page does not say that keys naming no table are refused")
	}
	if code := stop(); code != 0 {
		t.Errorf("serve exited %d: %s", code, errw.String())
	}

	code, _, stderr := runCmd(t, "serve", "--config", quick, "--dsn", "sqlite:"+dir+"/ids3.db", "--migrate", "--addr", "127.0.0.1:0", "--quiet",
		"--snowflake-table", "leaf_snowflake")
	if code != 1 || !strings.Contains(stderr, "leaf_snowflake@app") {
		t.Errorf("serve --snowflake-table leaf_snowflake without its worker ID: exit %d, %q; want a refusal naming the entry", code, stderr)
	}
}
