package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/testkit"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	promconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(simFarmEnv) != "" {
		os.Exit(runSimFarm(os.Getenv(simFarmEnv), os.Stdin, os.Stdout))
	}
	code := m.Run()
	farmStop()
	// goleak.VerifyTestMain, after the benchmarks' simulator farm is stopped.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// syncBuffer is safe to write from the command and read from the test.
type syncBuffer = testkit.SyncBuffer

// harness is an exporter served over real HTTP, logging at debug level into logs.
type harness struct {
	t    *testing.T
	e    *exporter
	url  string
	hc   *http.Client
	logs *syncBuffer
}

func newHarness(t *testing.T, mutate func(*config)) *harness {
	t.Helper()
	logs := &syncBuffer{}
	cfg := config{
		timeout:       5 * time.Second,
		timeoutOffset: defaultTimeoutOffset,
		cacheSize:     defaultCacheSize,
		modules:       defaultOnly(newModuleConfig()),
		logger:        slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	e, err := newExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	return &harness{t: t, e: e, url: srv.URL, hc: srv.Client(), logs: logs}
}

// newModuleConfig is a module with prometheus/common's defaults and the given allowed targets.
func newModuleConfig(allow ...string) *moduleConfig {
	return &moduleConfig{HTTPClientConfig: promconfig.DefaultHTTPClientConfig, AllowedTargets: allow}
}

// defaultOnly loads m as the default module, every time.
func defaultOnly(m *moduleConfig) func() (map[string]*moduleConfig, error) {
	return func() (map[string]*moduleConfig, error) { return map[string]*moduleConfig{defaultModuleName: m}, nil }
}

// defaultModule returns the running default module.
func (h *harness) defaultModule() *module { return h.e.loaded.Load().modules[defaultModuleName] }

// targets returns the running target cache.
func (h *harness) targets() *targetCache { return h.e.loaded.Load().targets }

// get sends GET path with header pairs ("Name", "value", ...) and returns the answer.
func (h *harness) get(path string, header ...string) (int, http.Header, string) {
	h.t.Helper()
	req, err := http.NewRequest("GET", h.url+path, nil)
	if err != nil {
		h.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := h.hc.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(body)
}

// probe scrapes /probe with query, expects 200, and parses the answer with expfmt.
func (h *harness) probe(query string, header ...string) (map[string]*dto.MetricFamily, string) {
	h.t.Helper()
	code, _, body := h.get("/probe?"+query, header...)
	if code != http.StatusOK {
		h.t.Fatalf("probe %s: %d %s", query, code, body)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		h.t.Fatalf("parse %q: %v", body, err)
	}
	return mfs, body
}

// value returns the sample of name whose labels are exactly labels ("name", "value", ...).
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf, ok := mfs[name]
	if !ok {
		return 0, false
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
next:
	for _, m := range mf.GetMetric() {
		if len(m.GetLabel()) != len(want) {
			continue
		}
		for _, lp := range m.GetLabel() {
			if v, ok := want[lp.GetName()]; !ok || v != lp.GetValue() {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
	}
	return 0, false
}

func mustValue(t *testing.T, mfs map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	t.Helper()
	v, ok := value(mfs, name, labels...)
	if !ok {
		t.Fatalf("no %s%v in the scrape", name, labels)
	}
	return v
}

func startSim(t *testing.T, opts ...printersim.Option) *printersim.Server {
	t.Helper()
	srv, err := printersim.Start(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func sdkClient(t *testing.T, url string, opts ...labelprinter.Option) *labelprinter.Client {
	t.Helper()
	c, err := labelprinter.NewClient(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func target(srv *printersim.Server) string { return url.QueryEscape(srv.URL) }

// TestProbeCountersMatchSimulator triggers two printers of one controller, with prints and
// bounces, and checks that a scrape parsed with expfmt reports the simulator's own counters.
func TestProbeCountersMatchSimulator(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("line1", "line2"))
	c := sdkClient(t, sim.URL)
	ctx := context.Background()
	if err := c.Labels.Put(ctx, "MEDIUM", []byte(`{"format":3,"width":50,"height":30,"objs":[]}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Printers.PrintJob(ctx, "line1", &labelprinter.PrintJob{LabelName: "MEDIUM", Copies: 3}); err != nil {
		t.Fatal(err)
	}
	for range 5 { // 3 prints, then 2 bounces on line1
		_, _ = c.Printers.Trigger(ctx, "line1")
	}
	_, _ = c.Printers.Trigger(ctx, "line2") // a bounce on line2

	h := newHarness(t, nil)
	mfs, _ := h.probe("target=" + target(sim) + "&printer=line1&printer=line2&printer=line1")
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Fatalf("labelprinter_up = %v, want 1", up)
	}
	for _, p := range []string{"line1", "line2"} {
		want, _ := sim.Sim.Counters(p)
		got := [3]float64{
			mustValue(t, mfs, "labelprinter_triggers_total", "printer", p),
			mustValue(t, mfs, "labelprinter_trigger_bounces_total", "printer", p),
			mustValue(t, mfs, "labelprinter_printed_labels_total", "printer", p),
		}
		if got != [3]float64{float64(want.Triggers), float64(want.TriggerBounces), float64(want.PrintedLabels)} {
			t.Errorf("%s: scrape says %v, simulator %+v", p, got, want)
		}
	}
	if want, _ := sim.Sim.Counters("line1"); want != (printersim.Counters{Triggers: 5, TriggerBounces: 2, PrintedLabels: 3}) {
		t.Fatalf("the test's own setup went wrong: %+v", want)
	}
	if n := len(mfs["labelprinter_triggers_total"].GetMetric()); n != 2 {
		t.Errorf("%d triggers series for two distinct printers", n)
	}
	if got := sim.Sim.Requests("GET", "/api/v3/printers/{name}/printCounters"); got != 2 {
		t.Errorf("printCounters read %d times for two distinct printers", got)
	}
	if mf := mfs["labelprinter_triggers_total"]; mf.GetType() != dto.MetricType_COUNTER {
		t.Errorf("labelprinter_triggers_total is a %v", mf.GetType())
	}
	if _, ok := value(mfs, "labelprinter_probe_duration_seconds"); !ok {
		t.Error("no labelprinter_probe_duration_seconds")
	}

	// The counters grow between scrapes.
	if _, err := c.Printers.PrintJob(ctx, "line2", &labelprinter.PrintJob{LabelName: "MEDIUM"}); err != nil {
		t.Fatal(err)
	}
	_, _ = c.Printers.Trigger(ctx, "line2")
	mfs, _ = h.probe("target=" + target(sim) + "&printer=line2")
	if got := mustValue(t, mfs, "labelprinter_printed_labels_total", "printer", "line2"); got != 1 {
		t.Errorf("line2 printed %v after one more print, want 1", got)
	}
}

// TestProbeSinglePrinterPaths: with no printer parameter the single-printer paths are read and
// the counters carry an empty printer label.
func TestProbeSinglePrinterPaths(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("only"))
	c := sdkClient(t, sim.URL)
	_, _ = c.Printers.Trigger(context.Background(), "only")
	h := newHarness(t, nil)
	mfs, body := h.probe("target=" + target(sim))
	if got := mustValue(t, mfs, "labelprinter_trigger_bounces_total", "printer", ""); got != 1 {
		t.Errorf("bounces = %v, want 1", got)
	}
	if !strings.Contains(body, `labelprinter_triggers_total{printer=""} 1`) {
		t.Errorf("scrape:\n%s", body)
	}
	if got := sim.Sim.Requests("GET", "/api/v3/printCounters"); got != 1 {
		t.Errorf("single-printer counters read %d times", got)
	}
}

// TestProbeLint runs client_golang's linter over a real probe's metrics, successful and failed,
// and over the exporter's own counter.
func TestProbeLint(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("line1", "line2"))
	h := newHarness(t, nil)
	client, err := newSDKClient(h.defaultModule(), sim.URL)
	if err != nil {
		t.Fatal(err)
	}
	ok := h.e.probe(context.Background(), client, []string{"line1", "line2"})
	if !ok.up {
		t.Fatalf("probe failed: %v", ok.errs)
	}
	failed := h.e.probe(context.Background(), client, []string{"nosuchprinter"})
	if failed.up {
		t.Fatal("a probe of an unknown printer succeeded")
	}
	for name, res := range map[string]*probeResult{"success": ok, "failure": failed} {
		problems, err := testutil.CollectAndLint(&probeCollector{descs: &h.e.descs, res: res})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
	}
	problems, err := testutil.CollectAndLint(h.e.probes)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("exporter: %s: %s", p.Metric, p.Text)
	}
}

// TestProbeFailures: a 503 or a dropped connection gives up 0 in a 200 answer, and no counter
// series for the printer whose read failed.
func TestProbeFailures(t *testing.T) {
	const countersRoute, statusRoute = "/api/v3/printers/{name}/printCounters", "/api/v3/status"
	for _, tc := range []struct {
		name  string
		fault printersim.Fault
		// counterReads is what the simulator sees: one read per printer, plus net/http's own
		// replay of a GET whose reused connection was reset before any answer (the fault then
		// needs two resets to fail the read; the replay goes out on a fresh connection, which
		// net/http never replays).
		counterReads int
	}{
		{"503", printersim.Fault{Route: countersRoute, Status: http.StatusServiceUnavailable, Times: 1}, 2},
		{"reset", printersim.Fault{Route: countersRoute, Reset: printersim.ResetBeforeRead, Times: 2}, 3},
		{"truncated", printersim.Fault{Route: countersRoute, Truncate: true, Times: 1}, 2},
		{"status 503", printersim.Fault{Route: statusRoute, Status: http.StatusServiceUnavailable, Times: 1}, 2},
		{"status reset", printersim.Fault{Route: statusRoute, Reset: printersim.ResetBeforeRead, Times: 1}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := startSim(t, printersim.WithPrinters("line1", "line2"))
			f := tc.fault
			f.Method = "GET"
			sim.Sim.InjectFault(f)
			h := newHarness(t, nil)
			mfs, _ := h.probe("target=" + target(sim) + "&printer=line1&printer=line2")
			if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
				t.Errorf("labelprinter_up = %v, want 0", up)
			}
			_, line1 := value(mfs, "labelprinter_triggers_total", "printer", "line1")
			_, state := mfs["labelprinter_state"]
			if f.Route == countersRoute && (line1 || !state) {
				t.Errorf("line1 counters shown %v, status shown %v; want only the status", line1, state)
			}
			if f.Route == statusRoute && (!line1 || state) {
				t.Errorf("line1 counters shown %v, status shown %v; want only the counters", line1, state)
			}
			if _, ok := value(mfs, "labelprinter_triggers_total", "printer", "line2"); !ok {
				t.Error("no counter series for the printer whose read succeeded")
			}
			// No retry by the exporter inside a probe: the next scrape is the retry.
			if got := sim.Sim.Requests("GET", countersRoute); got != tc.counterReads {
				t.Errorf("printCounters requested %d times, want %d", got, tc.counterReads)
			}
			if !strings.Contains(h.logs.String(), "probe failed") {
				t.Errorf("failure not logged at debug: %q", h.logs.String())
			}
			// The next probe, with the printer back, is up again.
			mfs, _ = h.probe("target=" + target(sim) + "&printer=line1")
			if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
				t.Errorf("labelprinter_up = %v after recovery", up)
			}
			_, _, metrics := h.get("/metrics")
			for _, want := range []string{`labelprinter_exporter_probes_total{result="failure"} 1`, `labelprinter_exporter_probes_total{result="success"} 1`} {
				if !strings.Contains(metrics, want) {
					t.Errorf("/metrics lacks %s", want)
				}
			}
		})
	}
}

// TestProbeUnreachable: a printer that refuses connections is up 0 with a 200 answer.
func TestProbeUnreachable(t *testing.T) {
	sim := startSim(t)
	dead := sim.URL
	sim.Close()
	h := newHarness(t, nil)
	mfs, _ := h.probe("target=" + url.QueryEscape(dead))
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("labelprinter_up = %v", up)
	}
}

// TestProbeHangingPrinter: a printer that never answers ends the probe at the scrape timeout
// Prometheus sends. --timeout is ten minutes and the printer would hold its answer for an hour, so
// only the header can end the probe; the watchdog only turns a hang into a failure.
func TestProbeHangingPrinter(t *testing.T) {
	sim := startSim(t)
	sim.Sim.InjectFault(printersim.Fault{Method: "GET", Route: "/api/v3/printCounters", Delay: time.Hour})
	h := newHarness(t, func(c *config) { c.timeout = maxTimeout })
	type answer struct {
		mfs map[string]*dto.MetricFamily
	}
	done := make(chan answer, 1)
	go func() {
		mfs, _ := h.probe("target="+target(sim), "X-Prometheus-Scrape-Timeout-Seconds", "0.5")
		done <- answer{mfs}
	}()
	select {
	case a := <-done:
		if up := mustValue(t, a.mfs, "labelprinter_up"); up != 0 {
			t.Errorf("labelprinter_up = %v", up)
		}
		d := mustValue(t, a.mfs, "labelprinter_probe_duration_seconds")
		if d <= 0 {
			t.Errorf("probe duration %v", d)
		}
	case <-time.After(time.Minute):
		t.Fatal("the probe did not end at the scrape timeout")
	}
}

func TestProbeTimeout(t *testing.T) {
	for _, tc := range []struct {
		header string
		offset time.Duration
		want   time.Duration
		bad    bool
	}{
		{"", defaultTimeoutOffset, 7 * time.Second, false},
		{"10", defaultTimeoutOffset, 9500 * time.Millisecond, false},
		{"2", defaultTimeoutOffset, 1500 * time.Millisecond, false},
		{"1", defaultTimeoutOffset, 500 * time.Millisecond, false},
		{"0.5", defaultTimeoutOffset, minBudget, false},
		{"0.55", defaultTimeoutOffset, minBudget, false},
		{"0.7", defaultTimeoutOffset, 200 * time.Millisecond, false},
		{"3.25", time.Second, 2250 * time.Millisecond, false},
		{"2", 0, 2 * time.Second, false},
		{"1e-12", defaultTimeoutOffset, minBudget, false},
		{"1e9", defaultTimeoutOffset, maxTimeout, false},
		{"0", defaultTimeoutOffset, 0, true},
		{"-1", defaultTimeoutOffset, 0, true},
		{"NaN", defaultTimeoutOffset, 0, true},
		{"soon", defaultTimeoutOffset, 0, true},
	} {
		h := http.Header{}
		if tc.header != "" {
			h.Set("X-Prometheus-Scrape-Timeout-Seconds", tc.header)
		}
		got, from, err := probeTimeout(h, 7*time.Second, tc.offset)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("header %q offset %v: %v, %v; want %v (error %v)", tc.header, tc.offset, got, err, tc.want, tc.bad)
		}
		if err == nil && from == "" {
			t.Errorf("header %q: no word on where the budget came from", tc.header)
		}
	}
	// Inf is capped, not an error: Prometheus would never send it, but it is a valid float.
	h := http.Header{"X-Prometheus-Scrape-Timeout-Seconds": {"+Inf"}}
	if got, _, err := probeTimeout(h, time.Second, defaultTimeoutOffset); err != nil || got != maxTimeout {
		t.Errorf("+Inf: %v, %v", got, err)
	}
}

// TestProbeForbidden: a target outside --allow-targets gets 403, and the printer sees nothing.
func TestProbeForbidden(t *testing.T) {
	sim := startSim(t)
	host := strings.TrimPrefix(sim.URL, "http://")
	_, port, _ := strings.Cut(host, ":")
	h := newHarness(t, func(c *config) {
		c.modules = defaultOnly(newModuleConfig("10.0.0.0/8", "printer.plant.test"))
		c.resolver = fakeResolver{"localhost": {"127.0.0.1"}}
	})
	for _, tgt := range []string{sim.URL, "http://localhost:" + port, host, "http://[::ffff:127.0.0.1]:" + port} {
		code, _, body := h.get("/probe?target=" + url.QueryEscape(tgt))
		if code != http.StatusForbidden {
			t.Errorf("%s: %d %s", tgt, code, body)
		}
	}
	if n := sim.Sim.TotalRequests(); n != 0 {
		t.Errorf("the simulator saw %d requests", n)
	}
	_, _, metrics := h.get("/metrics")
	if !strings.Contains(metrics, `labelprinter_exporter_probes_total{result="forbidden"} 4`) {
		t.Errorf("forbidden probes not counted:\n%s", metrics)
	}
}

// TestDefaultAllowList: the secure default lets loopback and private networks through and
// refuses the rest, including names that resolve to a public address even once.
func TestDefaultAllowList(t *testing.T) {
	r := fakeResolver{
		"localhost":        {"127.0.0.1", "::1"},
		"printer.lan":      {"192.168.10.20"},
		"ula.lan":          {"fd12:3456::1"},
		"mixed.example":    {"10.0.0.5", "203.0.113.7"},
		"public.example":   {"203.0.113.7"},
		"metadata.example": {"169.254.169.254"},
	}
	a, err := parseAllowList(defaultAllowTargets, r)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for host, want := range map[string]bool{
		"127.0.0.1": true, "10.1.2.3": true, "172.16.0.1": true, "172.31.255.255": true, "192.168.1.50": true,
		"::1": true, "fd00::1": true, "::ffff:10.0.0.1": true, "localhost": true, "printer.lan": true, "ula.lan": true,
		"172.32.0.1": false, "8.8.8.8": false, "169.254.169.254": false, "0.0.0.0": false, "::": false,
		"fe80::1%eth0": false, "2001:db8::1": false, "mixed.example": false, "public.example": false,
		"metadata.example": false, "unknown.example": false, "bad name": false,
	} {
		err := a.check(ctx, host)
		if got := err == nil; got != want {
			t.Errorf("%s: allowed %v, want %v (%v)", host, got, want, err)
		}
		if err != nil && !errors.Is(err, errNotAllowed) {
			t.Errorf("%s: error %v does not wrap errNotAllowed", host, err)
		}
	}
}

func TestParseAllowList(t *testing.T) {
	a, err := parseAllowList([]string{" 10.1.0.0/16", "192.168.1.7", "::1", "Printer.Plant.Example.", ""}, fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]bool{
		"10.1.200.3": true, "10.2.0.1": false, "192.168.1.7": true, "192.168.1.8": false, "::1": true,
		"printer.plant.example": true, "PRINTER.plant.example.": true, "other.plant.example": false,
	} {
		if got := a.check(context.Background(), host) == nil; got != want {
			t.Errorf("%s: allowed %v, want %v", host, got, want)
		}
	}
	for _, bad := range [][]string{{"10.0.0.0/33"}, {"fe80::1%eth0"}, {"not a host"}, {""}, {"a..b"}} {
		if _, err := parseAllowList(bad, fakeResolver{}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestDialEnforcesAllowList: a module's client refuses to connect outside its allow list even
// when the name passed the check before (DNS rebinding), and connects to a host listed by name.
func TestDialEnforcesAllowList(t *testing.T) {
	sim := startSim(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(sim.URL, "http://"), ":")
	m, err := buildModule("plant", newModuleConfig("10.0.0.0/8", "localhost"), fakeResolver{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.closeIdle()
	get := func(u string) error {
		resp, err := m.hc.Get(u)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := get("http://127.0.0.1:" + port + "/api/v3/status"); !errors.Is(err, errNotAllowed) {
		t.Errorf("dial to 127.0.0.1 outside the list: %v", err)
	}
	if n := sim.Sim.TotalRequests(); n != 0 {
		t.Errorf("the simulator saw %d requests", n)
	}
	if err := get("http://localhost:" + port + "/api/v3/status"); err != nil {
		t.Errorf("dial to a host listed by name: %v", err)
	}
	if err := m.allow.dialControl("tcp", "203.0.113.1:80", nil); !errors.Is(err, errNotAllowed) {
		t.Errorf("dialControl let a public address through: %v", err)
	}
	if err := m.allow.dialControl("tcp", "10.9.8.7:80", nil); err != nil {
		t.Errorf("dialControl refused a listed address: %v", err)
	}
}

// fakeResolver answers host names from a map, and fails for the rest.
type fakeResolver map[string][]string

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	addrs, ok := f[host]
	if !ok {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

// TestProbeBadRequests: what cannot be probed gets 400 and sends nothing.
func TestProbeBadRequests(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	tg := target(sim)
	long := strings.Repeat("p", maxNameLen+1)
	many := strings.Repeat("&printer=p", 0)
	for i := range maxPrinters + 1 {
		many += fmt.Sprintf("&printer=p%d", i)
	}
	for _, q := range []string{
		"", "target=", "target=" + tg + "&target=" + tg, "target=ftp%3A%2F%2F127.0.0.1",
		"target=" + url.QueryEscape("http://user:pw@127.0.0.1"), "target=http%3A%2F%2F",
		"target=" + tg + "&printer=..", "target=" + tg + "&printer=a%0Ab",
		"target=" + tg + "&printer=%FF", "target=" + tg + "&printer=" + long, "target=" + tg + many,
		"target=" + url.QueryEscape(sim.URL+"/?x=1"),
	} {
		code, _, body := h.get("/probe?" + q)
		if code != http.StatusBadRequest {
			t.Errorf("%q: %d %s", q, code, body)
		}
	}
	code, _, _ := h.get("/probe?target="+tg, "X-Prometheus-Scrape-Timeout-Seconds", "never")
	if code != http.StatusBadRequest {
		t.Errorf("bad scrape timeout header: %d", code)
	}
	if n := sim.Sim.TotalRequests(); n != 0 {
		t.Errorf("the simulator saw %d requests", n)
	}
	resp, err := h.hc.Post(h.url+"/probe?target="+tg, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /probe: %d", resp.StatusCode)
	}
	if code, _, _ := h.get("/nothing"); code != http.StatusNotFound {
		t.Errorf("/nothing: %d", code)
	}
}

// TestProbeTargetWithoutScheme: a bare host:port is probed over http, and an empty printer (the
// index page's form left blank) reads the single-printer paths.
func TestProbeTargetWithoutScheme(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	mfs, _ := h.probe("target=" + url.QueryEscape(strings.TrimPrefix(sim.URL, "http://")) + "&printer=")
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Errorf("labelprinter_up = %v", up)
	}
	if _, ok := value(mfs, "labelprinter_triggers_total", "printer", ""); !ok {
		t.Error("no single-printer counters")
	}
	if got := sim.Sim.Requests("GET", "/api/v3/printCounters"); got != 1 {
		t.Errorf("single-printer counters read %d times", got)
	}
}

// TestProbeOpenMetrics: the probe answers OpenMetrics when Prometheus asks for it.
func TestProbeOpenMetrics(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	code, hdr, body := h.get("/probe?target="+target(sim), "Accept", "application/openmetrics-text;version=1.0.0")
	if code != http.StatusOK || !strings.HasPrefix(hdr.Get("Content-Type"), "application/openmetrics-text") {
		t.Fatalf("%d %s", code, hdr.Get("Content-Type"))
	}
	if !strings.HasSuffix(body, "# EOF\n") || !strings.Contains(body, "labelprinter_triggers_total{printer=\"\"} 0") {
		t.Errorf("not OpenMetrics:\n%s", body)
	}
}

// TestTokenNeverShown: the bearer token reaches the printer and appears in no answer and no log
// line, whatever happens.
func TestTokenNeverShown(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a-never-shown"
	sim := startSim(t, printersim.WithToken(token), printersim.WithPrinters("line1"))
	m := newModuleConfig("127.0.0.0/8")
	m.HTTPClientConfig.Authorization = &promconfig.Authorization{Type: "Bearer", Credentials: token}
	h := newHarness(t, func(c *config) { c.modules = defaultOnly(m) })
	var answers []string
	mfs, body := h.probe("target=" + target(sim) + "&printer=line1")
	if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
		t.Fatalf("the token did not reach the printer: up %v", up)
	}
	answers = append(answers, body)
	sim.Sim.InjectFault(printersim.Fault{Method: "GET", Route: "/api/v3/printers/{name}/printCounters", Status: 500, Times: 1})
	_, body = h.probe("target=" + target(sim) + "&printer=line1")
	answers = append(answers, body)
	_, body = h.probe("target=" + target(sim) + "&printer=nosuch")
	answers = append(answers, body)
	for _, p := range []string{"/probe?target=" + target(sim) + "&printer=..", "/probe?target=http%3A%2F%2F8.8.8.8", "/metrics", "/"} {
		_, hdr, body := h.get(p)
		answers = append(answers, body, fmt.Sprint(hdr))
	}
	answers = append(answers, h.logs.String())
	for i, a := range answers {
		if strings.Contains(a, token) {
			t.Errorf("answer %d shows the token:\n%s", i, a)
		}
	}
	if !strings.Contains(h.logs.String(), "probe failed") {
		t.Error("the failed probes were not logged, so the log check proves nothing")
	}

	// Without the token the printer refuses, and the probe says so.
	h2 := newHarness(t, nil)
	mfs, _ = h2.probe("target=" + target(sim) + "&printer=line1")
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("up %v without the token", up)
	}
}

// TestCacheCap: 2,000 distinct targets leave at most the cap in the cache, the most recently
// probed ones.
func TestCacheCap(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	const n = 2000
	for i := range n {
		// Distinct base paths of one simulator: each is a target of its own (and answers 404).
		req := httptest.NewRequest("GET", "/probe?target="+url.QueryEscape(fmt.Sprintf("%s/t%d", sim.URL, i)), nil)
		rec := httptest.NewRecorder()
		h.e.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("probe %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	if got := h.targets().len(); got > defaultCacheSize || got == 0 {
		t.Fatalf("%d clients cached after %d targets, cap %d", got, n, defaultCacheSize)
	}
	if !h.targets().contains(h.defaultModule(), fmt.Sprintf("%s/t%d", sim.URL, n-1)) {
		t.Error("the most recent target was evicted")
	}
	if h.targets().contains(h.defaultModule(), sim.URL+"/t0") {
		t.Error("the least recent target is still cached")
	}
	if got := sim.Sim.TotalRequests(); got != 2*n {
		t.Errorf("the simulator saw %d requests for %d probes of status and counters", got, n)
	}
}

// TestConnectionReused: probes of one target, one after the other, share one connection, and
// the target is cached once.
func TestConnectionReused(t *testing.T) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(printersim.New())
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	h := newHarness(t, nil)
	for range 3 {
		if mfs, _ := h.probe("target=" + url.QueryEscape(srv.URL)); mustValue(t, mfs, "labelprinter_up") != 1 {
			t.Fatal("probe failed")
		}
	}
	if got := h.targets().len(); got != 1 {
		t.Errorf("%d targets cached for one", got)
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d connections for 3 probes of one target", got)
	}
}

func TestIndexPage(t *testing.T) {
	h := newHarness(t, nil)
	code, hdr, body := h.get("/")
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
		t.Fatalf("%d %s", code, hdr.Get("Content-Type"))
	}
	for _, want := range []string{`<form action="probe"`, `name="target"`, `name="printer"`, `href="metrics"`, "10.0.0.0/8"} {
		if !strings.Contains(body, want) {
			t.Errorf("index lacks %s", want)
		}
	}
	_, _, metrics := h.get("/metrics")
	for _, want := range []string{"go_goroutines", `labelprinter_exporter_probes_total{result="invalid"} 0`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func TestNewExporterRefusesBadConfig(t *testing.T) {
	for _, cfg := range []config{
		{timeout: 0, cacheSize: 1, modules: defaultOnly(newModuleConfig())},
		{timeout: time.Second, cacheSize: 0, modules: defaultOnly(newModuleConfig())},
		{timeout: 2 * maxTimeout, cacheSize: 1, modules: defaultOnly(newModuleConfig())},
		{timeout: time.Second, cacheSize: 1},
		{timeout: time.Second, timeoutOffset: -time.Second, cacheSize: 1, modules: defaultOnly(newModuleConfig())},
		{timeout: time.Second, cacheSize: 1, modules: defaultOnly(newModuleConfig("10.0.0.0/99"))},
		{timeout: time.Second, cacheSize: 1, modules: func() (map[string]*moduleConfig, error) { return nil, errors.New("unreadable") }},
	} {
		if _, err := newExporter(cfg); err == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

// TestProbeStatusStates: each state the simulator is set to shows up as the one
// labelprinter_state series at 1, with the other known states at 0, and printable, RAG and
// error count follow.
func TestProbeStatusStates(t *testing.T) {
	sim := startSim(t)
	h := newHarness(t, nil)
	for _, tc := range []struct {
		state     string
		rag       string
		errs      []string
		printable float64
	}{
		{"INITIALIZING", "AMBER", nil, 0},
		{"STOPPED", "AMBER", nil, 0},
		{"STANDBY", "GREEN", nil, 0},
		{"STARTING", "AMBER", nil, 0},
		{"HEATING", "AMBER", nil, 1},
		{"STARTED", "GREEN", nil, 1},
		{"MAINTENANCE", "AMBER", []string{"operator mode"}, 0},
		{"STOPPING", "AMBER", nil, 0},
		{"ERROR", "RED", []string{"lid open", "ink pressure low", "head fault"}, 0},
		{"OTHER", "AMBER", []string{"ink 2 stopped"}, 0},
		{"FIRMWARE_UPDATE", "RED", nil, 0},
	} {
		sim.Sim.SetStatus(tc.state, tc.rag, tc.errs...)
		mfs, body := h.probe("target=" + target(sim))
		if up := mustValue(t, mfs, "labelprinter_up"); up != 1 {
			t.Fatalf("%s: up %v", tc.state, up)
		}
		ones := 0
		for _, m := range mfs["labelprinter_state"].GetMetric() {
			if m.GetGauge().GetValue() == 1 {
				ones++
			}
		}
		if ones != 1 || mustValue(t, mfs, "labelprinter_state", "state", tc.state) != 1 {
			t.Errorf("%s: %d states at 1:\n%s", tc.state, ones, body)
		}
		wantSeries := len(knownStates)
		if !slices.Contains(knownStates, labelprinter.PrinterState(tc.state)) {
			wantSeries++
		}
		if n := len(mfs["labelprinter_state"].GetMetric()); n != wantSeries {
			t.Errorf("%s: %d state series, want %d", tc.state, n, wantSeries)
		}
		if got := mustValue(t, mfs, "labelprinter_printable"); got != tc.printable {
			t.Errorf("%s: printable %v", tc.state, got)
		}
		for _, c := range []string{"RED", "AMBER", "GREEN"} {
			want := 0.0
			if c == tc.rag {
				want = 1
			}
			if got := mustValue(t, mfs, "labelprinter_rag_status", "color", c); got != want {
				t.Errorf("%s: rag %s = %v", tc.state, c, got)
			}
		}
		if got := mustValue(t, mfs, "labelprinter_errors"); got != float64(len(tc.errs)) {
			t.Errorf("%s: errors %v, want %d", tc.state, got, len(tc.errs))
		}
	}
	if got := sim.Sim.Requests("GET", "/api/v3/status"); got != 11 {
		t.Errorf("/status read %d times in 11 probes", got)
	}
}

// TestProbeStatusOncePerTarget: several printers of one controller, one /status read.
func TestProbeStatusOncePerTarget(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("a", "b", "c"))
	h := newHarness(t, nil)
	mfs, _ := h.probe("target=" + target(sim) + "&printer=a&printer=b&printer=c")
	if got := sim.Sim.Requests("GET", "/api/v3/status"); got != 1 {
		t.Errorf("/status read %d times", got)
	}
	if n := len(mfs["labelprinter_printable"].GetMetric()); n != 1 {
		t.Errorf("%d printable series", n)
	}
	for _, m := range mfs["labelprinter_state"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "printer" {
				t.Error("a status metric carries a printer label")
			}
		}
	}
}

// TestProbeInkLevels: each ink system gets one series per level, 1 for its own, and hostile
// values (a hundred inks, a state that is not UTF-8) neither break the answer nor blow it up.
func TestProbeInkLevels(t *testing.T) {
	sim := startSim(t)
	status := `{"state":"STARTED","ragStatus":"AMBER","errors":[],"ink":[` +
		`{"state":"STARTED","ragStatus":"GREEN","level":"OK","errors":[],"warnings":[]},` +
		`{"state":"STARTED","ragStatus":"AMBER","level":"LOW","errors":[],"warnings":["low"]},` +
		`{"state":"STOPPED","ragStatus":"RED","level":"EMPTY","errors":["empty"],"warnings":[]}]}`
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v3/status" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, status)
			return
		}
		sim.Sim.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	h := newHarness(t, nil)
	mfs, body := h.probe("target=" + url.QueryEscape(front.URL))
	for ink, level := range []string{"OK", "LOW", "EMPTY"} {
		for _, l := range []string{"EMPTY", "LOW", "OK"} {
			want := 0.0
			if l == level {
				want = 1
			}
			if got := mustValue(t, mfs, "labelprinter_ink_level", "ink", strconv.Itoa(ink), "level", l); got != want {
				t.Errorf("ink %d level %s = %v\n%s", ink, l, got, body)
			}
		}
	}
	if n := len(mfs["labelprinter_ink_level"].GetMetric()); n != 9 {
		t.Errorf("%d ink series for 3 inks", n)
	}

	inks := strings.Repeat(`{"state":"STARTED","ragStatus":"GREEN","level":"OK","errors":[],"warnings":[]},`, 100)
	status = `{"state":"` + strings.Repeat("\xff", 100) + `","ragStatus":"GREEN","errors":[],"ink":[` + strings.TrimSuffix(inks, ",") + `]}`
	mfs, _ = h.probe("target=" + url.QueryEscape(front.URL))
	if n := len(mfs["labelprinter_ink_level"].GetMetric()); n != maxInks*3 {
		t.Errorf("%d ink series for 100 inks, want %d", n, maxInks*3)
	}
	if n := len(mfs["labelprinter_state"].GetMetric()); n != len(knownStates)+1 {
		t.Errorf("%d state series for an unknown state", n)
	}
	res := &probeResult{up: true, status: &labelprinter.PrinterStatus{State: labelprinter.PrinterState(strings.Repeat("é", 40) + "\xff"),
		Ink: []labelprinter.InkStatus{{Level: "OK"}, {Level: "HALF"}}}}
	problems, err := testutil.CollectAndLint(&probeCollector{descs: &h.e.descs, res: res})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if got := labelValue(strings.Repeat("é", 40), maxStateLen); len(got) > maxStateLen || !utf8.ValidString(got) {
		t.Errorf("labelValue gave %q", got)
	}
}

// TestProbeStatusFailure: a failed /status read is up 0 with the counters still shown, and no
// status series (a stale or made-up state would mislead the dashboard).
func TestProbeStatusFailure(t *testing.T) {
	sim := startSim(t, printersim.WithPrinters("line1"))
	sim.Sim.InjectFault(printersim.Fault{Method: "GET", Route: "/api/v3/status", Status: 503, Times: 1})
	h := newHarness(t, nil)
	mfs, _ := h.probe("target=" + target(sim) + "&printer=line1")
	if up := mustValue(t, mfs, "labelprinter_up"); up != 0 {
		t.Errorf("up %v", up)
	}
	for _, name := range []string{"labelprinter_state", "labelprinter_printable", "labelprinter_rag_status", "labelprinter_errors", "labelprinter_ink_level"} {
		if _, ok := mfs[name]; ok {
			t.Errorf("%s present after a failed status read", name)
		}
	}
	if _, ok := value(mfs, "labelprinter_triggers_total", "printer", "line1"); !ok {
		t.Error("counters missing when only the status failed")
	}
}
