package server_test

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
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
		// the current buffer of users after 1 (Warm) + 42 IDs: value 43, max 100, step 100
		`<td class="num">43</td><td class="num">100</td><td class="num">100</td><td class="num">57</td>`,
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
