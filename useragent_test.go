package labelprinter

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

// TestVersionIn: the User-Agent's version is the one the build information gives this module,
// as a dependency (replaced or not) or as the program's own module.
func TestVersionIn(t *testing.T) {
	for _, tc := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/plant"}, Deps: []*debug.Module{
			{Path: "github.com/labelprinter/go-labelprinter/other", Version: "v1.0.0"},
			{Path: sdkModulePath, Version: "v0.9.7"}}}, "v0.9.7"},
		{"replaced dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/plant"}, Deps: []*debug.Module{
			{Path: sdkModulePath, Version: "v0.9.7", Replace: &debug.Module{Path: "../go-labelprinter"}}}}, "v0.9.7"},
		{"clone with version control", debug.BuildInfo{Main: debug.Module{Path: sdkModulePath, Version: "v0.9.8-0.20261120100000-0123456789ab+dirty"}}, "v0.9.8-0.20261120100000-0123456789ab+dirty"},
		{"clone", debug.BuildInfo{Main: debug.Module{Path: sdkModulePath, Version: "(devel)"}}, "devel"},
		{"not in the build", debug.BuildInfo{Main: debug.Module{Path: "example.com/plant"}}, "unknown"},
	} {
		if got := versionIn(&tc.bi); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// uaServer answers every request {} and keeps the User-Agents it was sent.
func uaServer(t *testing.T) (url string, agents func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.UserAgent())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// probeProgram lists the labels of the printer at its first argument with a Client of the
// default options, so the server sees the SDK's own User-Agent.
const probeProgram = `package main

import (
	"context"
	"fmt"
	"os"

	labelprinter "` + sdkModulePath + `"
)

func main() {
	c, err := labelprinter.NewClient(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer c.Close()
	if _, err := c.Labels.List(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
`

func goCommand(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds a program")
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build a program with")
	}
	return p
}

// TestUserAgentAsDependency builds a program in a module of its own that requires this module
// at v0.9.7, replaced by this checkout, without the network (the module cache only), and checks
// that it sends go-labelprinter/v0.9.7.
func TestUserAgentAsDependency(t *testing.T) {
	goCmd := goCommand(t)
	checkout, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	goMod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go .*$`).Find(goMod)
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/plant\n\n" + string(goLine) + "\n\nrequire " + sdkModulePath + " v0.9.7\n\nreplace " +
			sdkModulePath + " => " + checkout + "\n",
		"go.sum":  string(sum),
		"main.go": probeProgram,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "plant")
	build := exec.Command(goCmd, "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	url, agents := uaServer(t)
	if out, err := exec.Command(bin, url).CombinedOutput(); err != nil {
		t.Fatalf("program: %v\n%s", err, out)
	}
	if got := agents(); len(got) != 1 || got[0] != "go-labelprinter/v0.9.7" {
		t.Errorf("User-Agents %q, want [go-labelprinter/v0.9.7]", got)
	}
}

// TestUserAgentFromClone builds a program inside this checkout's module (added by -overlay,
// with version control information when the checkout is a git work tree) and checks that it
// sends the version its build information holds for the module, as go version -m reads it.
func TestUserAgentFromClone(t *testing.T) {
	goCmd := goCommand(t)
	checkout, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(src, []byte(probeProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	ov, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(checkout, "internal", "uaprobe", "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(overlay, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "uaprobe")
	build := exec.Command(goCmd, "build", "-overlay", overlay, "-o", bin, "./internal/uaprobe")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=auto")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := exec.Command(goCmd, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	m := regexp.MustCompile(`(?m)^\s*mod\s+` + regexp.QuoteMeta(sdkModulePath) + `\s+(\S+)`).FindSubmatch(info)
	if m == nil {
		t.Fatalf("go version -m names no main module:\n%s", info)
	}
	want := "go-labelprinter/" + strings.Replace(string(m[1]), "(devel)", "devel", 1)
	url, agents := uaServer(t)
	if out, err := exec.Command(bin, url).CombinedOutput(); err != nil {
		t.Fatalf("program: %v\n%s", err, out)
	}
	if got := agents(); len(got) != 1 || got[0] != want {
		t.Errorf("User-Agents %q, want [%s] (go version -m: %s)", got, want, m[1])
	}
	t.Logf("a build from this checkout sends %s", want)
}
