package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/httpcreds"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	promconfig "github.com/prometheus/common/config"
)

// The benchmarks compare the exporter ("impl=exporter") with the probe an integrator would write
// by hand ("impl=raw": net/http, encoding/json and client_golang, on a transport with the same
// settings), probing 1,000 simulated printers, each its own simulator on loopback, 64 probes
// at a time. The simulators run in a child process (this test binary started again), so the
// memory measured is the exporter's alone. scripts/bench-exporter runs them.

const (
	simFarmEnv     = "LABELPRINTER_EXPORTER_SIMFARM"
	benchPrinters  = 1000
	benchInFlight  = 64
	benchScrapeHdr = "10"
)

// runSimFarm serves n simulators, each with one printer "line1" that has printed a few labels,
// prints their URLs, one a line, then "ready", and serves until in reaches EOF. Each serves its
// API under any path prefix as well, so a base URL padded to the longest target the exporter
// accepts (longTarget) reaches it.
func runSimFarm(n string, in io.Reader, out io.Writer) int {
	count, err := strconv.Atoi(n)
	if err != nil || count <= 0 {
		fmt.Fprintln(os.Stderr, "simfarm: bad count", n)
		return 2
	}
	var srvs []*printersim.Server
	defer func() {
		for _, s := range srvs {
			s.Close()
		}
	}()
	w := bufio.NewWriter(out)
	for range count {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, "simfarm:", err)
			return 1
		}
		s := printersim.Serve(ln, printersim.New(printersim.WithPrinters("line1")), stripPrefix)
		srvs = append(srvs, s)
		// A bounce, so the counters are not all zero.
		resp, err := http.Post(s.URL+"/api/v3/printers/line1/trigger", "", nil)
		if err == nil {
			resp.Body.Close()
		}
		fmt.Fprintln(w, s.URL)
	}
	http.DefaultClient.CloseIdleConnections()
	fmt.Fprintln(w, "ready")
	if err := w.Flush(); err != nil {
		return 1
	}
	_, _ = io.Copy(io.Discard, in)
	return 0
}

// stripPrefix serves /<anything>/api/v3/... as /api/v3/....
func stripPrefix(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if i := strings.Index(r.URL.Path, "/api/v3/"); i > 0 {
			r.URL.Path, r.URL.RawPath = r.URL.Path[i:], ""
		}
		h.ServeHTTP(w, r)
	})
}

// longTarget pads base with a path to maxTargetLen bytes, the longest target a probe may name.
func longTarget(base string) string {
	return base + "/" + strings.Repeat("p", maxTargetLen-len(base)-1)
}

// The farm is started by the first benchmark that needs it and stopped by TestMain after every
// benchmark ran: a benchmark function runs more than once (b.N = 1 first), so a cleanup tied to
// one run would stop the farm under the next.
var (
	farmOnce sync.Once
	farmURLs []string
	farmErr  error
	farmStop = func() {}
)

// startSimFarm starts the simulators in a child process and returns their URLs.
func startSimFarm(n int) ([]string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), simFarmEnv+"="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	stop := func() {
		stdin.Close()
		_ = cmd.Wait()
	}
	var urls []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if sc.Text() == "ready" {
			return urls, stop, nil
		}
		urls = append(urls, sc.Text())
	}
	stop()
	return nil, nil, fmt.Errorf("simulator farm ended after %d URLs: %v", len(urls), sc.Err())
}

func benchFarm(b *testing.B) []string {
	farmOnce.Do(func() {
		var stop func()
		farmURLs, stop, farmErr = startSimFarm(benchPrinters)
		if farmErr == nil {
			farmStop = stop
		}
	})
	if farmErr != nil {
		b.Fatal(farmErr)
	}
	return farmURLs
}

// rawProbe is the probe an integrator would write by hand: the same reads, the same metrics, a
// fresh registry per probe, and one shared http.Client on a transport with the exporter's
// settings.
type rawProbe struct {
	hc *http.Client
}

func newRawProbe() *rawProbe {
	t := labelprinter.DefaultTransport()
	t.Proxy = nil
	t.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.MaxIdleConns = defaultCacheSize
	t.MaxIdleConnsPerHost = 4
	return &rawProbe{hc: &http.Client{Transport: t}}
}

func (p *rawProbe) getJSON(ctx context.Context, u string, v any) error {
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

func (p *rawProbe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	q := r.URL.Query()
	target, printer := q.Get("target"), q.Get("printer")
	timeout := 10 * time.Second
	if s, err := strconv.ParseFloat(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64); err == nil {
		timeout = time.Duration(s*float64(time.Second)) - 500*time.Millisecond
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()

	reg := prometheus.NewRegistry()
	up := prometheus.NewGauge(prometheus.GaugeOpts{Name: "labelprinter_up", Help: "1 when every read succeeded."})
	dur := prometheus.NewGauge(prometheus.GaugeOpts{Name: "labelprinter_probe_duration_seconds", Help: "Probe duration."})
	triggers := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "labelprinter_triggers_total", Help: "Triggers."}, []string{"printer"})
	bounces := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "labelprinter_trigger_bounces_total", Help: "Bounces."}, []string{"printer"})
	labels := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "labelprinter_printed_labels_total", Help: "Labels."}, []string{"printer"})
	state := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "labelprinter_state", Help: "State."}, []string{"state"})
	printable := prometheus.NewGauge(prometheus.GaugeOpts{Name: "labelprinter_printable", Help: "Printable."})
	rag := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "labelprinter_rag_status", Help: "RAG."}, []string{"color"})
	nerrs := prometheus.NewGauge(prometheus.GaugeOpts{Name: "labelprinter_errors", Help: "Errors."})
	ink := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "labelprinter_ink_level", Help: "Ink level."}, []string{"ink", "level"})
	reg.MustRegister(up, dur, triggers, bounces, labels)

	ok := true
	var st struct {
		State     string   `json:"state"`
		RAGStatus string   `json:"ragStatus"`
		Errors    []string `json:"errors"`
		Ink       []struct {
			Level string `json:"level"`
		} `json:"ink"`
	}
	if err := p.getJSON(ctx, target+"/api/v3/status", &st); err != nil {
		ok = false
	} else {
		reg.MustRegister(state, printable, rag, nerrs, ink)
		for _, s := range []string{"INITIALIZING", "STOPPED", "STANDBY", "STARTING", "HEATING", "STARTED", "MAINTENANCE", "STOPPING", "ERROR", "OTHER"} {
			state.WithLabelValues(s).Set(b2f(st.State == s))
		}
		printable.Set(b2f(st.State == "HEATING" || st.State == "STARTED"))
		for _, c := range []string{"RED", "AMBER", "GREEN"} {
			rag.WithLabelValues(c).Set(b2f(st.RAGStatus == c))
		}
		nerrs.Set(float64(len(st.Errors)))
		for i, in := range st.Ink {
			for _, l := range []string{"EMPTY", "LOW", "OK"} {
				ink.WithLabelValues(strconv.Itoa(i), l).Set(b2f(in.Level == l))
			}
		}
	}
	var c struct {
		Triggers       int64 `json:"triggers"`
		TriggerBounces int64 `json:"triggerBounces"`
		PrintedLabels  int64 `json:"printedLabels"`
	}
	if err := p.getJSON(ctx, target+"/api/v3/printers/"+url.PathEscape(printer)+"/printCounters", &c); err != nil {
		ok = false
	} else {
		triggers.WithLabelValues(printer).Add(float64(c.Triggers))
		bounces.WithLabelValues(printer).Add(float64(c.TriggerBounces))
		labels.WithLabelValues(printer).Add(float64(c.PrintedLabels))
	}
	if ok {
		up.Set(1)
	}
	dur.Set(time.Since(start).Seconds())
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// discardWriter is the cheapest ResponseWriter that still lets the benchmark check the answer.
type discardWriter struct {
	h    http.Header
	code int
}

func (d *discardWriter) Header() http.Header { return d.h }
func (d *discardWriter) WriteHeader(c int)   { d.code = c }
func (d *discardWriter) Write(b []byte) (int, error) {
	if d.code == 0 {
		d.code = 200
	}
	return len(b), nil
}

// prometheusAccept is the Accept header Prometheus 3 sends with a scrape.
const prometheusAccept = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"

func scrapeRequest(target string) *http.Request {
	r, _ := http.NewRequest("GET", "/probe?target="+url.QueryEscape(target)+"&printer=line1", nil)
	r.Header.Set("Accept", prometheusAccept)
	r.Header.Set("Accept-Encoding", "gzip")
	r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", benchScrapeHdr)
	return r
}

// probeAll probes every target once, benchInFlight at a time, and fails on any answer but 200.
func probeAll(b *testing.B, h http.Handler, targets []string) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchInFlight {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(targets)) {
					return
				}
				w := &discardWriter{h: http.Header{}}
				h.ServeHTTP(w, scrapeRequest(targets[i]))
				if w.code != http.StatusOK {
					b.Errorf("%s: %d", targets[i], w.code)
				}
			}
		})
	}
	wg.Wait()
}

// checkUp makes sure a handler's probes succeed, so a fast failure is never timed as a probe.
func checkUp(b *testing.B, h http.Handler, target string) {
	rec := &recorder{discardWriter: discardWriter{h: http.Header{}}}
	r := scrapeRequest(target)
	r.Header.Del("Accept-Encoding")
	h.ServeHTTP(rec, r)
	if !strings.Contains(rec.body.String(), "labelprinter_up 1") ||
		!strings.Contains(rec.body.String(), `labelprinter_state{state="STARTED"} 1`) ||
		!strings.Contains(rec.body.String(), `labelprinter_ink_level{ink="0",level="OK"} 1`) ||
		!strings.Contains(rec.body.String(), `labelprinter_trigger_bounces_total{printer="line1"} 1`) {
		b.Fatalf("probe of %s failed:\n%s", target, rec.body.String())
	}
}

type recorder struct {
	discardWriter
	body strings.Builder
}

func (r *recorder) Write(b []byte) (int, error) { r.body.Write(b); return len(b), nil }

func benchExporter(b *testing.B) *exporter {
	e, err := newExporter(config{timeout: defaultTimeout, timeoutOffset: defaultTimeoutOffset, cacheSize: defaultCacheSize,
		modules: defaultOnly(newModuleConfig())})
	if err != nil {
		b.Fatal(err)
	}
	return e
}

// runPair runs the exporter and the hand-written probe as two sub-benchmarks, the exporter
// first unless LABELPRINTER_BENCH_ORDER is "raw-first": on 2 cores the side that runs second
// is measurably slower, so scripts/bench-exporter alternates the order between repetitions.
func runPair(b *testing.B, exp, raw func(b *testing.B)) {
	if os.Getenv("LABELPRINTER_BENCH_ORDER") == "raw-first" {
		b.Run("impl=raw", raw)
		b.Run("impl=exporter", exp)
		return
	}
	b.Run("impl=exporter", exp)
	b.Run("impl=raw", raw)
}

// BenchmarkProbe measures the time per probe of 1,000 printers probed 64 at a time, as
// Prometheus would scrape them; every target is probed once before the clock starts, so the
// connections are warm on both sides.
func BenchmarkProbe(b *testing.B) {
	targets := benchFarm(b)
	bench := func(newHandler func() (http.Handler, func())) func(b *testing.B) {
		return func(b *testing.B) {
			h, closeFn := newHandler()
			defer closeFn()
			checkUp(b, h, targets[0])
			probeAll(b, h, targets)
			b.ReportAllocs()
			b.SetParallelism((benchInFlight + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			var next atomic.Int64
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1) % int64(len(targets))
					w := &discardWriter{h: http.Header{}}
					h.ServeHTTP(w, scrapeRequest(targets[i]))
					if w.code != http.StatusOK {
						b.Errorf("%s: %d", targets[i], w.code)
						return
					}
				}
			})
		}
	}
	runPair(b,
		bench(func() (http.Handler, func()) { e := benchExporter(b); return e, e.Close }),
		bench(func() (http.Handler, func()) {
			p := newRawProbe()
			return p, p.hc.CloseIdleConnections
		}))
}

// BenchmarkProbeInterleaved is BenchmarkProbe with both sides in one run: each round probes
// a batch of targets 64 at a time with the exporter and the same batch with the hand-written
// probe, the side that goes first alternating. On a machine shared with other work, load
// changes from one second to the next; interleaving lets both sides meet the same load, so the
// ratio it reports holds where two separate runs would each catch a different moment.
func BenchmarkProbeInterleaved(b *testing.B) {
	targets := benchFarm(b)
	e := benchExporter(b)
	defer e.Close()
	raw := newRawProbe()
	defer raw.hc.CloseIdleConnections()
	for _, h := range []http.Handler{e, raw} {
		checkUp(b, h, targets[0])
		probeAll(b, h, targets)
	}
	const batch = 500
	var times [2]time.Duration // exporter, raw
	next := 0
	b.ResetTimer()
	for i := range b.N {
		batchTargets := make([]string, batch)
		for j := range batchTargets {
			batchTargets[j] = targets[(next+j)%len(targets)]
		}
		next += batch
		sides := []int{0, 1}
		if i%2 == 1 {
			sides = []int{1, 0}
		}
		for _, side := range sides {
			h := http.Handler(e)
			if side == 1 {
				h = raw
			}
			start := time.Now()
			probeAll(b, h, batchTargets)
			times[side] += time.Since(start)
		}
	}
	probes := float64(b.N * batch)
	b.ReportMetric(float64(times[0].Nanoseconds())/probes, "exporter-ns/probe")
	b.ReportMetric(float64(times[1].Nanoseconds())/probes, "raw-ns/probe")
	b.ReportMetric(float64(times[0])/float64(times[1]), "exporter/raw")
	b.ReportMetric(0, "ns/op")
}

// heldBytes is the memory the process holds after a full collection: live heap objects and
// goroutine stacks (an idle keep-alive connection is mostly its two goroutines and buffers).
func heldBytes() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// BenchmarkHeldPerTarget measures the memory held per cached target: the exporter's Client,
// its cache entry and its idle connection, after every one of 1,000 targets was probed once,
// beside the hand-written probe's idle connection per target. Every target is as long as a
// probe may name (maxTargetLen bytes), so the figure is the most a target can hold.
func BenchmarkHeldPerTarget(b *testing.B) {
	var targets []string
	for _, u := range benchFarm(b) {
		targets = append(targets, longTarget(u))
	}
	bench := func(newHandler func() (http.Handler, func())) func(b *testing.B) {
		return func(b *testing.B) {
			var total float64
			for range b.N {
				before := heldBytes()
				h, closeFn := newHandler()
				probeAll(b, h, targets)
				after := heldBytes()
				total += (float64(after) - float64(before)) / float64(len(targets))
				runtime.KeepAlive(h)
				closeFn()
			}
			b.ReportMetric(total/float64(b.N), "B/target")
			b.ReportMetric(0, "ns/op")
		}
	}
	runPair(b,
		bench(func() (http.Handler, func()) { e := benchExporter(b); return e, e.Close }),
		bench(func() (http.Handler, func()) {
			p := newRawProbe()
			return p, p.hc.CloseIdleConnections
		}))
}

// BenchmarkNewSDKClient: what building a probe's Client costs, without credentials and with a
// bearer credentials_file (read on every probe, so a rotated file is redacted from the next
// one, and handed to the SDK's redactor).
func BenchmarkNewSDKClient(b *testing.B) {
	dir := b.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("abc/DEF+ghi/JKL==tail-0123456789\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		hc   promconfig.HTTPClientConfig
	}{
		{"credentials=none", promconfig.HTTPClientConfig{}},
		{"credentials=bearer_file", promconfig.HTTPClientConfig{Authorization: &promconfig.Authorization{Type: "Bearer", CredentialsFile: tokenFile}}},
	} {
		m := &module{hc: &http.Client{}, secrets: &httpcreds.Credentials{Source: httpcreds.Of(&c.hc), Sent: new(httpcreds.Recorder)}}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := newSDKClient(m, "http://127.0.0.1:9"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
