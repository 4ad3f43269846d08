package main

import (
	"context"
	"encoding/pem"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestRun starts the command as main does, probes a simulator that wants a token read from
// --bearer-token-file, reads /metrics, and stops it; the token shows in no output.
func TestRun(t *testing.T) {
	const token = "run-token-5a4b3c2d1e"
	sim := startSim(t, printersim.WithToken(token), printersim.WithPrinters("line1"))
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--bearer-token-file", tokenFile,
			"--allow-targets", "127.0.0.0/8,::1", "--log-level", "debug"}, &stdout, &stderr)
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(stdout.String()); m != nil {
			base = "http://" + m[1]
		}
	}
	if base == "" {
		cancel()
		<-done
		t.Fatalf("no address printed: %q %q", stdout.String(), stderr.String())
	}
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	get := func(path string) string {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	probe := get("/probe?target=" + url.QueryEscape(sim.URL) + "&printer=line1")
	if !strings.Contains(probe, "labelprinter_up 1") {
		t.Errorf("probe with the token from the file:\n%s", probe)
	}
	get("/probe?target=" + url.QueryEscape(sim.URL) + "&printer=nosuch") // a failure, logged at debug
	metrics := get("/metrics")
	if !strings.Contains(metrics, `labelprinter_exporter_probes_total{result="success"} 1`) {
		t.Errorf("/metrics:\n%s", metrics)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "probe failed") {
		t.Errorf("the failed probe was not logged: %q", stderr.String())
	}
	for _, out := range []string{stdout.String(), stderr.String(), probe, metrics} {
		if strings.Contains(out, token) {
			t.Errorf("the token shows:\n%s", out)
		}
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte(" \n"), 0o600); err != nil {
		t.Fatal(err)
	}
	twoLines := filepath.Join(dir, "two-lines")
	if err := os.WriteFile(twoLines, []byte("secret-part-one\nsecret-part-two\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--log-level", "loud"},
		{"--allow-targets", "10.0.0.0/99"},
		{"--allow-targets", " , "},
		{"--bearer-token-file", filepath.Join(dir, "missing")},
		{"--bearer-token-file", empty},
		{"--bearer-token-file", twoLines},
		{"--ca-cert", filepath.Join(dir, "missing.pem")},
		{"--ca-cert", notPEM},
		{"--timeout", "0s"},
		{"--timeout", "1h"},
		{"--cache-size", "0"},
		{"--no-such-flag"},
		{"extra"},
	} {
		var stdout, stderr syncBuffer
		if code := run(context.Background(), append([]string{"--listen", "127.0.0.1:0"}, args...), &stdout, &stderr); code != 2 {
			t.Errorf("%q: exit %d", args, code)
		}
		if strings.Contains(stderr.String(), "secret-part") {
			t.Errorf("%q: the token file's content shows: %s", args, stderr.String())
		}
		if stderr.String() == "" {
			t.Errorf("%q: no message", args)
		}
	}
	// A mistyped flag is one line with the closest flag, not Go's usage of every flag.
	var stdout, stderr syncBuffer
	if code := run(context.Background(), []string{"--lisen", "127.0.0.1:0"}, &stdout, &stderr); code != 2 ||
		stderr.String() != "labelprinter-exporter: unknown flag --lisen (did you mean --listen?)\n" {
		t.Errorf("--lisen: exit %d, stderr %q", code, stderr.String())
	}
}

func TestRunListenFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var stdout, stderr syncBuffer
	if code := run(context.Background(), []string{"--listen", ln.Addr().String()}, &stdout, &stderr); code != 1 {
		t.Errorf("exit %d for an address in use", code)
	}
}

// TestTLSFlags: an HTTPS printer with its own CA is down without --ca-cert, up with it, and up
// with --insecure-skip-verify.
func TestTLSFlags(t *testing.T) {
	srv := httptest.NewTLSServer(printersim.New(printersim.WithPrinters("line1")))
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		up   string
	}{
		{nil, "labelprinter_up 0"},
		{[]string{"--ca-cert", ca}, "labelprinter_up 1"},
		{[]string{"--insecure-skip-verify"}, "labelprinter_up 1"},
	} {
		cfg, _, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, func(c *config) { c.modules = cfg.modules })
		_, body := h.probe("target=" + url.QueryEscape(srv.URL) + "&printer=line1")
		if !strings.Contains(body, tc.up) {
			t.Errorf("%q: want %s:\n%s", tc.args, tc.up, body)
		}
	}
}

// TestRunReloadOnSIGHUP: the command loads --config.file again on SIGHUP; a broken file is
// reported and the running modules stay.
func TestRunReloadOnSIGHUP(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("line1"))
	dir := t.TempDir()
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n  a: {}\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"--listen", "127.0.0.1:0", "--config.file", cfg}, &stdout, &stderr)
	}()
	waitFor := func(what string, buf *syncBuffer, cond func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if cond(buf.String()) {
				return
			}
		}
		cancel()
		<-done
		t.Fatalf("%s never happened: %q %q", what, stdout.String(), stderr.String())
	}
	waitFor("listening", &stdout, func(s string) bool { return strings.Contains(s, "listening on") })
	base := "http://" + regexp.MustCompile(`listening on (\S+)`).FindStringSubmatch(stdout.String())[1]
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	status := func(module string) int {
		resp, err := hc.Get(base + "/probe?module=" + module + "&printer=line1&target=" + url.QueryEscape(sim.URL))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := status("b"); code != http.StatusBadRequest {
		t.Fatalf("module b before the reload: %d", code)
	}
	writeFile(t, dir, "exporter.yml", "modules:\n  a: {}\n  b: {}\n")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the reload", &stderr, func(s string) bool { return strings.Contains(s, "configuration reloaded") })
	if code := status("b"); code != http.StatusOK {
		t.Errorf("module b after the reload: %d", code)
	}
	writeFile(t, dir, "exporter.yml", "modules: [")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor("the failed reload", &stderr, func(s string) bool { return strings.Contains(s, "reload failed") })
	if code := status("b"); code != http.StatusOK {
		t.Errorf("module b after the broken reload: %d", code)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
}
