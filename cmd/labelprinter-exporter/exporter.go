package main

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const (
	defaultListen        = ":9631"
	defaultTimeout       = 10 * time.Second
	defaultTimeoutOffset = 500 * time.Millisecond
	defaultCacheSize     = 1024
	// maxTimeout bounds any timeout, from the header or the flag, so a wild value cannot hold a
	// probe for hours (or overflow a time.Duration).
	maxTimeout = 10 * time.Minute
	// minBudget is the least time a probe is given, whatever the header and the offset say.
	minBudget = 100 * time.Millisecond
	// maxPrinters bounds the printer parameters of one probe.
	maxPrinters = 64
	// maxNameLen bounds a printer name, which becomes a label value.
	maxNameLen = 256
	// maxTargetLen bounds the target parameter: a probe's URLs, its log lines, and the last
	// request a kept connection still refers to stay a few KiB.
	maxTargetLen = 2048
)

// config is everything the exporter needs; main fills it from the flags.
type config struct {
	// timeout bounds a probe when Prometheus sends no X-Prometheus-Scrape-Timeout-Seconds.
	timeout time.Duration
	// timeoutOffset is kept back from Prometheus's scrape timeout, so the answer is written
	// before Prometheus gives up on it.
	timeoutOffset time.Duration
	// modules loads the modules, at start and at every reload: --config.file, or the default
	// module from the flags.
	modules func() (map[string]*moduleConfig, error)
	// cacheSize caps the targets whose connections are kept warm.
	cacheSize int
	// logger receives probe failures at debug level and reloads; nil logs nothing.
	logger *slog.Logger
	// resolver looks up target host names; nil means net.DefaultResolver.
	resolver resolver
}

// exporter serves /probe, /metrics, /-/reload and /. It is safe for concurrent use.
type exporter struct {
	timeout       time.Duration
	timeoutOffset time.Duration
	cacheSize     int
	loadModules   func() (map[string]*moduleConfig, error)
	resolver      resolver
	logger        *slog.Logger
	descs         probeDescs

	// loaded is the running configuration; a reload builds a new one and swaps it in whole.
	loaded   atomic.Pointer[loadedConfig]
	reloadMu sync.Mutex

	registry     *prometheus.Registry // the exporter's own metrics
	probes       *prometheus.CounterVec
	reloadOK     prometheus.Gauge
	reloadOKTime prometheus.Gauge
	mux          *http.ServeMux
}

// loadedConfig is one load of the modules with the targets probed through them.
type loadedConfig struct {
	modules map[string]*module
	targets *targetCache
}

// closeIdle closes the idle connections of every module.
func (l *loadedConfig) closeIdle() {
	for _, m := range l.modules {
		m.closeIdle()
	}
}

// Results of probes, the values of labelprinter_exporter_probes_total's result label.
const (
	resultSuccess   = "success"   // every read succeeded (up 1)
	resultFailure   = "failure"   // a read failed (up 0)
	resultForbidden = "forbidden" // the target is outside the module's allowed targets (403)
	resultInvalid   = "invalid"   // a bad request, an unknown module included (400)
)

// newExporter builds the exporter from cfg and loads its modules; it opens no socket. An error
// names what is wrong (a module that carries credentials without allowed_targets, say), and the
// exporter does not start.
func newExporter(cfg config) (*exporter, error) {
	if cfg.timeout <= 0 || cfg.timeout > maxTimeout {
		return nil, fmt.Errorf("--timeout must be in (0, %v], got %v", maxTimeout, cfg.timeout)
	}
	if cfg.timeoutOffset < 0 || cfg.timeoutOffset >= maxTimeout {
		return nil, fmt.Errorf("--timeout-offset must be in [0, %v), got %v", maxTimeout, cfg.timeoutOffset)
	}
	if cfg.cacheSize <= 0 {
		return nil, fmt.Errorf("--cache-size must be positive, got %d", cfg.cacheSize)
	}
	if cfg.modules == nil {
		return nil, errors.New("no modules to load")
	}
	if cfg.resolver == nil {
		cfg.resolver = net.DefaultResolver
	}
	logger := cfg.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &exporter{
		timeout:       cfg.timeout,
		timeoutOffset: cfg.timeoutOffset,
		cacheSize:     cfg.cacheSize,
		loadModules:   cfg.modules,
		resolver:      cfg.resolver,
		logger:        logger,
		descs:         newProbeDescs(),
		registry:      prometheus.NewRegistry(),
		probes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "labelprinter_exporter_probes_total",
			Help: "Probes answered, by result: success (up 1), failure (up 0), forbidden (target outside the module's allowed targets), invalid (bad request).",
		}, []string{"result"}),
		reloadOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "labelprinter_exporter_config_last_reload_successful",
			Help: "1 when the last load of the configuration succeeded, 0 when it failed (the one before keeps running).",
		}),
		reloadOKTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "labelprinter_exporter_config_last_reload_success_timestamp_seconds",
			Help: "When the configuration was last loaded successfully, in seconds since the epoch.",
		}),
	}
	l, err := e.load()
	if err != nil {
		return nil, err
	}
	e.loaded.Store(l)
	e.reloadOK.Set(1)
	e.reloadOKTime.SetToCurrentTime()
	for _, r := range []string{resultSuccess, resultFailure, resultForbidden, resultInvalid} {
		e.probes.WithLabelValues(r)
	}
	e.registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildinfo.Get().Collector("labelprinter_exporter"),
		e.probes, e.reloadOK, e.reloadOKTime,
	)

	e.mux = http.NewServeMux()
	e.mux.HandleFunc("GET /probe", e.serveProbe)
	e.mux.Handle("GET /metrics", promhttp.InstrumentMetricHandler(e.registry,
		promhttp.HandlerFor(e.registry, promhttp.HandlerOpts{EnableOpenMetrics: true})))
	e.mux.HandleFunc("POST /-/reload", e.serveReload)
	e.mux.HandleFunc("GET /{$}", e.serveIndex)
	return e, nil
}

// load reads and builds the modules, with an empty client cache.
func (e *exporter) load() (*loadedConfig, error) {
	cfgs, err := e.loadModules()
	if err != nil {
		return nil, err
	}
	mods, err := buildModules(cfgs, e.resolver)
	if err != nil {
		return nil, err
	}
	l := &loadedConfig{modules: mods}
	l.targets, err = newTargetCache(e.cacheSize, l.closeIdle)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// reload loads the configuration again and swaps it in; when it fails, the running one stays
// and the error says why. Probes under way finish on the configuration they started with.
func (e *exporter) reload() error {
	e.reloadMu.Lock()
	defer e.reloadMu.Unlock()
	l, err := e.load()
	if err != nil {
		e.reloadOK.Set(0)
		e.logger.Error("reload failed; the running configuration stays", "err", err)
		return err
	}
	old := e.loaded.Swap(l)
	old.closeIdle()
	e.reloadOK.Set(1)
	e.reloadOKTime.SetToCurrentTime()
	e.logger.Info("configuration reloaded", "modules", len(l.modules))
	return nil
}

// serveReload answers POST /-/reload: 200 when the configuration was loaded again, 500 with the
// reason when it was not (the running one stays).
func (e *exporter) serveReload(w http.ResponseWriter, _ *http.Request) {
	if err := e.reload(); err != nil {
		http.Error(w, "reload failed, the running configuration stays: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "reloaded\n")
}

// ServeHTTP serves /probe, /metrics, /-/reload and /.
func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.mux.ServeHTTP(w, r) }

// Close releases the idle connections to every printer.
func (e *exporter) Close() { e.loaded.Load().closeIdle() }

// probeRequest is a validated /probe request.
type probeRequest struct {
	module   string   // the module's name; defaultModuleName when none was given
	target   string   // the printer controller's base URL
	host     string   // its host name or address, for the allow check
	printers []string // distinct printer names; nil for the single-printer paths
	debug    bool     // answer the probe's log in text/plain
}

// parseProbeRequest validates the query of /probe. A target without a scheme is taken as
// http://, the way printers are reached on plant networks; an empty printer is ignored.
func parseProbeRequest(q url.Values) (*probeRequest, error) {
	targets := q["target"]
	if len(targets) != 1 || targets[0] == "" {
		return nil, errors.New("give exactly one target parameter, such as target=http://192.168.1.50")
	}
	target := targets[0]
	if len(target) > maxTargetLen {
		return nil, fmt.Errorf("target is longer than %d bytes", maxTargetLen)
	}
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
		return nil, errors.New("target must not hold credentials; give them to a module")
	}
	if u.Hostname() == "" {
		return nil, errors.New("target has no host")
	}
	p := &probeRequest{module: defaultModuleName, target: target, host: u.Hostname()}
	switch mods := q["module"]; {
	case len(mods) > 1:
		return nil, errors.New("give at most one module parameter")
	case len(mods) == 1 && mods[0] != "":
		if len(mods[0]) > maxModuleNameLen {
			return nil, fmt.Errorf("module is longer than %d bytes", maxModuleNameLen)
		}
		p.module = mods[0]
	}
	switch dbg := q["debug"]; {
	case len(dbg) > 1:
		return nil, errors.New("give at most one debug parameter")
	case len(dbg) == 1:
		v, err := strconv.ParseBool(dbg[0])
		if err != nil {
			return nil, errors.New("debug must be true or false")
		}
		p.debug = v
	}
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
// X-Prometheus-Scrape-Timeout-Seconds header less offset, never under minBudget, or fallback
// without the header; and says where the figure came from, for the debug answer.
func probeTimeout(h http.Header, fallback, offset time.Duration) (time.Duration, string, error) {
	v := h.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return fallback, "--timeout; no X-Prometheus-Scrape-Timeout-Seconds", nil
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || s <= 0 {
		return 0, "", fmt.Errorf("X-Prometheus-Scrape-Timeout-Seconds %q is not a positive number of seconds", v)
	}
	if s >= maxTimeout.Seconds() {
		return maxTimeout, "the scrape timeout, capped", nil
	}
	d := time.Duration(s*float64(time.Second)) - offset
	from := fmt.Sprintf("scrape timeout %ss less --timeout-offset %v", v, offset)
	if d < minBudget {
		d = minBudget
		from += fmt.Sprintf(", raised to the least budget %v", minBudget)
	}
	return d, from, nil
}

// serveProbe answers GET /probe: 400 for a bad request or an unknown module, 403 for a
// target outside the module's allowed targets (nothing sent either way), and otherwise 200 with
// the probe's metrics, from a fresh registry, whether or not the printer answered; with
// debug=true, the probe's log and metrics in text/plain.
func (e *exporter) serveProbe(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	timeout, timeoutFrom, err := probeTimeout(r.Header, e.timeout, e.timeoutOffset)
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
	l := e.loaded.Load()
	m := l.modules[req.module]
	if m == nil {
		e.refuse(w, http.StatusBadRequest, resultInvalid, fmt.Sprintf("unknown module %q", req.module))
		return
	}
	if err := m.allow.check(ctx, req.host); err != nil {
		e.logger.Debug("probe refused", "module", m.name, "target", req.target, "err", err)
		e.refuse(w, http.StatusForbidden, resultForbidden, fmt.Sprintf("target is not allowed by module %q", m.name))
		return
	}
	client, err := newSDKClient(m, req.target)
	if err != nil {
		e.refuse(w, http.StatusBadRequest, resultInvalid, "bad target: "+err.Error())
		return
	}
	l.targets.touch(m, req.target)
	var trace *probeTrace
	if req.debug {
		trace = &probeTrace{}
		ctx = withTrace(ctx, trace)
	}
	res := e.probe(ctx, client, req.printers)
	res.duration = time.Since(start).Seconds()
	if res.up {
		e.probes.WithLabelValues(resultSuccess).Inc()
	} else {
		e.probes.WithLabelValues(resultFailure).Inc()
		if e.logger.Enabled(r.Context(), slog.LevelDebug) {
			e.logger.Debug("probe failed", "module", m.name, "target", req.target,
				"err", redact(client, errors.Join(res.errs...).Error()))
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&probeCollector{descs: &e.descs, res: res})
	if req.debug {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		info := probeInfo{module: m.name, target: req.target, printers: req.printers, budget: timeout, budgetFrom: timeoutFrom}
		if err := writeDebug(w, info, trace, res, reg, client); err != nil {
			e.logger.Debug("debug answer failed", "err", err)
		}
		return
	}
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
<label>Module <input type="text" name="module" placeholder="default"></label>
<label><input type="checkbox" name="debug" value="true"> Debug</label>
<input type="submit" value="Probe">
</form>
<ul>
<li><a href="metrics">Exporter metrics</a></li>
</ul>
<h2>Modules</h2>
<table>
<tr><th>Module</th><th>Credentials</th><th>Targets allowed</th></tr>
{{range .Modules}}<tr><td>{{.Name}}</td><td>{{if .Credentialed}}yes{{else}}none{{end}}</td><td>{{.Allowed}}</td></tr>
{{end}}</table>
<p>Probe timeout: the scrape timeout less {{.Offset}}, or {{.Timeout}} without a scrape-timeout header.</p>
</body>
</html>
`))

// serveIndex answers / with a page that links the exporter's metrics, lists the modules and
// offers a probe form.
func (e *exporter) serveIndex(w http.ResponseWriter, r *http.Request) {
	type mod struct {
		Name, Allowed string
		Credentialed  bool
	}
	l := e.loaded.Load()
	mods := make([]mod, 0, len(l.modules))
	for _, m := range l.modules {
		mods = append(mods, mod{m.name, m.allow.String(), m.credentialed})
	}
	slices.SortFunc(mods, func(a, b mod) int { return strings.Compare(a.Name, b.Name) })
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = indexPage.Execute(w, struct {
		Modules         []mod
		Timeout, Offset time.Duration
	}{mods, e.timeout, e.timeoutOffset})
}
