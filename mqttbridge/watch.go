package mqttbridge

import (
	"context"
	"encoding/json"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// statusPayload is P/status: reachable always; the status fields while /status answers.
type statusPayload struct {
	Reachable bool `json:"reachable"`
	// Reason says why the printer cannot be read, while it cannot.
	Reason string `json:"reason,omitempty"`
	*statusFields
	Time time.Time `json:"time"`
}

type statusFields struct {
	State     labelprinter.PrinterState `json:"state"`
	Printable bool                      `json:"printable"`
	RAGStatus labelprinter.RAGStatus    `json:"ragStatus"`
	Errors    []string                  `json:"errors"`
	Ink       []labelprinter.InkStatus  `json:"ink"`
}

// countersPayload is P/counters.
type countersPayload struct {
	Triggers       int64     `json:"triggers"`
	TriggerBounces int64     `json:"triggerBounces"`
	PrintedLabels  int64     `json:"printedLabels"`
	Time           time.Time `json:"time"`
}

// watchCounters reads p's counters until ctx ends. A failed read makes p unreachable; the
// watch is then started again after a back-off, so the first good read after an outage is
// published as reachable even when no counter changed.
func (b *Bridge) watchCounters(ctx context.Context, p *printer) {
	opts := &labelprinter.WatchOptions{Interval: b.cfg.PollInterval}
	failures := 0
	for ctx.Err() == nil {
		for ch, err := range p.ctl.client.Printers.WatchCounters(ctx, p.remote, opts) {
			if err != nil {
				if ctx.Err() == nil {
					b.readFailed(p, err)
				}
				b.setCounters(p, nil)
				failures++
				break
			}
			failures = 0
			b.setCounters(p, &ch.Counters)
		}
		if !sleep(ctx, backoff(b.cfg.PollInterval, failures)) {
			return
		}
	}
}

// watchStatus reads the controller's /status until ctx ends; while it fails, the printers'
// status carries reachable alone.
func (b *Bridge) watchStatus(ctx context.Context, ctl *controller) {
	opts := &labelprinter.WatchOptions{Interval: b.cfg.PollInterval}
	failures := 0
	for ctx.Err() == nil {
		for ch, err := range ctl.client.Printers.WatchStatus(ctx, opts) {
			if err != nil {
				ctl.mu.Lock()
				ctl.status = nil
				ctl.mu.Unlock()
				failures++
				break
			}
			failures = 0
			ctl.mu.Lock()
			ctl.status = ch.Status
			ctl.mu.Unlock()
			for _, p := range ctl.printers {
				b.publishStatus(p)
			}
		}
		if ctx.Err() != nil {
			return
		}
		for _, p := range ctl.printers {
			b.publishStatus(p)
		}
		if !sleep(ctx, backoff(b.cfg.PollInterval, failures)) {
			return
		}
	}
}

// backoff doubles interval per failure in a row, up to maxWatchBackoff.
func backoff(interval time.Duration, failures int) time.Duration {
	d := interval
	for i := 1; i < failures && d < maxWatchBackoff; i++ {
		d *= 2
	}
	return min(d, max(interval, maxWatchBackoff))
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// setCounters records a read of p's counters (nil: the read failed) and publishes what
// changed.
func (b *Bridge) setCounters(p *printer, c *labelprinter.PrintCounters) {
	p.mu.Lock()
	changedReach := !p.read || p.reachable != (c != nil)
	p.read, p.reachable = true, c != nil
	if c != nil && p.errClass != "" {
		b.log.Info("the printer can be read again", "printer", p.name, "was", p.errClass)
		p.errClass, p.errReason = "", ""
	}
	if c != nil {
		msg, _ := json.Marshal(countersPayload{Triggers: c.Triggers, TriggerBounces: c.TriggerBounces,
			PrintedLabels: c.PrintedLabels, Time: time.Now().UTC()})
		p.countMsg = msg
		b.pub.push(&message{topic: p.topic(topicCounters), payload: msg, retain: true})
	}
	p.mu.Unlock()
	if changedReach {
		b.publishStatus(p)
	}
}

// publishStatus publishes p's status if it differs from the last one published.
func (b *Bridge) publishStatus(p *printer) {
	p.ctl.mu.Lock()
	st := p.ctl.status
	p.ctl.mu.Unlock()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.read {
		return
	}
	sp := statusPayload{Reachable: p.reachable}
	if !p.reachable {
		sp.Reason = p.errReason
	}
	if st != nil {
		sp.statusFields = &statusFields{State: st.State, Printable: st.State.Printable(), RAGStatus: st.RAGStatus,
			Errors: nonNil(st.Errors), Ink: nonNil(st.Ink)}
	}
	key, _ := json.Marshal(sp)
	if string(key) == p.statusKey {
		return
	}
	p.statusKey = string(key)
	sp.Time = time.Now().UTC()
	p.statusMsg, _ = json.Marshal(sp)
	b.pub.push(&message{topic: p.topic(topicStatus), payload: p.statusMsg, retain: true})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
