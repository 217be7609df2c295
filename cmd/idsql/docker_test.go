package main

import (
	"bufio"
	"context"
	"debug/elf"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/idsql/idsql/idsql/keyset"
)

// There is no Docker engine where the tests run, so the image is never
// built here. These tests check what can be checked without one: the
// Dockerfile's build stage, run as written, makes a static binary that
// serves; the final stage runs it unprivileged with a health check; the
// compose service is wired to /healthz and its configuration loads.

// dockerfile is one parsed Dockerfile: its instructions with continuation
// lines joined, grouped by stage.
type dockerfile struct {
	args   map[string]string // ARG defaults before the first FROM
	stages []dockerStage
}

type dockerStage struct {
	from, name string
	lines      []string // instructions after FROM, "KEYWORD rest"
}

func parseDockerfile(t *testing.T, path string) dockerfile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	df := dockerfile{args: map[string]string{}}
	var cur strings.Builder
	var instrs []string
	for _, line := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(line)
		if cur.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if strings.HasSuffix(trimmed, "\\") {
			cur.WriteString(strings.TrimSuffix(trimmed, "\\") + " ")
			continue
		}
		cur.WriteString(trimmed)
		instrs = append(instrs, cur.String())
		cur.Reset()
	}
	for _, in := range instrs {
		kw, rest, _ := strings.Cut(in, " ")
		switch kw = strings.ToUpper(kw); {
		case kw == "FROM":
			f := strings.Fields(rest)
			st := dockerStage{from: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			df.stages = append(df.stages, st)
		case len(df.stages) == 0:
			if kw == "ARG" {
				k, v, _ := strings.Cut(rest, "=")
				df.args[k] = v
			}
		default:
			st := &df.stages[len(df.stages)-1]
			st.lines = append(st.lines, kw+" "+rest)
		}
	}
	return df
}

// env returns the KEY=VALUE pairs of the stage's ENV instructions.
func (st dockerStage) env() []string {
	var env []string
	for _, l := range st.lines {
		if rest, ok := strings.CutPrefix(l, "ENV "); ok {
			env = append(env, strings.Fields(rest)...)
		}
	}
	return env
}

// find returns the stage's instructions starting with prefix.
func (st dockerStage) find(prefix string) []string {
	var out []string
	for _, l := range st.lines {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// TestDockerfileBuild runs the go build command of the Dockerfile's build
// stage with that stage's environment, checks that the binary is static
// (no program interpreter, no shared libraries), that it reports its
// version, and that it serves /healthz and any snowflake key on the
// embedded default, as the image's default command does.
func TestDockerfileBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary (-short)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	df := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	var build, final *dockerStage
	for i := range df.stages {
		if df.stages[i].name == "build" {
			build = &df.stages[i]
		}
	}
	if build == nil || len(df.stages) < 2 {
		t.Fatalf("want a build stage named build and a final stage; stages %+v", df.stages)
	}
	final = &df.stages[len(df.stages)-1]
	if final == build {
		t.Fatal("the build stage is the final stage: not a multi-stage build")
	}

	// The build stage: CGO off, one go build writing /out/idsql.
	env := build.env()
	if !slicesContain(env, "CGO_ENABLED=0") {
		t.Errorf("build stage ENV %v lacks CGO_ENABLED=0", env)
	}
	runs := build.find("RUN go build ")
	if len(runs) != 1 || !strings.Contains(runs[0], " -o /out/idsql ./cmd/idsql") {
		t.Fatalf("want one `RUN go build ... -o /out/idsql ./cmd/idsql` in the build stage, got %q", runs)
	}
	// The final stage: the binary, an unprivileged user, a health check.
	if cp := final.find("COPY --from=build /out/idsql "); len(cp) != 1 {
		t.Errorf("final stage does not copy /out/idsql from the build stage")
	}
	if u := final.find("USER "); len(u) != 1 || regexp.MustCompile(`^USER (0|root)(:|$)`).MatchString(u[0]) {
		t.Errorf("final stage USER %q: want one non-root user", u)
	}
	if hc := final.find("HEALTHCHECK "); len(hc) != 1 || !strings.Contains(hc[0], "http://127.0.0.1:8080/healthz") {
		t.Errorf("final stage HEALTHCHECK %q: want one on http://127.0.0.1:8080/healthz", hc)
	}
	if cmd := final.find("CMD "); len(cmd) != 1 || !strings.Contains(cmd[0], `"0.0.0.0:8080"`) {
		t.Errorf("final stage CMD %q: want serve on 0.0.0.0:8080, where the health check looks", cmd)
	}

	// Run the build line as the build stage would, writing to a temporary
	// directory instead of /out.
	out := t.TempDir()
	line := strings.TrimPrefix(runs[0], "RUN ")
	line = strings.ReplaceAll(line, "/out/", out+"/")
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, b)
	}
	bin := filepath.Join(out, "idsql")
	checkStatic(t, bin)

	// idsql version: the module, CGO off, and the commit when built in a
	// git checkout (the Dockerfile's build context includes .git).
	vout, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("idsql --version: %v\n%s", err, vout)
	}
	v := string(vout)
	for _, want := range []string{"idsql ", "module    github.com/idsql/idsql\n", "cgo       off\n", "platform  linux/"} {
		if !strings.Contains(v, want) {
			t.Errorf("idsql --version lacks %q:\n%s", want, v)
		}
	}
	if head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output(); err == nil {
		if want := "commit    " + strings.TrimSpace(string(head)); !strings.Contains(v, want) {
			t.Errorf("idsql --version lacks %q (built in a git checkout):\n%s", want, v)
		}
	}

	serveBinary(t, bin)
}

func slicesContain(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// checkStatic fails unless the ELF file at path is statically linked: no
// PT_INTERP program header and no DT_NEEDED entries.
func checkStatic(t *testing.T, path string) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has a program interpreter (PT_INTERP): not static", path)
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v: not static", path, libs)
	}
}

// serveBinary runs `bin serve` on the embedded default as the image's
// default command does (another address and data directory), asks it for
// /healthz, an ID of a key that names no table and /metrics, then stops it
// with SIGTERM as docker stop does.
func serveBinary(t *testing.T, bin string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", "127.0.0.1:0", "--data", t.TempDir())
	cmd.Dir = t.TempDir() // no idsql.yaml there
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stdout)
	base := ""
	for sc.Scan() {
		if m := regexp.MustCompile(`monitor\s+(http://\S+)/`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatalf("no banner; stderr:\n%s", stderr.String())
	}
	go io.Copy(io.Discard, stdout)
	for _, c := range []struct {
		path string
		ok   func(string) bool
	}{
		{"/healthz", func(b string) bool { return b == "ok\n" }},
		{"/api/snowflake/get/anything", func(b string) bool { id, err := strconv.ParseInt(b, 10, 64); return err == nil && id > 0 }},
		{"/metrics", func(b string) bool {
			return strings.Contains(b, "\ngo_goroutines ") && strings.Contains(b, "idsql_http_request_duration_seconds_bucket{")
		}},
	} {
		resp, err := http.Get(base + c.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !c.ok(string(body)) {
			t.Errorf("%s: %d %q", c.path, resp.StatusCode, body)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("serve after SIGTERM: %v\n%s", err, stderr.String())
	}
}

// TestComposeService checks the idsql service of docker-compose.yml
// without Docker: it builds this Dockerfile, checks /healthz, and its
// inline configuration is a valid idsql configuration.
func TestComposeService(t *testing.T) {
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	svc := regexp.MustCompile(`(?ms)^  idsql:\n(.*?)\n\n`).FindStringSubmatch(text)
	if svc == nil {
		t.Fatal("docker-compose.yml has no idsql service")
	}
	for _, want := range []string{"build: .", "healthcheck:", "http://127.0.0.1:8080/healthz", `"0.0.0.0:8080"`,
		"target: /etc/idsql/idsql.yaml", "condition: service_healthy"} {
		if !strings.Contains(svc[1], want) {
			t.Errorf("idsql service lacks %q:\n%s", want, svc[1])
		}
	}
	conf := regexp.MustCompile(`(?ms)^  idsql-config:\n    content: \|\n((?:      .*\n)+)`).FindStringSubmatch(text)
	if conf == nil {
		t.Fatal("docker-compose.yml has no inline idsql-config")
	}
	y := regexp.MustCompile(`(?m)^      `).ReplaceAllString(conf[1], "")
	if _, err := keyset.Parse("docker-compose.yml idsql-config", []byte(y), time.Now()); err != nil {
		t.Errorf("the compose service's configuration: %v\n%s", err, y)
	}
}
