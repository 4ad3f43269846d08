package main

import (
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/httpcreds"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
	promconfig "github.com/prometheus/common/config"
)

// captureServer is a loopback listener that records the Authorization header of every request
// it receives and answers as a simulator would.
type captureServer struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func startCapture(t *testing.T, sim http.Handler) *captureServer {
	t.Helper()
	c := &captureServer{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.auths = append(c.auths, r.Header.Get("Authorization"))
		c.mu.Unlock()
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *captureServer) seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.auths...)
}

// writeFile writes content to name under dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fileHarness is an exporter loading --config.file from path.
func fileHarness(t *testing.T, path string, mutate func(*config)) *harness {
	t.Helper()
	return newHarness(t, func(c *config) {
		c.modules = func() (map[string]*moduleConfig, error) { return loadConfigFile(path) }
		if mutate != nil {
			mutate(c)
		}
	})
}

// TestCredentialsStayInModule: a module with a token probes only its own allowed targets. A
// probe that names a listener outside the list (by address, or by a name resolving into it)
// is refused and the listener receives nothing, no Authorization least of all; the module
// without credentials reaches the same listener and sends none; an unknown module sends
// nothing.
func TestCredentialsStayInModule(t *testing.T) {
	const token = "plant-token-3e1d0c9b8a7f"
	capture := startCapture(t, printersim.New(printersim.WithPrinters("line1")))
	printer := startSim(t, printersim.WithToken(token), printersim.WithPrinters("line1"))
	printerPort := printer.URL[strings.LastIndex(printer.URL, ":")+1:]
	capturePort := capture.URL[strings.LastIndex(capture.URL, ":")+1:]
	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "token", token+"\n")
	cfg := writeFile(t, dir, "exporter.yml", fmt.Sprintf(`
modules:
  default: {}
  plant:
    allowed_targets: [10.20.0.0/16, localhost]
    http_client_config:
      authorization: {type: Bearer, credentials_file: %s}
`, filepath.Base(tokenFile)))
	h := fileHarness(t, cfg, func(c *config) {
		c.resolver = fakeResolver{"evil.test": {"127.0.0.1"}}
	})

	// The printer the token is meant for, listed by name.
	mfs, _ := h.probe("module=plant&printer=line1&target=" + url.QueryEscape("http://localhost:"+printerPort))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Fatalf("plant module against its own printer: up %v", up)
	}

	for _, tgt := range []string{capture.URL, "http://evil.test:" + capturePort, "http://[::ffff:127.0.0.1]:" + capturePort, "http://10.0.0.1:" + capturePort} {
		code, _, body := h.get("/probe?module=plant&printer=line1&target=" + url.QueryEscape(tgt))
		if code != http.StatusForbidden {
			t.Errorf("plant module, %s: %d %s", tgt, code, body)
		}
	}
	if got := capture.seen(); len(got) != 0 {
		t.Fatalf("the capture listener received %d requests from the plant module: %q", len(got), got)
	}

	code, _, body := h.get("/probe?module=nosuch&target=" + url.QueryEscape(capture.URL))
	if code != http.StatusBadRequest || !strings.Contains(body, `unknown module "nosuch"`) {
		t.Errorf("unknown module: %d %s", code, body)
	}
	if got := capture.seen(); len(got) != 0 {
		t.Fatalf("an unknown module sent %d requests", len(got))
	}

	// The default module has no credentials and the default list, which holds loopback.
	mfs, _ = h.probe("printer=line1&target=" + url.QueryEscape(capture.URL))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Errorf("default module: up %v", up)
	}
	got := capture.seen()
	if len(got) == 0 {
		t.Fatal("the default module's probe never reached the capture listener, so the checks above prove nothing")
	}
	for _, a := range got {
		if a != "" {
			t.Errorf("the default module sent Authorization %q", a)
		}
	}
	if strings.Contains(h.logs.String(), token) {
		t.Error("the token shows in the log")
	}
}

// TestCredentialedModuleNeedsAllowedTargets: every kind of credential, with no allowed_targets,
// stops the exporter from starting with a message naming the module; the same module with a
// list loads.
func TestCredentialedModuleNeedsAllowedTargets(t *testing.T) {
	dir := t.TempDir()
	secret := writeFile(t, dir, "secret", "s3cr3t-value-0f9e8d\n")
	cert, key := testkit.NewCA(t).Issue(t, "exporter", testkit.Client).WriteFiles(t, dir)
	for kind, settings := range map[string]string{
		"authorization":      `authorization: {credentials_file: ` + secret + `}`,
		"inline credentials": `authorization: {credentials: s3cr3t-value-0f9e8d}`,
		"bearer_token_file":  `bearer_token_file: ` + secret,
		"basic_auth":         `basic_auth: {username: exporter, password_file: ` + secret + `}`,
		"oauth2":             `oauth2: {client_id: exporter, client_secret_file: ` + secret + `, token_url: "http://10.0.0.1/token"}`,
		"client certificate": `tls_config: {cert_file: ` + cert + `, key_file: ` + key + `}`,
		"http_headers":       `http_headers: {X-Api-Key: {files: [` + secret + `]}}`,
	} {
		cfg := writeFile(t, dir, "exporter.yml", "modules:\n  line-3:\n    http_client_config:\n      "+settings+"\n")
		_, err := newExporter(config{timeout: time.Second, cacheSize: 1,
			modules: func() (map[string]*moduleConfig, error) { return loadConfigFile(cfg) }})
		if err == nil || !strings.Contains(err.Error(), `module "line-3"`) || !strings.Contains(err.Error(), "allowed_targets") {
			t.Errorf("%s without allowed_targets: %v", kind, err)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows the secret: %v", kind, err)
		}
		cfg = writeFile(t, dir, "exporter.yml", "modules:\n  line-3:\n    allowed_targets: [10.0.0.0/8]\n    http_client_config:\n      "+settings+"\n")
		e, err := newExporter(config{timeout: time.Second, cacheSize: 1,
			modules: func() (map[string]*moduleConfig, error) { return loadConfigFile(cfg) }})
		if err != nil {
			t.Errorf("%s with allowed_targets: %v", kind, err)
			continue
		}
		if !e.loaded.Load().modules["line-3"].credentialed {
			t.Errorf("%s: not seen as a credential", kind)
		}
		e.Close()
	}

	// The flags' module follows the same rule.
	var stdout, stderr syncBuffer
	if code := run(t.Context(), []string{"--listen", "127.0.0.1:0", "--bearer-token-file", secret}, &stdout, &stderr); code != 2 ||
		!strings.Contains(stderr.String(), `module "default"`) || !strings.Contains(stderr.String(), "--allow-targets") {
		t.Errorf("--bearer-token-file without --allow-targets: exit %d, %q", code, stderr.String())
	}
}

// TestConfigFileRefusals: what a configuration file may not say.
func TestConfigFileRefusals(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"no modules":      "modules: {}\n",
		"unknown key":     "modules:\n  plant:\n    allowed_target: [10.0.0.0/8]\n",
		"bad CIDR":        "modules:\n  plant:\n    allowed_targets: [10.0.0.0/99]\n",
		"proxy":           "modules:\n  plant:\n    http_client_config: {proxy_url: \"http://10.0.0.9:3128\"}\n",
		"bad module name": "modules:\n  \"pl ant\": {}\n",
		"two auths":       "modules:\n  plant:\n    allowed_targets: [10.0.0.0/8]\n    http_client_config: {basic_auth: {username: a}, authorization: {credentials: b}}\n",
		"missing CA":      "modules:\n  plant:\n    http_client_config: {tls_config: {ca_file: " + filepath.Join(dir, "missing.pem") + "}}\n",
		"not YAML":        "modules: [",
		"misplaced token": "modules:\n  plant:\n    allowed_targets: [10.0.0.0/8]\n    http_client_config: {authorization: t0k3n-abcd}\n",
	} {
		cfg := writeFile(t, dir, "exporter.yml", content)
		_, err := newExporter(config{timeout: time.Second, cacheSize: 1,
			modules: func() (map[string]*moduleConfig, error) { return loadConfigFile(cfg) }})
		if err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "t0k3n") {
			t.Errorf("%s: the error shows the token: %v", name, err)
		}
	}
	var stdout, stderr syncBuffer
	if code := run(t.Context(), []string{"--listen", "127.0.0.1:0", "--config.file", filepath.Join(dir, "exporter.yml"),
		"--allow-targets", "10.0.0.0/8"}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--allow-targets") {
		t.Errorf("--config.file with --allow-targets: exit %d, %q", code, stderr.String())
	}
}

// TestModuleMTLS: a printer behind TLS that requires a client certificate signed by the
// plant's CA is up through the module that presents one, and down through a module that
// trusts the server but has no certificate to show.
func TestModuleMTLS(t *testing.T) {
	ca := testkit.NewCA(t)
	var peers atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			peers.Store(r.TLS.PeerCertificates[0].Subject.CommonName)
		}
		printersim.New(printersim.WithPrinters("line1")).ServeHTTP(w, r)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.Issue(t, "printer", testkit.Server).TLS}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	ca.WriteFiles(t, dir)
	ca.Issue(t, "exporter", testkit.Client).WriteFiles(t, dir)
	cfg := writeFile(t, dir, "exporter.yml", `
modules:
  mtls:
    allowed_targets: [127.0.0.1]
    http_client_config:
      tls_config: {ca_file: ca.pem, cert_file: exporter.pem, key_file: exporter-key.pem}
  ca-only:
    allowed_targets: [127.0.0.1]
    http_client_config:
      tls_config: {ca_file: ca.pem}
`)
	h := fileHarness(t, cfg, nil)
	mfs, body := h.probe("module=mtls&printer=line1&target=" + url.QueryEscape(srv.URL))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Fatalf("mTLS module: up %v\n%s", up, body)
	}
	if cn, _ := peers.Load().(string); cn != "exporter" {
		t.Errorf("the printer saw client certificate %q", cn)
	}
	mfs, _ = h.probe("module=ca-only&printer=line1&target=" + url.QueryEscape(srv.URL))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("module without a client certificate: up %v", up)
	}
	_, _, index := h.get("/")
	for _, want := range []string{"mtls", "ca-only", "127.0.0.1/32"} {
		if !strings.Contains(index, want) {
			t.Errorf("the index page lacks %s", want)
		}
	}
}

// TestCredentialsFileRotated: a new token written to credentials_file is sent from the next
// probe on, without a reload.
func TestCredentialsFileRotated(t *testing.T) {
	var want atomic.Value
	want.Store("Bearer first-token-aaaa")
	sim := printersim.New(printersim.WithPrinters("line1"))
	var seen []string
	var mu sync.Mutex
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		if r.Header.Get("Authorization") != want.Load().(string) {
			http.Error(w, `{"message":"bad token"}`, http.StatusUnauthorized)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	dir := t.TempDir()
	tokenFile := writeFile(t, dir, "token", "first-token-aaaa\n")
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n  plant:\n    allowed_targets: [127.0.0.1]\n    http_client_config:\n      authorization: {credentials_file: token}\n")
	h := fileHarness(t, cfg, nil)
	probe := func() float64 {
		mfs, _ := h.probe("module=plant&printer=line1&target=" + url.QueryEscape(front.URL))
		return mustValue(t, mfs, "labelprinter_up")
	}
	if up := probe(); up != 1 {
		t.Fatalf("first token: up %v", up)
	}
	writeFile(t, dir, filepath.Base(tokenFile), "second-token-bbbb\n")
	want.Store("Bearer second-token-bbbb")
	if up := probe(); up != 1 {
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("after rotation: up %v; the printer saw %q", up, seen)
	}
	mu.Lock()
	defer mu.Unlock()
	if last := seen[len(seen)-1]; last != "Bearer second-token-bbbb" {
		t.Errorf("last Authorization %q", last)
	}
}

// TestReload: POST /-/reload loads a changed file; a broken file keeps the running modules,
// answers 500 with the reason, and the reload gauges say so; other methods get 405.
func TestReload(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("line1"))
	dir := t.TempDir()
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n  a: {}\n")
	h := fileHarness(t, cfg, nil)
	post := func() (int, string) {
		resp, err := h.hc.Post(h.url+"/-/reload", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	gauges := func() (ok, ts float64) {
		_, _, metrics := h.get("/metrics")
		for _, line := range strings.Split(metrics, "\n") {
			if v, found := strings.CutPrefix(line, "labelprinter_exporter_config_last_reload_successful "); found {
				fmt.Sscan(v, &ok)
			}
			if v, found := strings.CutPrefix(line, "labelprinter_exporter_config_last_reload_success_timestamp_seconds "); found {
				fmt.Sscan(v, &ts)
			}
		}
		return ok, ts
	}
	ok0, ts0 := gauges()
	if ok0 != 1 || ts0 <= 0 {
		t.Fatalf("after start: successful %v, timestamp %v", ok0, ts0)
	}
	if code, _, _ := h.get("/probe?module=b&target=" + target(sim)); code != http.StatusBadRequest {
		t.Fatalf("module b before it exists: %d", code)
	}

	writeFile(t, dir, "exporter.yml", "modules:\n  a: {}\n  b: {allowed_targets: [127.0.0.1]}\n")
	if code, body := post(); code != http.StatusOK {
		t.Fatalf("good reload: %d %s", code, body)
	}
	mfs, _ := h.probe("module=b&printer=line1&target=" + target(sim))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Errorf("module b after the reload: up %v", up)
	}
	if ok, ts := gauges(); ok != 1 || ts < ts0 {
		t.Errorf("after a good reload: successful %v, timestamp %v (was %v)", ok, ts, ts0)
	}
	_, ts1 := gauges()

	writeFile(t, dir, "exporter.yml", "modules:\n  b:\n    http_client_config: {authorization: {credentials: x-secret-9}}\n")
	code, body := post()
	if code != http.StatusInternalServerError || !strings.Contains(body, `module "b"`) || strings.Contains(body, "x-secret-9") {
		t.Errorf("broken reload: %d %s", code, body)
	}
	if ok, ts := gauges(); ok != 0 || ts != ts1 {
		t.Errorf("after a broken reload: successful %v, timestamp %v (want %v)", ok, ts, ts1)
	}
	mfs, _ = h.probe("module=b&printer=line1&target=" + target(sim))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Errorf("the running modules did not stay: up %v", up)
	}
	if code, _, _ := h.get("/probe?module=a&target=" + target(sim)); code != http.StatusOK {
		t.Errorf("module a after the broken reload: %d", code)
	}

	if code, hdr, _ := h.get("/-/reload"); code != http.StatusMethodNotAllowed || hdr.Get("Allow") == "" {
		t.Errorf("GET /-/reload: %d, Allow %q", code, hdr.Get("Allow"))
	}
	req, _ := http.NewRequest(http.MethodPut, h.url+"/-/reload", nil)
	resp, err := h.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("PUT /-/reload: %d", resp.StatusCode)
	}
}

// hangingListener accepts connections and never answers; it closes them when the test ends.
func hangingListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}

// TestProbeDeadline: 20 probes at once of a printer that accepts and never answers, with
// Prometheus's 2 s scrape timeout, each answer complete (up 0, its duration) within the 2 s,
// timed by the scraper from the request to the last byte. The probe's budget is 1.5 s
// (--timeout-offset 0.5 s), so the half second is the room left for a loaded machine; the 2 s
// are the bound Prometheus applies, not a speed being measured.
func TestProbeDeadline(t *testing.T) {
	hang := hangingListener(t)
	h := newHarness(t, func(c *config) { c.timeout = maxTimeout })
	const probes, scrapeTimeout = 20, 2 * time.Second
	type result struct {
		elapsed time.Duration
		body    string
		err     error
	}
	results := make(chan result, probes)
	// Time the process was not given (a machine whose CPU other work holds) is not the
	// exporter's to keep: a goroutine that wakes every 5 ms adds up how long it was held back,
	// and the bound is the scrape timeout plus that total, which is near 0 on an idle machine.
	stall := measureStalls(t)
	var start sync.WaitGroup
	start.Add(1)
	for range probes {
		go func() {
			start.Wait()
			req, _ := http.NewRequest("GET", h.url+"/probe?printer=line1&target="+url.QueryEscape(hang), nil)
			req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "2")
			t0 := time.Now()
			resp, err := h.hc.Do(req)
			if err != nil {
				results <- result{err: err}
				return
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			results <- result{elapsed: time.Since(t0), body: string(b), err: err}
		}()
	}
	start.Done()
	for range probes {
		select {
		case r := <-results:
			if r.err != nil {
				t.Fatal(r.err)
			}
			if held := stall(); r.elapsed > scrapeTimeout+held {
				t.Errorf("a probe answered after %v, beyond the %v scrape timeout (the process was held back %v in all)", r.elapsed, scrapeTimeout, held)
			}
			if !strings.Contains(r.body, "labelprinter_up 0") || !strings.Contains(r.body, "labelprinter_probe_duration_seconds") {
				t.Errorf("answer without its metrics:\n%s", r.body)
			}
		case <-time.After(time.Minute):
			t.Fatal("a probe did not end")
		}
	}
}

// TestProbeStatusNotFound: a printer that serves only the contract, with no /status, is up when
// its counters read, says labelprinter_status_supported 0 and writes no status metric.
func TestProbeStatusNotFound(t *testing.T) {
	sim := printersim.New(printersim.WithPrinters("line1"))
	var statusCode atomic.Int32
	statusCode.Store(http.StatusNotFound)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/status" {
			if c := int(statusCode.Load()); c != 0 {
				http.Error(w, `{"message":"no such route"}`, c)
				return
			}
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	h := newHarness(t, nil)
	q := "printer=line1&target=" + url.QueryEscape(front.URL)
	mfs, body := h.probe(q)
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Errorf("without /status: up %v\n%s", up, body)
	}
	if s := mustValue(t, mfs, "labelprinter_status_supported"); s != 0 {
		t.Errorf("without /status: status_supported %v", s)
	}
	for _, name := range []string{"labelprinter_state", "labelprinter_printable", "labelprinter_rag_status", "labelprinter_errors", "labelprinter_ink_level"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("%s written without /status", name)
		}
	}
	if _, ok := value(mfs, "labelprinter_triggers_total", "printer", "line1"); !ok {
		t.Error("no counters")
	}

	statusCode.Store(0)
	mfs, _ = h.probe(q)
	if up, s := mustValue(t, mfs, "labelprinter_up"), mustValue(t, mfs, "labelprinter_status_supported"); up != 1 || s != 1 {
		t.Errorf("with /status: up %v, status_supported %v", up, s)
	}

	statusCode.Store(http.StatusServiceUnavailable)
	mfs, _ = h.probe(q)
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("/status 503: up %v", up)
	}
	if _, ok := mfs["labelprinter_status_supported"]; ok {
		t.Error("status_supported written when /status failed")
	}

	// A 404 on the counters is still down.
	statusCode.Store(http.StatusNotFound)
	mfs, _ = h.probe("printer=nosuch&target=" + url.QueryEscape(front.URL))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("unknown printer without /status: up %v", up)
	}
}

// TestProbeDebug: debug=true answers text/plain with the module, the target, each request with
// its status and duration, the errors and the metrics, and never the credential, even when the
// printer echoes the Authorization header back in its error body.
func TestProbeDebug(t *testing.T) {
	const token = "debug-token-77c1b2a3d4"
	sim := printersim.New(printersim.WithPrinters("line1"))
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/printCounters") {
			http.Error(w, `{"message":"refused `+r.Header.Get("Authorization")+` token=`+token+`"}`, http.StatusForbidden)
			return
		}
		sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	dir := t.TempDir()
	writeFile(t, dir, "token", token)
	cfg := writeFile(t, dir, "exporter.yml", "modules:\n  plant:\n    allowed_targets: [127.0.0.1]\n    http_client_config:\n      authorization: {credentials_file: token}\n")
	h := fileHarness(t, cfg, nil)
	code, hdr, body := h.get("/probe?module=plant&printer=line1&debug=true&target="+url.QueryEscape(front.URL),
		"X-Prometheus-Scrape-Timeout-Seconds", "4")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("%d %s\n%s", code, hdr.Get("Content-Type"), body)
	}
	for _, want := range []string{
		"Module: plant", "Target: " + front.URL, "Printers: line1",
		"Budget: 3.5s (scrape timeout 4s less --timeout-offset 500ms)",
		"GET " + front.URL + "/api/v3/status: 200 OK in ",
		"GET " + front.URL + "/api/v3/printers/line1/printCounters: 403 Forbidden in ",
		"Probe: up 0 in ", "error: counters of \"line1\"",
		"labelprinter_up 0", "labelprinter_status_supported 1", "# TYPE labelprinter_state gauge",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("debug answer lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, token) || strings.Contains(h.logs.String(), token) {
		t.Errorf("the token shows:\n%s\n%s", body, h.logs.String())
	}
	if !strings.Contains(body, "refused") {
		t.Errorf("the printer's message is gone, so the redaction check proves little:\n%s", body)
	}

	// A refused request is answered as usual, and debug must be a boolean.
	if code, _, _ := h.get("/probe?module=plant&debug=true&target=http%3A%2F%2F10.0.0.1"); code != http.StatusForbidden {
		t.Errorf("debug probe outside the list: %d", code)
	}
	if code, _, _ := h.get("/probe?module=plant&debug=maybe&target=" + url.QueryEscape(front.URL)); code != http.StatusBadRequest {
		t.Errorf("debug=maybe: %d", code)
	}
}

// TestRedact: the redaction rule on its own: the module's credentials through the SDK (given
// the values as newSDKClient gives them), Authorization-shaped values of anyone's (an OAuth2
// access token, JSON-escaped or percent-encoded too) by the exporter's own pattern.
func TestRedact(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "user", "opsuser\n")
	pass := writeFile(t, dir, "pass", "pa55-word-xyz\n")
	s := httpcreds.Of(&promconfig.HTTPClientConfig{BasicAuth: &promconfig.BasicAuth{UsernameFile: user, PasswordFile: pass}})
	c, err := labelprinter.NewClient("http://printer.invalid", labelprinter.WithRedactedValues(s.Values()...))
	if err != nil {
		t.Fatal(err)
	}
	in := "pa55-word-xyz pa55%2Dword%2Dxyz Basic b3BzdXNlcjpwYTU1LXdvcmQteHl6 Bearer abc.def-gh1 token=qwerty12 " +
		`"Bearer ya29\/a0AfB\/9zq" Bearer ya29%2Fb0BfC%2F8yr missing or wrong bearer token`
	out := redact(c, in)
	for _, leak := range []string{"pa55", "b3BzdXNlcjpwYTU1", "abc.def", "qwerty12", "a0AfB", "9zq", "b0BfC", "8yr"} {
		if strings.Contains(out, leak) {
			t.Errorf("%q survives: %s", leak, out)
		}
	}
	if !strings.HasSuffix(out, " missing or wrong bearer token") {
		t.Errorf("redaction ate the prose: %s", out)
	}
}

// TestLongTargets: a target of up to maxTargetLen bytes is probed; one byte more is a 400 and
// sends nothing.
func TestLongTargets(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	pad := func(n int) string { return sim.URL + "/" + strings.Repeat("p", n-len(sim.URL)-1) }
	code, _, body := h.get("/probe?target=" + url.QueryEscape(pad(maxTargetLen)))
	if code != http.StatusOK {
		t.Errorf("target of %d bytes: %d %s", maxTargetLen, code, body)
	}
	before := sim.Sim.TotalRequests()
	code, _, body = h.get("/probe?target=" + url.QueryEscape(pad(maxTargetLen+1)))
	if code != http.StatusBadRequest || !strings.Contains(body, "2048") {
		t.Errorf("target of %d bytes: %d %s", maxTargetLen+1, code, body)
	}
	if got := sim.Sim.TotalRequests(); got != before {
		t.Errorf("the refused target sent %d requests", got-before)
	}
	if _, err := parseProbeRequest(url.Values{"target": {strings.Repeat("a", 900_000)}}); err == nil {
		t.Error("a 900 KB target accepted")
	}
	if _, err := parseProbeRequest(url.Values{"target": {sim.URL}, "module": {"a", "b"}}); err == nil {
		t.Error("two modules accepted")
	}
	if _, err := parseProbeRequest(url.Values{"target": {sim.URL}, "module": {strings.Repeat("m", maxModuleNameLen+1)}}); err == nil {
		t.Error("a long module name accepted")
	}
	if r, err := parseProbeRequest(url.Values{"target": {sim.URL}, "module": {""}}); err != nil || r.module != defaultModuleName {
		t.Errorf("empty module: %v %v", r, err)
	}
}

// measureStalls starts a goroutine that sleeps 5 ms at a time until the test ends and returns
// a function giving how late it woke in all, added up since it started: how long the process
// was kept from running. The total, not the longest single stall, since a machine whose other
// work holds the CPU (or the race detector's slower code) delays every step of a probe a
// little, and the steps add up.
func measureStalls(t *testing.T) func() time.Duration {
	var total atomic.Int64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			t0 := time.Now()
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if late := int64(time.Since(t0) - 5*time.Millisecond); late > 0 {
				total.Add(late)
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
	return func() time.Duration { return time.Duration(total.Load()) }
}
