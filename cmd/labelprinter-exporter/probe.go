package main

import (
	"context"
	"fmt"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/prometheus/client_golang/prometheus"
)

// probeResult is what one probe read from a printer controller.
type probeResult struct {
	up       bool
	duration float64
	counters []printerCounters
	errs     []error
}

// printerCounters is one printer's printCounters; c is nil when the read failed, and then no
// counter series is written for the printer (a 0 would read as a counter reset).
type printerCounters struct {
	printer string
	c       *labelprinter.PrintCounters
}

// probe reads the counters of every printer (the single-printer paths when printers is
// empty), one after the other: a printer controller is a small device, and the reads of one
// probe have no need to compete for it.
func (e *exporter) probe(ctx context.Context, client *labelprinter.Client, printers []string) *probeResult {
	res := &probeResult{}
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

// probeDescs are the descriptors of a probe's metrics, built once per exporter.
type probeDescs struct {
	up, duration              *prometheus.Desc
	triggers, bounces, labels *prometheus.Desc
}

func newProbeDescs() probeDescs {
	printer := []string{"printer"}
	return probeDescs{
		up:       prometheus.NewDesc("labelprinter_up", "1 when every read of the probe succeeded, 0 otherwise.", nil, nil),
		duration: prometheus.NewDesc("labelprinter_probe_duration_seconds", "How long the probe took, in seconds.", nil, nil),
		triggers: prometheus.NewDesc("labelprinter_triggers_total", "Triggers the printer received (printCounters.triggers).", printer, nil),
		bounces: prometheus.NewDesc("labelprinter_trigger_bounces_total",
			"Triggers that found no job selected: a product passed unlabelled (printCounters.triggerBounces).", printer, nil),
		labels: prometheus.NewDesc("labelprinter_printed_labels_total", "Labels printed (printCounters.printedLabels).", printer, nil),
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
	for _, desc := range []*prometheus.Desc{d.up, d.duration, d.triggers, d.bounces, d.labels} {
		ch <- desc
	}
}

// Collect sends the probe's metrics.
func (c *probeCollector) Collect(ch chan<- prometheus.Metric) {
	d, res := c.descs, c.res
	ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, boolValue(res.up))
	ch <- prometheus.MustNewConstMetric(d.duration, prometheus.GaugeValue, res.duration)
	for _, pc := range res.counters {
		if pc.c == nil {
			continue
		}
		// Printer names were checked to be valid UTF-8, so these cannot fail.
		ch <- prometheus.MustNewConstMetric(d.triggers, prometheus.CounterValue, float64(pc.c.Triggers), pc.printer)
		ch <- prometheus.MustNewConstMetric(d.bounces, prometheus.CounterValue, float64(pc.c.TriggerBounces), pc.printer)
		ch <- prometheus.MustNewConstMetric(d.labels, prometheus.CounterValue, float64(pc.c.PrintedLabels), pc.printer)
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
