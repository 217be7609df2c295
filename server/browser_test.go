package server_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/idsql/idsql/server"
)

// chromium finds a headless-capable Chromium: $IDSQL_CHROMIUM, or chromium
// (Debian's package) on the PATH. Without one the test skips, or fails
// under CI, saying how to install it.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("IDSQL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no chromium found: install it (Debian: apt-get install -y chromium chromium-driver) or set IDSQL_CHROMIUM"
	if os.Getenv("CI") == "" {
		t.Skip(msg) // outside CI only: under CI a missing browser fails below
	}
	t.Fatal(msg)
	return ""
}

// artifactDir is where the test keeps its screenshot: $IDSQL_ARTIFACTS, or
// the test's artifact directory (go test -artifacts -outputdir DIR).
func artifactDir(t *testing.T) string {
	if d := os.Getenv("IDSQL_ARTIFACTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.ArtifactDir()
}

// runChromium runs headless Chromium with a fresh profile on url plus the
// given flags and returns its standard output.
func runChromium(t *testing.T, bin, url string, flags ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(),
	}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.String())
	}
	return stdout.Bytes()
}

// TestMonitorInBrowser loads the monitor page of a running server in
// headless Chromium and checks what the rendered DOM shows, then saves a
// screenshot.
func TestMonitorInBrowser(t *testing.T) {
	bin := chromium(t)
	f := newFixture(t, nil)
	ts := httptest.NewServer(f.srv)
	t.Cleanup(ts.Close)
	for _, p := range []string{"/api/segment/get/users/42", "/api/snowflake/get/orders/10",
		"/api/segment/get/leaf-segment-test", "/api/segment/get/nope"} {
		code, body, _ := get(t, f.srv, "GET", p)
		_ = body
		if p != "/api/segment/get/nope" && code != 200 {
			t.Fatalf("%s: %d", p, code)
		}
	}

	dom := string(runChromium(t, bin, ts.URL+"/", "--dump-dom"))
	norm := regexp.MustCompile(`\s+`).ReplaceAllString(dom, " ")
	for _, want := range []string{
		`<title>idsql ID server — test</title>`,
		`id="namespace">test<`,
		// segment keys with both buffers
		`id="seg-users"`, `id="seg-leaf-segment-test"`, `<td>current</td>`, `<td>next</td>`,
		// the current buffer of users after 42 IDs (Warm draws none): value 42, max 100, step 100
		`<td class="num">42</td><td class="num">100</td><td class="num">100</td><td class="num">58</td>`,
		// snowflake tables and their leases
		`id="snow-orders"><td>orders</td>`, `<span class="ok">running</span>`, `cached ring`,
		// error counts
		`unknown_key errors 1`,
	} {
		if !strings.Contains(norm, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	shot := filepath.Join(artifactDir(t), "monitor.png")
	runChromium(t, bin, ts.URL+"/", "--hide-scrollbars", "--window-size=1280,1000", "--screenshot="+shot)
	png, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("screenshot %s is not a PNG (%d bytes)", shot, len(png))
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(png))
}

// TestMonitorLoginInBrowser: with tokens on, Chromium opening the monitor
// page gets the login form; submitting a token from it (a page of the same
// origin fills the form and submits it, as a user would) sets the session
// cookie, and the browser follows to the monitor page.
func TestMonitorLoginInBrowser(t *testing.T) {
	bin := chromium(t)
	f := newFixture(t, func(s *server.Settings) { s.Tokens, s.Refresh = []string{"s3cret"}, time.Hour })
	mux := http.NewServeMux()
	mux.Handle("/", f.srv)
	mux.HandleFunc("/test-login", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<!DOCTYPE html><form id="f" method="post" action="/login"><input name="token" value="s3cret"></form>`+
			`<script>document.getElementById("f").submit()</script>`)
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)

	dom := string(runChromium(t, bin, ts.URL+"/", "--dump-dom"))
	if !strings.Contains(dom, `<form id="login" method="post" action="/login">`) || strings.Contains(dom, `id="namespace"`) {
		t.Fatalf("monitor page without a session shows no login form:\n%s", dom)
	}
	dom = string(runChromium(t, bin, ts.URL+"/test-login", "--virtual-time-budget=3000", "--dump-dom"))
	for _, want := range []string{`id="namespace">test<`, `id="seg-users"`, `<form id="logout" method="post" action="/logout"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("after logging in, the page lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}

// TestShardGroupsInBrowser: Chromium renders a sharded table's keys as one
// collapsed group after the plain keys, and opens it once a shard is used.
func TestShardGroupsInBrowser(t *testing.T) {
	bin := chromium(t)
	srv := newKeySpaceServer(t, `namespace: test
tables:
  leaf_snowflake: {strategy: snowflake}
  orders: {strategy: segment, shard: {column: user_id, bits: 4}}
  zebras: {strategy: segment}
`)
	mustGet(t, srv, "/api/segment/get/zebras")
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	norm := func() string {
		return regexp.MustCompile(`\s+`).ReplaceAllString(string(runChromium(t, bin, ts.URL+"/", "--dump-dom")), " ")
	}
	dom := norm()
	plain, group := strings.Index(dom, `id="seg-zebras"`), strings.Index(dom, `<details class="card shardgroup" id="shards-orders">`)
	if plain < 0 || group < plain || !strings.Contains(dom, "16 shard keys, none used yet") {
		t.Fatalf("rendered page: plain key at %d, collapsed group at %d (want after it, none used):\n%s", plain, group, dom)
	}
	mustGet(t, srv, "/api/segment/get/orders?shard=3")
	if dom = norm(); !strings.Contains(dom, `id="shards-orders" open="">`) || !strings.Contains(dom, "16 shard keys, 1 used") {
		t.Fatalf("after a request for shard 3 the rendered group is not open with 1 used:\n%s", dom)
	}
}
