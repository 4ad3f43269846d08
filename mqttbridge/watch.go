package mqttbridge

import (
	"context"
	"encoding/json"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
)

// statusPayload is P/status: reachable always (the printer's counters and the controller's
// /status both read); the status fields while /status answers.
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

// statusReadTimeout bounds one read of a controller's /status, retries included: a /status
// that hangs makes the printers unreachable, with the reason, rather than leaving their last
// status standing. It is ten polls, but never below minStatusReadTimeout, so that a loaded
// controller is not called unreachable for answering in a second.
func statusReadTimeout(poll time.Duration) time.Duration {
	return max(10*poll, minStatusReadTimeout)
}

const minStatusReadTimeout = 2 * time.Second

// watchStatus reads the controller's /status until ctx ends, one read per poll, each bounded
// by statusReadTimeout. While it fails, the printers' status carries no status fields, says
// reachable:false and names the failed read in its reason.
func (b *Bridge) watchStatus(ctx context.Context, ctl *controller) {
	failures := 0
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(ctx, statusReadTimeout(b.cfg.PollInterval))
		st, err := ctl.client.Printers.Status(rctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			b.statusFailed(ctl, err)
		} else {
			failures = 0
			b.statusRead(ctl, st)
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
		cc := *c
		p.counters = &cc
		msg, _ := json.Marshal(countersPayload{Triggers: c.Triggers, TriggerBounces: c.TriggerBounces,
			PrintedLabels: c.PrintedLabels, Time: time.Now().UTC()})
		p.countMsg = msg
		b.pub.push(&message{topic: p.topic(topicCounters), payload: msg, retain: true})
	}
	p.mu.Unlock()
	if c != nil && b.spb != nil {
		b.spb.changed(p)
	}
	if changedReach {
		b.publishStatus(p)
	}
}

// publishStatus publishes p's status if it differs from the last one published.
func (b *Bridge) publishStatus(p *printer) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.read {
		return
	}
	reachable, _, reason, st := p.readState()
	sp := statusPayload{Reachable: reachable, Reason: reason}
	if st != nil {
		sp.statusFields = &statusFields{State: st.State, Printable: st.State.Printable(), RAGStatus: st.RAGStatus,
			Errors: nonNil(st.Errors), Ink: nonNil(st.Ink)}
	}
	key, _ := json.Marshal(sp)
	if string(key) == p.statusKey {
		return
	}
	p.statusKey = string(key)
	if b.spb != nil {
		b.spb.changed(p)
	}
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
