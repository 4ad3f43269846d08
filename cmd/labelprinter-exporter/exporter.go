package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	defaultListen    = ":9631"
	defaultTimeout   = 10 * time.Second
	defaultCacheSize = 1024
	// maxTimeout bounds any timeout, from the header or the flag, so a wild value cannot hold a
	// probe for hours (or overflow a time.Duration).
	maxTimeout = 10 * time.Minute
	// scrapeTimeoutMargin is kept back from Prometheus's scrape timeout (at most a tenth of it),
	// so the answer is written before Prometheus gives up on it.
	scrapeTimeoutMargin = 500 * time.Millisecond
	// maxPrinters bounds the printer parameters of one probe.
	maxPrinters = 64
	// maxNameLen bounds a printer name, which becomes a label value.
	maxNameLen = 256
)

// config is everything the exporter needs; main fills it from the flags.
type config struct {
	// timeout bounds a probe when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds.
	timeout time.Duration
	// token, when set, is sent to every printer as a bearer token.
	token secret
	// tls, when set, replaces the SDK's default TLS settings (a CA pool, skipped verification).
	tls *tls.Config
	// allowTargets lists CIDRs, addresses and host names; nil means defaultAllowTargets.
	allowTargets []string
	// cacheSize caps the targets whose Client is kept.
	cacheSize int
	// logger receives probe failures at debug level; nil logs nothing.
	logger *slog.Logger
	// resolver looks up target host names; nil means net.DefaultResolver.
	resolver resolver
}

// secret keeps the bearer token out of every %v, %+v, %#v and log rendering.
type secret string

func (secret) String() string               { return "[REDACTED]" }
func (secret) GoString() string             { return `"[REDACTED]"` }
func (secret) LogValue() slog.Value         { return slog.StringValue("[REDACTED]") }
func (s secret) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, s.String()) }

// exporter serves /probe, /metrics and /. It is safe for concurrent use.
type exporter struct {
	timeout   time.Duration
	token     secret
	allow     *allowList
	clients   *clientCache
	transport *http.Transport
	logger    *slog.Logger
	descs     probeDescs

	registry *prometheus.Registry // the exporter's own metrics
	probes   *prometheus.CounterVec
	mux      *http.ServeMux
}

// Results of probes, the values of labelprinter_exporter_probes_total's result label.
const (
	resultSuccess   = "success"   // every read succeeded (up 1)
	resultFailure   = "failure"   // a read failed (up 0)
	resultForbidden = "forbidden" // the target is outside --allow-targets (403)
	resultInvalid   = "invalid"   // a bad request (400)
)

// newExporter builds the exporter from cfg; it opens no socket.
func newExporter(cfg config) (*exporter, error) {
	if cfg.timeout <= 0 || cfg.timeout > maxTimeout {
		return nil, fmt.Errorf("--timeout must be in (0, %v], got %v", maxTimeout, cfg.timeout)
	}
	if cfg.cacheSize <= 0 {
		return nil, fmt.Errorf("--cache-size must be positive, got %d", cfg.cacheSize)
	}
	if cfg.resolver == nil {
		cfg.resolver = net.DefaultResolver
	}
	entries := cfg.allowTargets
	if entries == nil {
		entries = defaultAllowTargets
	}
	allow, err := parseAllowList(entries, cfg.resolver)
	if err != nil {
		return nil, err
	}
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &exporter{
		timeout:   cfg.timeout,
		token:     cfg.token,
		allow:     allow,
		transport: newTransport(allow, cfg.tls, cfg.cacheSize),
		logger:    logger,
		descs:     newProbeDescs(),
		registry:  prometheus.NewRegistry(),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "labelprinter_exporter_probes_total",
			Help: "Probes answered, by result: success (up 1), failure (up 0), forbidden (target outside --allow-targets), invalid (bad request).",
		}, []string{"result"}),
	}
	e.clients, err = newClientCache(cfg.cacheSize, e.newClient)
	if err != nil {
		return nil, err
	}
	for _, r := range []string{resultSuccess, resultFailure, resultForbidden, resultInvalid} {
		e.probes.WithLabelValues(r)
	}
	e.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		e.probes,
	)

	e.mux = http.NewServeMux()
	e.mux.HandleFunc("GET /probe", e.serveProbe)
	e.mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(e.registry,
		promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})))
	e.mux.HandleFunc("GET /{$}", e.serveIndex)
	return e, nil
}

// ServeHTTP serves /probe, /metrics and /.
func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Close releases the idle connections to every printer.
func (e *exporter) Close() { e.transport.CloseIdleConnections() }

// newTransport is the one transport every target's Client shares: the SDK's defaults, an idle
// pool as large as the client cache with a few connections per printer (Prometheus probes a
// target once per interval), no proxy (the exporter calls printers on the plant network
// directly, and the connect-time allow check must see the printer's address, not a proxy's),
// and the allow list enforced again when connecting.
func newTransport(allow *allowList, tlsCfg *tls.Config, cacheSize int) *http.Transport {
	t := labelprinter.DefaultTransport()
	t.Proxy = nil
	t.DialContext = allow.dialContext(&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second})
	t.MaxIdleConns = cacheSize
	t.MaxIdleConnsPerHost = 4
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg.Clone()
	}
	return t
}

// newClient builds the SDK Client of one target. Retries are off: Prometheus probes again at
// the next interval, and a retry inside a probe would only stretch it toward the scrape
// timeout and hide the failure labelprinter_up is there to show.
func (e *exporter) newClient(target string) (*labelprinter.Client, error) {
	opts := []labelprinter.Option{
		labelprinter.WithHTTPClient(&http.Client{Transport: e.transport}),
		labelprinter.WithRetry(labelprinter.RetryPolicy{MaxAttempts: 1}),
		labelprinter.WithUserAgent("labelprinter-exporter"),
	}
	if e.token != "" {
		opts = append(opts, labelprinter.WithBearerToken(string(e.token)))
	}
	return labelprinter.NewClient(target, opts...)
}

// probeRequest is a validated /probe request.
type probeRequest struct {
	target   string   // the printer controller's base URL
	host     string   // its host name or address, for the allow check
	printers []string // distinct printer names; nil for the single-printer paths
}

// parseProbeRequest validates the query of /probe. A target without a scheme is taken as
// http://, the way printers are reached on plant networks; an empty printer is ignored.
func parseProbeRequest(q url.Values) (*probeRequest, error) {
	targets := q["target"]
	if len(targets) != 1 || targets[0] == "" {
		return nil, errors.New("give exactly one target parameter, such as target=http://192.168.1.50")
	}
	target := targets[0]
	if !strings.Contains(target, "://") {
		target = "http://" + target
	}
	u, err := url.Parse(target)
	if err != nil {
		return nil, errors.New("target is not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("target must be an http:// or https:// URL")
	}
	if u.User != nil {
		return nil, errors.New("target must not hold credentials; use --bearer-token-file")
	}
	if u.Hostname() == "" {
		return nil, errors.New("target has no host")
	}
	p := &probeRequest{target: target, host: u.Hostname()}
	seen := map[string]bool{}
	for _, name := range q["printer"] {
		if name == "" {
			// An empty field of the index page's form: the single-printer paths.
			continue
		}
		if err := checkPrinterName(name); err != nil {
			return nil, err
		}
		if !seen[name] {
			seen[name] = true
			p.printers = append(p.printers, name)
		}
	}
	if len(p.printers) > maxPrinters {
		return nil, fmt.Errorf("at most %d printer parameters per probe", maxPrinters)
	}
	return p, nil
}

// checkPrinterName refuses what the SDK would refuse, before anything is sent: a name becomes
// one path segment and a label value.
func checkPrinterName(name string) error {
	switch {
	case name == "." || name == "..":
		return errors.New(`printer cannot be "." or ".."`)
	case len(name) > maxNameLen:
		return fmt.Errorf("printer is longer than %d bytes", maxNameLen)
	case !utf8.ValidString(name):
		return errors.New("printer is not valid UTF-8")
	case strings.ContainsFunc(name, unicode.IsControl):
		return errors.New("printer holds a control character")
	}
	return nil
}

// probeTimeout returns how long a probe may take: Prometheus's scrape timeout from the
// X-Prometheus-Scrape-Timeout-Seconds header less a margin, or fallback without the header.
func probeTimeout(h http.Header, fallback time.Duration) (time.Duration, error) {
	v := h.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return fallback, nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || s <= 0 {
		return 0, fmt.Errorf("X-Prometheus-Scrape-Timeout-Seconds %q is not a positive number of seconds", v)
	}
	if s >= maxTimeout.Seconds() {
		return maxTimeout, nil
	}
	d := time.Duration(s * float64(time.Second))
	d -= min(scrapeTimeoutMargin, d/10)
	if d <= 0 {
		return 0, fmt.Errorf("X-Prometheus-Scrape-Timeout-Seconds %q leaves no time to probe", v)
	}
	return d, nil
}

// serveProbe answers GET /probe: 400 for a bad request, 403 for a target outside the allow
// list (nothing sent), and otherwise 200 with the probe's metrics, from a fresh registry,
// whether or not the printer answered.
func (e *exporter) serveProbe(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	timeout, err := probeTimeout(r.Header, e.timeout)
	if err != nil {
		e.refuse(w, http.StatusBadRequest, resultInvalid, err.Error())
		return
	}
	req, err := parseProbeRequest(r.URL.Query())
	if err != nil {
		e.refuse(w, http.StatusBadRequest, resultInvalid, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	if err := e.allow.check(ctx, req.host); err != nil {
		e.logger.Debug("probe refused", "target", req.target, "err", err)
		e.refuse(w, http.StatusForbidden, resultForbidden, "target is not allowed by --allow-targets")
		return
	}
	client, err := e.clients.get(req.target)
	if err != nil {
		e.refuse(w, http.StatusBadRequest, resultInvalid, "bad target: "+err.Error())
		return
	}
	res := e.probe(ctx, client, req.printers)
	res.duration = time.Since(start).Seconds()
	if res.up {
		e.probes.WithLabelValues(resultSuccess).Inc()
	} else {
		e.probes.WithLabelValues(resultFailure).Inc()
		e.logger.Debug("probe failed", "target", req.target, "err", errors.Join(res.errs...))
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&probeCollector{descs: &e.descs, res: res})
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}).ServeHTTP(w, r)
}

// refuse answers a probe that is not carried out, in plain text.
func (e *exporter) refuse(w http.ResponseWriter, code int, result, msg string) {
	e.probes.WithLabelValues(result).Inc()
	http.Error(w, msg, code)
}

var indexPage = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Label printer exporter</title></head>
<body>
<h1>Label printer exporter</h1>
<p>Probes label printer controllers for Prometheus: counters, state, ink and errors.</p>
<form action="probe" method="get">
<label>Target <input type="text" name="target" placeholder="http://192.168.1.50" size="40" required></label>
<label>Printer <input type="text" name="printer" placeholder="line1 (empty: single-printer paths)"></label>
<input type="submit" value="Probe">
</form>
<ul>
<li><a href="metrics">Exporter metrics</a></li>
</ul>
<p>Targets allowed: {{.Allowed}}. Probe timeout without a scrape-timeout header: {{.Timeout}}.</p>
</body>
</html>
`))

// serveIndex answers / with a page that links the exporter's metrics and offers a probe form.
func (e *exporter) serveIndex(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = indexPage.Execute(w, struct {
		Allowed string
		Timeout time.Duration
	}{e.allow.String(), e.timeout})
}
