package mqttbridge

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// This file holds the promise that the result of every outbox entry reaches the broker. The
// outbox commits an entry's new state and then hands it to entryChanged, which publishes its
// result; a bridge killed between the commit and the broker's PUBACK loses that result, and
// no command is left with the broker to bring it back. So each result the broker took is
// marked (the entry's state and attempts, written in batches reportEvery apart), and at start
// the bridge publishes again the result of every entry in a state its caller hears of (sent,
// rejected, unknown, expired, cancelled) that has no mark of that state: at least once, and
// twice when the bridge died after the broker took it and before its mark was written.
// Entries settled before the ledger first kept marks are taken as reported.
//
// The outbox keeps the marks itself (outbox.Acknowledge), beside the index of the entries not
// marked in their current state (outbox.Unacknowledged), a file's or a queue's in PostgreSQL,
// so a start reads those entries alone and not the whole history. The ledger keeps a mark only
// when the outbox could not take it (closed already, at the end of a stop), and those of
// versions before: a start moves them into the outbox and lets them go.

// reportEvery is the least time between two writes of marks.
const reportEvery = 100 * time.Millisecond

// reports is what the bridge knows of its results' way to the broker.
type reports struct {
	mu sync.Mutex
	// pushed holds the results this process published and the broker has not taken yet.
	pushed map[entryKey]string
	// due holds the results the broker took, by controller and entry ID, still to be marked.
	due  map[*controller]map[string]outbox.Ack
	wake chan struct{}
}

func newReports() *reports {
	return &reports{pushed: map[entryKey]string{}, due: map[*controller]map[string]outbox.Ack{}, wake: make(chan struct{}, 1)}
}

// reportMark is what the ledger keeps of the result of e's state.
func reportMark(e outbox.Entry) string {
	return ackMark(outbox.Ack{ID: e.ID, State: e.State, Attempts: e.Attempts})
}

func ackMark(a outbox.Ack) string { return fmt.Sprintf("%s/%d", a.State, a.Attempts) }

// report publishes the result of e's new state on P/result (and rep) and marks it in the
// ledger once the broker took it.
func (b *Bridge) report(ctl *controller, p *printer, rep reply, e outbox.Entry) {
	b.crashPoint(entryKindName(e), crashAfterFinal)
	b.publishReport(ctl, p, rep, e)
}

func (b *Bridge) publishReport(ctl *controller, p *printer, rep reply, e outbox.Entry) {
	key, ack := entryKey{ctl, e.ID}, outbox.Ack{ID: e.ID, State: e.State, Attempts: e.Attempts}
	b.reps.mu.Lock()
	b.reps.pushed[key] = ackMark(ack)
	b.reps.mu.Unlock()
	b.publishResult(p.topic(topicResult), rep, entryResult(e), func() { b.reported(key, ack) })
}

// reported records that the broker took the result ack of the entry key.
func (b *Bridge) reported(key entryKey, ack outbox.Ack) {
	b.reps.mu.Lock()
	if b.reps.pushed[key] == ackMark(ack) {
		delete(b.reps.pushed, key)
	}
	due := b.reps.due[key.ctl]
	if due == nil {
		due = map[string]outbox.Ack{}
		b.reps.due[key.ctl] = due
	}
	due[key.id] = ack
	b.reps.mu.Unlock()
	select {
	case b.reps.wake <- struct{}{}:
	default:
	}
}

// markReports writes the marks due, at most every reportEvery, until ctx ends, and once more
// then: it is stopped after the publisher, so the last results' marks are written too.
func (b *Bridge) markReports(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			b.flushReports()
			return
		case <-b.reps.wake:
		}
		b.flushReports()
		select {
		case <-ctx.Done():
			b.flushReports()
			return
		case <-time.After(reportEvery):
		}
	}
}

// flushReports writes the marks due. Marks that cannot be written are given up: their results
// are published again at the next start.
func (b *Bridge) flushReports() {
	b.reps.mu.Lock()
	due := b.reps.due
	b.reps.due = map[*controller]map[string]outbox.Ack{}
	b.reps.mu.Unlock()
	for ctl, acks := range due {
		if ctl.led.outboxMarks() {
			list := make([]outbox.Ack, 0, len(acks))
			for _, a := range acks {
				list = append(list, a)
			}
			if ctl.ob.Acknowledge(list...) == nil {
				continue
			}
			// Closed already, at the end of a stop: the ledger keeps them until the next start.
		}
		marks := make(map[string]string, len(acks))
		for id, a := range acks {
			marks[id] = ackMark(a)
		}
		if err := ctl.led.putReports(marks); err != nil {
			b.log.Warn("recording results as published failed; they are published again at the next start",
				"url", ctl.url, "results", len(marks), "err", err)
		}
	}
}

// republish publishes again the results of ctl's entries that have no mark of their state
// (see above), before any command is taken, and forgets the marks of entries the outbox no
// longer holds. A result this process published already (an entry the outbox found being
// sent when it opened, now unknown) is not published twice. It reads the entries not marked in
// the outbox alone: an entry the ledger marks (or settled before marks were kept) is marked in
// the outbox, and the ledger's marks are let go.
func (b *Bridge) republish(ctl *controller) error {
	marks, since, err := ctl.led.reports()
	if err != nil {
		return fmt.Errorf("reading the ledger: %w", err)
	}
	entries, err := ctl.ob.Unacknowledged()
	if err != nil {
		return fmt.Errorf("reading the outbox: %w", err)
	}
	held := make(map[string]bool, len(entries))
	var acks []outbox.Ack
	n := 0
	for _, e := range entries {
		held[e.ID] = true
		if reported(e.State) && (e.Updated.Before(since) || marks[e.ID] == reportMark(e)) {
			acks = append(acks, outbox.Ack{ID: e.ID, State: e.State, Attempts: e.Attempts})
			continue
		}
		p := ctl.byRemote[e.Printer]
		if p == nil || !reported(e.State) {
			continue
		}
		b.reps.mu.Lock()
		pushed := b.reps.pushed[entryKey{ctl, e.ID}] == reportMark(e)
		b.reps.mu.Unlock()
		if !pushed {
			b.publishReport(ctl, p, reply{}, e)
			n++
		}
	}
	if n > 0 {
		b.log.Info("publishing again the results the broker may not have taken before the bridge stopped", "url", ctl.url, "results", n)
	}
	if ctl.led.outboxMarks() {
		if err := ctl.ob.Acknowledge(acks...); err != nil {
			return fmt.Errorf("marking the outbox: %w", err)
		}
		// The outbox holds every mark now, or the entry is published again above.
		held = nil
	}
	var gone []string
	for id := range marks {
		if !held[id] {
			gone = append(gone, id)
		}
	}
	if len(gone) > 0 {
		return ctl.led.dropReports(gone)
	}
	return nil
}
