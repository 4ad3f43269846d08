package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/ociimage"
	"github.com/labelprinter/go-labelprinter/printersim"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestFlags: bad flags and binaries that are no release's exit 2 with a message naming the
// flag or file, before anything is written.
func TestFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	text, dynamic := filepath.Join(dir, "text"), filepath.Join(dir, "dynamic")
	for _, d := range []string{text, dynamic} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(text, "labelprinter-exporter"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{nil, "-binaries is required"},
		{[]string{"-binaries", dir}, "-version is required"},
		{[]string{"-binaries", dir, "-version", "1.2.3"}, "-out is required"},
		{[]string{"-binaries", dir, "-version", "1.2.3", "-out", out, "-images", "labelprinter-exporter,labelctl"}, `-images: no image "labelctl"; there are labelprinter-exporter, labelprinter-mqtt, printersim`},
		{[]string{"-binaries", dir, "-version", "1.2.3", "-out", out, "-ca-bundle", filepath.Join(dir, "missing.pem")}, "-ca-bundle: open " + filepath.Join(dir, "missing.pem")},
		{[]string{"-binaries", dir, "-version", "1.2.3", "-out", out, "-ca-bundle", empty}, "-ca-bundle " + empty + " holds no PEM certificate"},
		{[]string{"-binaries", dir, "-version", "1.2.3", "-out", out}, "-binaries: open " + filepath.Join(dir, "labelprinter-exporter")},
		{[]string{"-binaries", text, "-version", "1.2.3", "-out", out}, "-binaries: " + filepath.Join(text, "labelprinter-exporter") + ": not an ELF executable"},
		{[]string{"-binaries", dir, "-version", "1.2.3", "-out", out, "extra"}, `takes no arguments, got ["extra"]`},
	}
	// A program of this machine's C library, where there is one.
	if b, err := os.ReadFile("/bin/true"); err == nil {
		if err := os.WriteFile(filepath.Join(dynamic, "labelprinter-exporter"), b, 0o755); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			args []string
			want string
		}{[]string{"-binaries", dynamic, "-version", "1.2.3", "-out", out}, "dynamically linked (it names an interpreter): build it with CGO_ENABLED=0"})
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), c.args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 saying %q", c.args, code, stderr.String(), c.want)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("-out was made after a bad flag: %v", err)
	}
}

// TestReleaseBinariesOnly builds a small static program as a release does (in a git checkout,
// -buildvcs=true, its version set with the linker) and as it must not be, and makes an image
// of each: the release's gets the commit and its time from the binary and the version given;
// a wrong -version, a build of uncommitted changes and one recording no commit are refused.
func TestReleaseBinariesOnly(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the program with")
	}
	gitTool, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git to make a checkout with: install git")
	}
	src := t.TempDir()
	sh := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64", "GOFLAGS=", "GOTOOLCHAIN=local",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
			"GIT_COMMITTER_DATE=2026-11-27T23:29:25Z", "GIT_AUTHOR_DATE=2026-11-27T23:29:25Z")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	files := map[string]string{
		"go.mod":  "module example.com/rel\n\ngo 1.21\n",
		"main.go": "package main\n\nvar version string\n\nfunc main() { println(version) }\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sh(gitTool, "init", "-q")
	sh(gitTool, "add", ".")
	sh(gitTool, "commit", "-q", "-m", "one")
	head, err := exec.Command(gitTool, "-C", src, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	build := func(dir string, flags ...string) string {
		t.Helper()
		bins := filepath.Join(t.TempDir(), dir)
		args := append([]string{"build", "-trimpath", "-ldflags", "-s -w -X main.version=9.8.7-rc.1"}, flags...)
		sh(goTool, append(args, "-o", filepath.Join(bins, "printersim"), ".")...)
		return bins
	}
	release := build("release", "-buildvcs=true")
	novcs := build("novcs", "-buildvcs=false")
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(files["main.go"]+"// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	modified := build("modified", "-buildvcs=true")

	out := t.TempDir()
	for _, c := range []struct {
		bins, version, want string
	}{
		{release, "9.8.7-rc.2", "-version 9.8.7-rc.2: " + filepath.Join(release, "printersim") + " does not hold it"},
		{novcs, "9.8.7-rc.1", "records no commit (built without -buildvcs=true, or outside a git checkout): not a release build"},
		{modified, "9.8.7-rc.1", "was built from a checkout with uncommitted changes: not a release build"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"-binaries", c.bins, "-version", c.version, "-images", "printersim", "-out", out}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%s: exit %d, %q; want 2 saying %q", filepath.Base(c.bins), code, stderr.String(), c.want)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"-binaries", release, "-version", "9.8.7-rc.1", "-images", "printersim", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("the release's binary: exit %d, %s", code, stderr.String())
	}
	f, err := os.Open(filepath.Join(out, "printersim-linux-amd64.oci.tar"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	a, err := ociimage.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	l := a.Config.Config.Labels
	if l["org.opencontainers.image.version"] != "9.8.7-rc.1" || l["org.opencontainers.image.revision"] != strings.TrimSpace(string(head)) ||
		l["org.opencontainers.image.created"] != "2026-11-27T23:29:25Z" || a.Index.Manifests[0].Annotations[ociimage.RefNameAnnotation] != "printersim:9.8.7-rc.1" {
		t.Errorf("labels %v, ref %q; want version 9.8.7-rc.1, the commit %s of 2026-11-27T23:29:25Z", l, a.Index.Manifests[0].Annotations[ociimage.RefNameAnnotation], head)
	}
	if !strings.Contains(stdout.String(), "printersim:9.8.7-rc.1") {
		t.Errorf("stdout %q names no image", stdout.String())
	}
}

// want is what each image must hold, written here apart from the specs the images are built
// from: the port is where the command listens with the image's arguments.
var want = []struct {
	name     string
	cmd      string
	port     string
	stateDir string
}{
	{"labelprinter-exporter", "", "9631/tcp", ""},
	{"labelprinter-mqtt", "--config.file /etc/labelprinter-mqtt/bridge.yml --web.listen-address :9632", "9632/tcp", "/var/lib/labelprinter-mqtt"},
	{"printersim", "-addr :8631", "8631/tcp", ""},
}

// imagesDir returns the directory the images were built into, from LABELPRINTER_OCI_IMAGES
// (as .ci/run sets it after building them); without it the test skips, or fails when
// LABELPRINTER_REQUIRE_OCI_IMAGES=1.
func imagesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("LABELPRINTER_OCI_IMAGES")
	if dir != "" {
		return dir
	}
	how := "make the images with `go run ./internal/cmd/ociimage -out DIR ...` (see its doc) and set LABELPRINTER_OCI_IMAGES=DIR"
	if os.Getenv("LABELPRINTER_REQUIRE_OCI_IMAGES") == "1" {
		t.Fatal("LABELPRINTER_OCI_IMAGES is not set and LABELPRINTER_REQUIRE_OCI_IMAGES=1: " + how)
	}
	t.Skip("LABELPRINTER_OCI_IMAGES is not set: " + how + " to inspect them")
	return ""
}

// archive returns the path of the one image archive of name in dir.
func archive(t *testing.T, dir, name string) string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(dir, name+"-linux-*.oci.tar"))
	if len(m) != 1 {
		t.Fatalf("%s: %d archives %s-linux-*.oci.tar in %s, want 1", name, len(m), name, dir)
	}
	return m[0]
}

// TestImages inspects each built image as a runtime and a plant's IT would: the entrypoint,
// the non-root user, the exposed port, the OCI labels, and a layer holding a static binary
// built with -trimpath and the version in its labels, a CA bundle, /etc/passwd naming the
// user, each file owned by root and not writable by the user but for its home and state.
func TestImages(t *testing.T) {
	dir := imagesDir(t)
	for _, w := range want {
		t.Run(w.name, func(t *testing.T) {
			f, err := os.Open(archive(t, dir, w.name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			a, err := ociimage.Read(f)
			if err != nil {
				t.Fatal(err)
			}
			c := a.Config.Config
			bin := "/usr/local/bin/" + w.name
			if strings.Join(c.Entrypoint, " ") != bin || strings.Join(c.Cmd, " ") != w.cmd {
				t.Errorf("entrypoint %q, cmd %q; want %q, %q", c.Entrypoint, c.Cmd, bin, w.cmd)
			}
			if c.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532", c.User)
			}
			if _, ok := c.ExposedPorts[w.port]; !ok || len(c.ExposedPorts) != 1 {
				t.Errorf("exposed ports %v, want %s alone", c.ExposedPorts, w.port)
			}
			l := c.Labels
			version := l["org.opencontainers.image.version"]
			if version == "" || strings.HasPrefix(version, "v") {
				t.Errorf("version label %q: want the version without a leading v", version)
			}
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(l["org.opencontainers.image.revision"]) {
				t.Errorf("revision label %q: want a commit", l["org.opencontainers.image.revision"])
			}
			if l["org.opencontainers.image.source"] != "https://github.com/labelprinter/go-labelprinter" ||
				l["org.opencontainers.image.licenses"] != "Apache-2.0" || l["org.opencontainers.image.title"] != w.name {
				t.Errorf("labels %v", l)
			}
			if created, err := time.Parse(time.RFC3339, l["org.opencontainers.image.created"]); err != nil || !created.Equal(a.Config.Created) {
				t.Errorf("created label %q, config's %v: want the same time", l["org.opencontainers.image.created"], a.Config.Created)
			}
			if ref := a.Index.Manifests[0].Annotations[ociimage.RefNameAnnotation]; ref != w.name+":"+version {
				t.Errorf("ref name %q, want %s:%s", ref, w.name, version)
			}
			if a.Config.OS != "linux" {
				t.Errorf("os %q", a.Config.OS)
			}

			b := a.File(bin)
			if b == nil || b.Dir || b.Mode != 0o755 || b.UID != 0 || b.GID != 0 {
				t.Fatalf("%s: %+v; want a root-owned 0755 file", bin, b)
			}
			checkBinary(t, b.Data, a.Config.Architecture, version, l["org.opencontainers.image.revision"], a.Config.Created)

			ca := a.File("/etc/ssl/certs/ca-certificates.crt")
			if ca == nil || ca.Mode != 0o644 || ca.UID != 0 || !x509.NewCertPool().AppendCertsFromPEM(ca.Data) {
				t.Errorf("CA bundle: %v; want a root-owned 0644 file of PEM certificates", ca != nil)
			}
			pw := a.File("/etc/passwd")
			if pw == nil || pw.Mode != 0o644 || pw.UID != 0 || !regexp.MustCompile(`(?m)^[a-z]+:x:65532:65532:[^:]*:/home/nonroot:`).Match(pw.Data) {
				t.Errorf("/etc/passwd: want a root-owned 0644 file naming 65532 with home /home/nonroot")
			}
			if h := a.File("/home/nonroot"); h == nil || !h.Dir || h.UID != 65532 || h.Mode != 0o700 {
				t.Errorf("/home/nonroot: %+v", h)
			}
			if tmp := a.File("/tmp"); tmp == nil || tmp.Mode != 0o777|fs.ModeSticky {
				t.Errorf("/tmp: %+v, want 1777", tmp)
			}
			if w.stateDir != "" {
				s := a.File(w.stateDir)
				if s == nil || !s.Dir || s.UID != 65532 || s.GID != 65532 || s.Mode != 0o700 {
					t.Errorf("%s: %+v; want the user's 0700 directory", w.stateDir, s)
				}
				if _, ok := c.Volumes[w.stateDir]; !ok {
					t.Errorf("volumes %v, want %s", c.Volumes, w.stateDir)
				}
			}
			for i, f := range a.Files {
				if f.Mode&(fs.ModeSetuid|fs.ModeSetgid) != 0 {
					t.Errorf("%s: mode %v: setuid or setgid", f.Path, f.Mode)
				}
				mine := f.Path == "/home/nonroot" || f.Path == w.stateDir
				if !mine && (f.UID != 0 || f.GID != 0 || (f.Mode&0o002 != 0 && f.Path != "/tmp")) {
					t.Errorf("%s: owner %d:%d, mode %v: want root's, not writable by others", f.Path, f.UID, f.GID, f.Mode)
				}
				if h := a.Headers[i]; !h.ModTime.Equal(a.Config.Created) {
					t.Errorf("%s: time %v, want the commit time %v", f.Path, h.ModTime, a.Config.Created)
				}
			}
		})
	}
}

// checkBinary: the command is a static ELF executable for arch, built with -trimpath and
// without cgo from the labels' commit with no uncommitted changes, holding the labels' version.
func checkBinary(t *testing.T, b []byte, arch, version, revision string, created time.Time) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the binary is not ELF: %v", err)
	}
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[arch]
	if f.Machine != machine {
		t.Errorf("ELF machine %v, want %v for %s", f.Machine, machine, arch)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary names an interpreter: it is not static")
		}
	}
	bi, err := buildinfo.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("no build information: %v", err)
	}
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if settings["-trimpath"] != "true" || settings["CGO_ENABLED"] != "0" || settings["GOOS"] != "linux" || settings["GOARCH"] != arch {
		t.Errorf("build settings %v: want -trimpath, CGO_ENABLED=0, linux/%s", settings, arch)
	}
	if settings["vcs.revision"] != revision || settings["vcs.modified"] != "false" || settings["vcs.time"] != created.Format(time.RFC3339) {
		t.Errorf("vcs.revision %q, vcs.modified %q, vcs.time %q; want the labels' commit %s of %v, unmodified",
			settings["vcs.revision"], settings["vcs.modified"], settings["vcs.time"], revision, created)
	}
	// -trimpath leaves -ldflags out of the build information; the version the linker set is a
	// string of the binary's data, which nothing else puts there.
	if !bytes.Contains(b, []byte(version)) {
		t.Errorf("the binary does not hold the labels' version %s", version)
	}
}

// podmanRun loads the image name from the built archives into podman and runs it with args
// on the host's network (each command is told to listen on loopback only); it returns the
// container's ID and the image's labels, and removes both at the test's end, logging the
// container's output when the test failed. It skips when podman is missing, or fails when
// LABELPRINTER_REQUIRE_PODMAN=1 (as .ci/run sets it where podman is installed).
func podmanRun(t *testing.T, name string, podmanArgs []string, args ...string) (pm func(...string) (string, error), id string, labels map[string]string) {
	t.Helper()
	dir := imagesDir(t)
	podman, err := exec.LookPath("podman")
	if err != nil {
		if os.Getenv("LABELPRINTER_REQUIRE_PODMAN") == "1" {
			t.Fatal("podman not found and LABELPRINTER_REQUIRE_PODMAN=1: install it (Debian: apt-get install podman runc)")
		}
		t.Skip("podman not found: install it (Debian: apt-get install podman runc) to run the images; LABELPRINTER_REQUIRE_PODMAN=1 makes this a failure")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pm = func(args ...string) (string, error) {
		var stderr bytes.Buffer
		cmd := exec.CommandContext(ctx, podman, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("podman %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	file := archive(t, dir, name)
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	a, err := ociimage.Read(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	out, err := pm("load", "-i", file)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`Loaded image(?:\(s\))?: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("podman load said %q, naming no image", out)
	}
	image := m[1]
	t.Cleanup(func() { _, _ = pm("rmi", image) }) // a run per commit would otherwise pile images up

	run := []string{"run", "-d", "--rm", "--network=host",
		// A sandboxed root without CAP_SYS_RESOURCE cannot raise the limits to podman's defaults.
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"}
	if _, err := exec.LookPath("runc"); err == nil {
		// crun refuses a cgroup v1 hierarchy that also mounts a named systemd hierarchy; runc
		// runs on both.
		run = append(run, "--runtime", "runc")
	}
	run = append(append(append(run, podmanArgs...), image), args...)
	id, err = pm(run...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if logs, err := pm("logs", id); err == nil && t.Failed() {
			t.Logf("the container's output:\n%s", logs)
		}
		_, _ = pm("rm", "-f", "-v", "-t", "5", id) // -v: the anonymous volume of the image's VOLUME too
	})
	return pm, id, a.Config.Config.Labels
}

// get answers a GET of url within 10 s.
func get(url string) (int, string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	resp, err := client.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// await returns the body of url once it answers 200, or fails after 90 s.
func await(t *testing.T, url string) string {
	t.Helper()
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		code, body, err := get(url)
		if err == nil && code == 200 {
			return body
		}
		if time.Now().After(deadline) {
			t.Fatalf("the container did not answer %s with 200: %d, %v, %q", url, code, err, body)
		}
	}
}

// checkBuildInfo: the metric says the version and commit of the image's labels, which the
// linker set.
func checkBuildInfo(t *testing.T, metrics, metric string, labels map[string]string) {
	t.Helper()
	line := regexp.MustCompile(`(?m)^` + metric + `\{.*\} 1$`).FindString(metrics)
	if !strings.Contains(line, `revision="`+labels["org.opencontainers.image.revision"]+`"`) ||
		!strings.Contains(line, `version="`+labels["org.opencontainers.image.version"]+`"`) {
		t.Errorf("%s %q, want the labels' version %s and revision %s", metric, line,
			labels["org.opencontainers.image.version"], labels["org.opencontainers.image.revision"])
	}
}

// TestPodmanRunsExporter runs the exporter's image and scrapes it: its own metrics, with its
// build_info naming the labels' version and commit, and a probe of a simulated printer, which
// show the image's binary starts and reaches a printer; the process runs as 65532.
func TestPodmanRunsExporter(t *testing.T) {
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	port := freePort(t)
	pm, id, labels := podmanRun(t, "labelprinter-exporter", nil, "--listen", "127.0.0.1:"+port)

	metrics := await(t, "http://127.0.0.1:"+port+"/metrics")
	if !strings.Contains(metrics, "labelprinter_exporter_config_last_reload_successful 1") {
		t.Errorf("/metrics lacks labelprinter_exporter_config_last_reload_successful 1:\n%s", metrics)
	}
	checkBuildInfo(t, metrics, "labelprinter_exporter_build_info", labels)
	code, body, err := get("http://127.0.0.1:" + port + "/probe?target=" + sim.URL + "&printer=line1")
	if err != nil || code != 200 || !strings.Contains(body, "labelprinter_up 1") {
		t.Errorf("probe of the simulator: %d, %v:\n%s", code, err, body)
	}

	pid, err := pm("inspect", "-f", "{{.State.Pid}}", id)
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Uid:\t65532\t65532\t65532\t65532$`).Match(status) {
		t.Errorf("the exporter's process runs as %s, want 65532", regexp.MustCompile(`(?m)^Uid:.*$`).Find(status))
	}
}

// TestPodmanRunsBridge runs the bridge's image with its configuration mounted where the image
// reads it and its state in the image's volume, as the README shows, and an embedded broker:
// it becomes ready, which it is only once it made its outbox in the volume as user 65532 and
// connected, and its build_info names the labels' version and commit.
func TestPodmanRunsBridge(t *testing.T) {
	sim, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	defer sim.Close()
	web, broker := freePort(t), freePort(t)
	cfg := filepath.Join(t.TempDir(), "bridge.yml")
	yml := "broker: {client_id: image-test}\nstate_dir: /var/lib/labelprinter-mqtt\npoll_interval: 1s\n" +
		"printers: [{name: line1, url: \"" + sim.URL + "\", printer: line1}]\n"
	if err := os.WriteFile(cfg, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}
	pm, id, labels := podmanRun(t, "labelprinter-mqtt", []string{"-v", cfg + ":/etc/labelprinter-mqtt/bridge.yml:ro"},
		"--config.file", "/etc/labelprinter-mqtt/bridge.yml", "--web.listen-address", "127.0.0.1:"+web,
		"--embedded-broker", "127.0.0.1:"+broker)

	await(t, "http://127.0.0.1:"+web+"/readyz")
	metrics := await(t, "http://127.0.0.1:"+web+"/metrics")
	checkBuildInfo(t, metrics, "labelprinter_mqtt_build_info", labels)
	// The outbox files are in the image's volume, the user's.
	vol, err := pm("inspect", "-f", `{{range .Mounts}}{{if eq .Destination "/var/lib/labelprinter-mqtt"}}{{.Source}}{{end}}{{end}}`, id)
	if err != nil || vol == "" {
		t.Fatalf("no volume at /var/lib/labelprinter-mqtt: %q, %v", vol, err)
	}
	entries, err := os.ReadDir(vol)
	if err != nil || len(entries) == 0 {
		t.Errorf("the volume %s holds %d files, %v; want the outbox", vol, len(entries), err)
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			t.Fatalf("%s: no owner to read", e.Name())
		}
		if st.Uid != 65532 {
			t.Errorf("%s in the volume: owner %d, want 65532", e.Name(), st.Uid)
		}
	}
	out, err := pm("exec", id, "/usr/local/bin/labelprinter-mqtt", "--version")
	if err != nil || !strings.Contains(out, labels["org.opencontainers.image.version"]) {
		t.Errorf("--version in the container: %q, %v; want the labels' version", out, err)
	}
}

// TestPodmanRunsPrintersim runs printersim's image and reads a printer's counters from it.
func TestPodmanRunsPrintersim(t *testing.T) {
	port := freePort(t)
	podmanRun(t, "printersim", nil, "-addr", "127.0.0.1:"+port, "-printers", "line1,line2")
	body := await(t, "http://127.0.0.1:"+port+"/api/v3/printers/line2/printCounters")
	if !strings.Contains(body, `"printedLabels":0`) {
		t.Errorf("line2's counters: %s", body)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}
