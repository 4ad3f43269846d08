package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/prometheus/client_golang/prometheus"
)

// probeResult is what one probe read from a printer controller.
type probeResult struct {
	up       bool
	duration float64
	counters []printerCounters
	status   *labelprinter.PrinterStatus // nil when the read failed or answered 404
	// statusKnown is true when /status answered or said 404; statusSupported is true when it
	// answered.
	statusKnown, statusSupported bool
	errs                         []error
}

// printerCounters is one printer's printCounters; c is nil when the read failed, and then no
// counter series is written for the printer (a 0 would read as a counter reset).
type printerCounters struct {
	printer string
	c       *labelprinter.PrintCounters
}

// probe reads the controller's status once and the counters of every printer (the
// single-printer paths when printers is empty), one after the other: a printer controller is a
// small device, and the reads of one probe have no need to compete for it. /status is not in
// the v3 contract, so a printer that answers it with 404 is up when its counters read; any
// other failure of /status makes the probe down.
func (e *exporter) probe(ctx context.Context, client *labelprinter.Client, printers []string) *probeResult {
	res := &probeResult{}
	st, err := client.Printers.Status(ctx)
	switch {
	case err == nil:
		res.status, res.statusKnown, res.statusSupported = st, true, true
	case errors.Is(err, labelprinter.ErrNotFound):
		res.statusKnown = true
	default:
		res.errs = append(res.errs, fmt.Errorf("status: %w", err))
	}
	if len(printers) == 0 {
		printers = []string{""}
	}
	res.counters = make([]printerCounters, len(printers))
	for i, p := range printers {
		c, err := client.Printers.Counters(ctx, p)
		if err != nil {
			res.errs = append(res.errs, fmt.Errorf("counters of %q: %w", p, err))
			c = nil
		}
		res.counters[i] = printerCounters{printer: p, c: c}
	}
	res.up = len(res.errs) == 0
	return res
}

// The values the status metrics enumerate as labels, 1 for the current one and 0 for the rest.
var (
	knownStates = []labelprinter.PrinterState{
		labelprinter.StateInitializing, labelprinter.StateStopped, labelprinter.StateStandby,
		labelprinter.StateStarting, labelprinter.StateHeating, labelprinter.StateStarted,
		labelprinter.StateMaintenance, labelprinter.StateStopping, labelprinter.StateError,
		labelprinter.StateOther,
	}
	ragColors = []labelprinter.RAGStatus{labelprinter.RAGRed, labelprinter.RAGAmber, labelprinter.RAGGreen}
	inkLevels = []labelprinter.InkLevel{labelprinter.InkEmpty, labelprinter.InkLow, labelprinter.InkOK}
)

const (
	// maxInks bounds the ink systems reported, so a printer cannot blow up the series count.
	maxInks = 16
	// maxStateLen bounds a state the SDK does not know, which becomes a label value.
	maxStateLen = 64
)

// probeDescs are the descriptors of a probe's metrics, built once per exporter.
type probeDescs struct {
	up, duration, supported   *prometheus.Desc
	triggers, bounces, labels *prometheus.Desc
	state, printable, rag     *prometheus.Desc
	errors, ink               *prometheus.Desc
}

func newProbeDescs() probeDescs {
	printer := []string{"printer"}
	return probeDescs{
		up: prometheus.NewDesc("labelprinter_up",
			"1 when the counters of every requested printer were read and /status was read or answered 404, 0 otherwise.", nil, nil),
		supported: prometheus.NewDesc("labelprinter_status_supported",
			"1 when the printer answered /status, 0 when it answered 404 (its status metrics are then left out).", nil, nil),
		duration: prometheus.NewDesc("labelprinter_probe_duration_seconds", "How long the probe took, in seconds.", nil, nil),
		triggers: prometheus.NewDesc("labelprinter_triggers_total", "Triggers the printer received (printCounters.triggers).", printer, nil),
		bounces: prometheus.NewDesc("labelprinter_trigger_bounces_total",
			"Triggers that found no job selected: a product passed unlabelled (printCounters.triggerBounces).", printer, nil),
		labels: prometheus.NewDesc("labelprinter_printed_labels_total", "Labels printed (printCounters.printedLabels).", printer, nil),
		state: prometheus.NewDesc("labelprinter_state",
			"The printer's state from /status: 1 for the current state, 0 for every other known state.", []string{"state"}, nil),
		printable: prometheus.NewDesc("labelprinter_printable",
			"1 when the state allows printing (HEATING or STARTED), 0 otherwise.", nil, nil),
		rag: prometheus.NewDesc("labelprinter_rag_status",
			"The printer's red/amber/green status from /status: 1 for the current color, 0 for the others.", []string{"color"}, nil),
		errors: prometheus.NewDesc("labelprinter_errors", "The number of errors the printer reports in /status.", nil, nil),
		ink: prometheus.NewDesc("labelprinter_ink_level",
			"The fill level of each ink system (ink is its index): 1 for the current level, 0 for the others.", []string{"ink", "level"}, nil),
	}
}

// probeCollector writes one probe's result as constant metrics into the probe's own registry.
type probeCollector struct {
	descs *probeDescs
	res   *probeResult
}

// Describe sends every descriptor a probe may use.
func (c *probeCollector) Describe(ch chan<- *prometheus.Desc) {
	d := c.descs
	for _, desc := range []*prometheus.Desc{d.up, d.duration, d.supported, d.triggers, d.bounces, d.labels, d.state, d.printable, d.rag, d.errors, d.ink} {
		ch <- desc
	}
}

// Collect sends the probe's metrics.
func (c *probeCollector) Collect(ch chan<- prometheus.Metric) {
	d, res := c.descs, c.res
	ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, boolValue(res.up))
	ch <- prometheus.MustNewConstMetric(d.duration, prometheus.GaugeValue, res.duration)
	if res.statusKnown {
		ch <- prometheus.MustNewConstMetric(d.supported, prometheus.GaugeValue, boolValue(res.statusSupported))
	}
	for _, pc := range res.counters {
		if pc.c == nil {
			continue
		}
		// Printer names were checked to be valid UTF-8, so these cannot fail.
		ch <- prometheus.MustNewConstMetric(d.triggers, prometheus.CounterValue, float64(pc.c.Triggers), pc.printer)
		ch <- prometheus.MustNewConstMetric(d.bounces, prometheus.CounterValue, float64(pc.c.TriggerBounces), pc.printer)
		ch <- prometheus.MustNewConstMetric(d.labels, prometheus.CounterValue, float64(pc.c.PrintedLabels), pc.printer)
	}
	if st := res.status; st != nil {
		known := false
		for _, s := range knownStates {
			known = known || st.State == s
			ch <- prometheus.MustNewConstMetric(d.state, prometheus.GaugeValue, boolValue(st.State == s), string(s))
		}
		if !known && st.State != "" {
			// A state the maker's table lacks is shown as it came rather than lost.
			ch <- prometheus.MustNewConstMetric(d.state, prometheus.GaugeValue, 1, labelValue(string(st.State), maxStateLen))
		}
		ch <- prometheus.MustNewConstMetric(d.printable, prometheus.GaugeValue, boolValue(st.State.Printable()))
		for _, c := range ragColors {
			ch <- prometheus.MustNewConstMetric(d.rag, prometheus.GaugeValue, boolValue(st.RAGStatus == c), string(c))
		}
		ch <- prometheus.MustNewConstMetric(d.errors, prometheus.GaugeValue, float64(len(st.Errors)))
		for i, ink := range st.Ink[:min(len(st.Ink), maxInks)] {
			idx := strconv.Itoa(i)
			for _, l := range inkLevels {
				ch <- prometheus.MustNewConstMetric(d.ink, prometheus.GaugeValue, boolValue(ink.Level == l), idx, string(l))
			}
		}
	}
}

// labelValue makes s a valid label value of at most n bytes: invalid UTF-8 becomes U+FFFD and
// the string is cut on a rune boundary.
func labelValue(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
