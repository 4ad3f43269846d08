package main

// debug.go holds &debug=true: the trace of each request a probe sends, and the text/plain
// answer that shows it, blackbox_exporter's way of saying why a probe failed.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// probeTrace collects the requests of one probe.
type probeTrace struct {
	mu       sync.Mutex
	requests []tracedRequest
}

type tracedRequest struct {
	method, url string
	status      string // empty when no answer came
	duration    time.Duration
	err         error
}

type traceKey struct{}

// withTrace returns ctx carrying t, which tracingTransport fills.
func withTrace(ctx context.Context, t *probeTrace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

// tracingTransport records each request whose context carries a probeTrace; it costs a
// context lookup on every other request. It sits above prometheus/common's round trippers, so
// the requests it sees carry no credential yet.
type tracingTransport struct{ next http.RoundTripper }

func (t tracingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr, _ := r.Context().Value(traceKey{}).(*probeTrace)
	if tr == nil {
		return t.next.RoundTrip(r)
	}
	start := time.Now()
	resp, err := t.next.RoundTrip(r)
	rec := tracedRequest{method: r.Method, url: r.URL.Redacted(), duration: time.Since(start), err: err}
	if resp != nil {
		rec.status = resp.Status
	}
	tr.mu.Lock()
	tr.requests = append(tr.requests, rec)
	tr.mu.Unlock()
	return resp, err
}

// CloseIdleConnections passes on to the module's round trippers, which close their transport's.
func (t tracingTransport) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// probeInfo is what the debug answer says about a probe besides its requests and metrics.
type probeInfo struct {
	module, target string
	printers       []string
	budget         time.Duration
	budgetFrom     string
}

// writeDebug writes the debug answer: the module, the target, each request with its status,
// duration and error, the probe's errors, then the metrics in the text format. Everything
// passes through redact with the probe's Client, which holds the module's credentials: a
// request's error comes straight from the module's round tripper, not through the SDK.
func writeDebug(w io.Writer, info probeInfo, tr *probeTrace, res *probeResult, reg *prometheus.Registry, c *labelprinter.Client) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Module: %s\n", info.module)
	fmt.Fprintf(&b, "Target: %s\n", info.target)
	if len(info.printers) == 0 {
		b.WriteString("Printers: none named (single-printer paths)\n")
	} else {
		fmt.Fprintf(&b, "Printers: %s\n", strings.Join(info.printers, ", "))
	}
	fmt.Fprintf(&b, "Budget: %v (%s)\n", info.budget, info.budgetFrom)
	b.WriteString("\nRequests:\n")
	tr.mu.Lock()
	for _, r := range tr.requests {
		switch {
		case r.err != nil:
			fmt.Fprintf(&b, "  %s %s: error after %v: %v\n", r.method, r.url, r.duration.Round(time.Microsecond), r.err)
		default:
			fmt.Fprintf(&b, "  %s %s: %s in %v\n", r.method, r.url, r.status, r.duration.Round(time.Microsecond))
		}
	}
	if len(tr.requests) == 0 {
		b.WriteString("  none\n")
	}
	tr.mu.Unlock()
	up := 0
	if res.up {
		up = 1
	}
	fmt.Fprintf(&b, "\nProbe: up %d in %.3fs\n", up, res.duration)
	if res.statusKnown && !res.statusSupported {
		b.WriteString("  /status answered 404: the printer does not serve it; its metrics are left out\n")
	}
	for _, err := range res.errs {
		fmt.Fprintf(&b, "  error: %v\n", err)
	}
	b.WriteString("\nMetrics:\n")
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			return err
		}
	}
	_, err = io.WriteString(w, redact(c, b.String()))
	return err
}
