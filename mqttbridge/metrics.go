package mqttbridge

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/labelprinter/go-labelprinter/internal/fence"
	"github.com/prometheus/client_golang/prometheus"
)

// This file holds what a plant's monitoring sees of a bridge: its Prometheus metrics and its
// health. Every label value is a printer's topic segment, a command kind, a result state or an
// error class: never a URL, a topic a caller chose, or anything a credential could be in.

// metrics is what the bridge counts and follows for Collector and Health.
type metrics struct {
	// active: this bridge takes commands (a state_dir bridge while it runs; one of a pair while
	// it holds the lease); connected: the command subscription is granted on a connection that
	// is up (the bridge published online on it).
	active, connected atomic.Bool

	mu      sync.Mutex
	results map[resultKey]uint64
}

type resultKey struct{ command, state string }

func newMetrics() *metrics { return &metrics{results: map[resultKey]uint64{}} }

// result counts a result published on P/result. A command topic's last segment that is no
// command of the bridge counts as "other", so a caller cannot grow the label's values.
func (m *metrics) result(r Result) {
	cmd := r.Command
	switch cmd {
	case cmdPrintJob, cmdTrigger, cmdAbortPrint, cmdCancel, cmdResend:
	default:
		cmd = "other"
	}
	m.mu.Lock()
	m.results[resultKey{cmd, r.State}]++
	m.mu.Unlock()
}

// Health is what a bridge says of itself to a service manager or a load balancer.
type Health struct {
	// Active is true while the bridge takes commands: a state_dir bridge once Run connects,
	// one of a pair while it holds the bridge lease (a standby is not active).
	Active bool
	// Connected is true while the connection to the broker is up and the broker granted the
	// subscription to the commands (the bridge published online on it).
	Connected bool
}

// Ready is true when the bridge is active and connected: it takes commands now.
func (h Health) Ready() bool { return h.Active && h.Connected }

// Health reports whether the bridge is active and connected. It may be called at any time,
// from any goroutine.
func (b *Bridge) Health() Health {
	return Health{Active: b.met.active.Load() && !b.fenced.Load(), Connected: b.met.connected.Load()}
}

var (
	descResults = prometheus.NewDesc("labelprinter_mqtt_command_results_total",
		"Results published on P/result, by command kind (other: a command topic naming no command) and state: a printJob or trigger counts once as queued and once as its outcome.",
		[]string{"command", "state"}, nil)
	descOutbox = prometheus.NewDesc("labelprinter_mqtt_outbox_entries",
		"Entries of the printer's outbox in each state, as P/outbox counts them; absent while the bridge is not active.",
		[]string{"printer", "state"}, nil)
	descActive = prometheus.NewDesc("labelprinter_mqtt_active",
		"1 while this bridge takes commands (one of a pair: while it holds the bridge lease), else 0.", nil, nil)
	descConnected = prometheus.NewDesc("labelprinter_mqtt_broker_connected",
		"1 while the connection to the broker is up and the command subscription granted, else 0.", nil, nil)
	descLeaseHeld = prometheus.NewDesc("labelprinter_mqtt_lease_held",
		"One of a pair of bridges: 1 while it holds the bridge lease, 0 while it stands by.", nil, nil)
	descLeaseAge = prometheus.NewDesc("labelprinter_mqtt_lease_renewal_age_seconds",
		"One of a pair of bridges holding the lease: seconds since its last renewal that came back in time was sent (renewed every quarter of lease_ttl; the bridge leaves the broker at four fifths).", nil, nil)
	descReachable = prometheus.NewDesc("labelprinter_mqtt_printer_reachable",
		"1 while the printer's counters and its controller's /status can be read, else 0 (the status's reachable).", []string{"printer"}, nil)
	descReadError = prometheus.NewDesc("labelprinter_mqtt_printer_read_error",
		"1 for the class of the error of the printer's last counters read, or else of its controller's last /status read (none: both succeeded): not_found, unauthorized, forbidden, connection_refused, tls, timeout, dns, http_status, bad_response, other.",
		[]string{"printer", "class"}, nil)
	descSparkplugBorn = prometheus.NewDesc("labelprinter_mqtt_sparkplug_born",
		"With a sparkplug block: 1 while the edge node is born (its NBIRTH out on a connection that is up), else 0 (not connected, or waiting for its Primary Host).", nil, nil)
)

// Collector returns the bridge's metrics, to register with a Prometheus registry: results
// by command kind and state, outbox entries by printer and state, whether the bridge is active
// and connected, the bridge lease of a pair and its age, each printer's reachability and
// the class of its last read error, and whether the Sparkplug node is born. They are read at each scrape; nothing is registered
// globally.
func (b *Bridge) Collector() prometheus.Collector { return bridgeCollector{b} }

type bridgeCollector struct{ b *Bridge }

func (c bridgeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descResults, descOutbox, descActive, descConnected, descLeaseHeld, descLeaseAge, descReachable, descReadError, descSparkplugBorn} {
		ch <- d
	}
}

func (c bridgeCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	b.met.mu.Lock()
	for k, n := range b.met.results {
		ch <- prometheus.MustNewConstMetric(descResults, prometheus.CounterValue, float64(n), k.command, k.state)
	}
	b.met.mu.Unlock()
	h := b.Health()
	ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, boolValue(h.Active))
	ch <- prometheus.MustNewConstMetric(descConnected, prometheus.GaugeValue, boolValue(h.Connected))
	if b.spb != nil {
		ch <- prometheus.MustNewConstMetric(descSparkplugBorn, prometheus.GaugeValue, boolValue(b.spb.born.Load()))
	}
	if b.pair != nil {
		ch <- prometheus.MustNewConstMetric(descLeaseHeld, prometheus.GaugeValue, boolValue(h.Active))
		if l := b.pair.current(); h.Active && l != nil && l.Held() {
			sent := l.Deadline().Add(-fence.Span(b.pair.ttl))
			ch <- prometheus.MustNewConstMetric(descLeaseAge, prometheus.GaugeValue, time.Since(sent).Seconds())
		}
	}
	// A pair's outboxes are opened once the lease is held, before active is set: reading
	// active first orders the reads of the views after their making.
	outboxes := b.met.active.Load()
	for _, ctl := range b.ctls {
		for _, p := range ctl.printers {
			p.mu.Lock()
			read := p.read
			reachable, class, _, _ := p.readState()
			p.mu.Unlock()
			if read {
				if reachable {
					class = "none"
				}
				ch <- prometheus.MustNewConstMetric(descReachable, prometheus.GaugeValue, boolValue(reachable), p.name)
				ch <- prometheus.MustNewConstMetric(descReadError, prometheus.GaugeValue, 1, p.name, class)
			}
		}
		if !outboxes || ctl.view == nil {
			continue
		}
		ctl.view.mu.Lock()
		for _, p := range ctl.printers {
			for st, n := range ctl.view.counts(p.remote) {
				ch <- prometheus.MustNewConstMetric(descOutbox, prometheus.GaugeValue, float64(n), p.name, string(st))
			}
		}
		ctl.view.mu.Unlock()
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
