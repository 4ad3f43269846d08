package mqttbridge

import (
	"encoding/json"
	"sort"
	"sync"
	"time"

	"github.com/labelprinter/go-labelprinter/outbox"
)

// This file holds P/outbox: what each printer's commands wait for, retained, so a person sees
// the entries that need them (unknown) and those still to go (pending) while the outbox file
// is held by the bridge and cannot be read. It is kept from the outbox's own change
// notifications, entry by entry, so a publication costs the entries still open, not the whole
// file.

const topicOutbox = "outbox" // P/outbox, retained

// outboxListMax bounds the ids an outbox message lists per state; the rest are counted.
const outboxListMax = 50

// outboxGap is the least time between two P/outbox messages of one printer: the first change
// after a quiet spell is published at once, and the changes within outboxGap after it
// together in one message at its end.
const outboxGap = 200 * time.Millisecond

// OutboxState is the payload of P/outbox: how many of the printer's commands the outbox holds
// in each state, and the oldest unknown and pending ones.
type OutboxState struct {
	// Counts has every state of an entry, zero or not: pending, sending, sent, rejected,
	// unknown, expired and cancelled.
	Counts map[string]int `json:"counts"`
	// Unknown lists the unknown entries, the longest unknown first, at most 50; UnknownMore
	// counts the rest. Each waits for a person to send resend or cancel.
	Unknown     []OutboxEntry `json:"unknown"`
	UnknownMore int           `json:"unknownMore"`
	// Pending lists the pending entries, the longest waiting first, at most 50; PendingMore
	// counts the rest.
	Pending     []OutboxEntry `json:"pending"`
	PendingMore int           `json:"pendingMore"`
	// Time is when the message was made; ages count up to it.
	Time time.Time `json:"time"`
}

// OutboxEntry is one entry listed on P/outbox.
type OutboxEntry struct {
	ID string `json:"id"`
	// Since is when a pending entry was enqueued, or when an unknown one became unknown;
	// AgeSeconds is the whole seconds from then to the message's time.
	Since      time.Time `json:"since"`
	AgeSeconds int64     `json:"ageSeconds"`
	// Attempts is the requests sent for it: what a cancel or resend of it names.
	Attempts int `json:"attempts"`
}

// openEntry is an entry that is not final, as the view keeps it.
type openEntry struct {
	id       string // the caller's id (ids.go), which P/outbox shows
	state    outbox.State
	since    time.Time
	attempts int
}

// outboxView follows one controller's outbox: its open entries by printer, and how many
// entries of each printer settled in each final state.
type outboxView struct {
	mu      sync.Mutex
	open    map[string]map[string]openEntry // remote printer -> id -> entry
	opened  map[string]map[outbox.State]int // remote printer -> open state -> entries in open
	settled map[string]map[outbox.State]int // remote printer -> final state -> count
	pub     map[string]*outboxPub           // remote printer -> its publication
}

// outboxPub keeps one printer's P/outbox to one message in the publisher's queue at a time:
// changes made while it is there are published by the next one, as soon as it is sent.
type outboxPub struct {
	queued bool // a message is in the publisher's queue
	dirty  bool // something changed since that message was made
}

// newOutboxView reads ob's counts and its open entries once, not the settled ones, which the
// outbox counts for it. The outbox reports only the changes it commits afterwards, and before
// Run it has committed none but turning the entries Open found Sending into Unknown, which
// List already shows.
func newOutboxView(ob *outbox.Outbox) (*outboxView, error) {
	v := &outboxView{open: map[string]map[string]openEntry{}, opened: map[string]map[outbox.State]int{}, settled: map[string]map[outbox.State]int{}, pub: map[string]*outboxPub{}}
	counts, err := ob.Counts()
	if err != nil {
		return nil, err
	}
	entries, err := ob.List(outbox.Pending, outbox.Sending, outbox.Unknown)
	if err != nil {
		return nil, err
	}
	for printer, byState := range counts {
		for st, n := range byState {
			if final(st) {
				if v.settled[printer] == nil {
					v.settled[printer] = map[outbox.State]int{}
				}
				v.settled[printer][st] = n
			}
		}
	}
	for _, e := range entries {
		v.apply(e)
	}
	return v, nil
}

func final(s outbox.State) bool {
	return s != outbox.Pending && s != outbox.Sending && s != outbox.Unknown
}

// apply records e's new state. Final states never change, so an entry is counted in one
// once, when it leaves the open ones. The open entries are counted by state as they change,
// so that counts, which every update of a printer's Sparkplug metrics reads, does not walk
// them.
func (v *outboxView) apply(e outbox.Entry) {
	open := v.open[e.Printer]
	opened := v.opened[e.Printer]
	if opened == nil {
		opened = map[outbox.State]int{}
		v.opened[e.Printer] = opened
	}
	if was, ok := open[e.ID]; ok {
		opened[was.state]--
	}
	if !final(e.State) {
		if open == nil {
			open = map[string]openEntry{}
			v.open[e.Printer] = open
		}
		// A pending entry waits since it was enqueued, retries to a printer that is down
		// included; an unknown one waits for a person since it became unknown.
		since := e.Enqueued
		if e.State == outbox.Unknown {
			since = e.Updated
		}
		open[e.ID] = openEntry{id: callerID(e), state: e.State, since: since, attempts: e.Attempts}
		opened[e.State]++
		return
	}
	delete(open, e.ID)
	if v.settled[e.Printer] == nil {
		v.settled[e.Printer] = map[outbox.State]int{}
	}
	v.settled[e.Printer][e.State]++
}

// counts is every state's count of printer remote's entries, zero or not. The caller holds
// v.mu.
func (v *outboxView) counts(remote string) map[outbox.State]int {
	n := map[outbox.State]int{}
	for _, st := range []outbox.State{outbox.Pending, outbox.Sending, outbox.Sent, outbox.Rejected, outbox.Unknown, outbox.Expired, outbox.Cancelled} {
		n[st] = v.count(remote, st)
	}
	return n
}

// count is printer remote's count of entries in state st. The caller holds v.mu.
func (v *outboxView) count(remote string, st outbox.State) int {
	return v.settled[remote][st] + v.opened[remote][st]
}

// snapshot is the P/outbox payload of printer remote at now. It keeps the oldest
// outboxListMax entries of each listed state as it walks the open ones, not a list of them
// all: among 10,000 open entries that list and its sort allocated 1.6 MB, five times a second.
func (v *outboxView) snapshot(remote string, now time.Time) []byte {
	s := OutboxState{Counts: map[string]int{}, Time: now}
	for st, n := range v.counts(remote) {
		s.Counts[string(st)] = n
	}
	var unknown, pending oldestList
	for _, e := range v.open[remote] {
		switch e.state {
		case outbox.Unknown:
			unknown.add(e)
		case outbox.Pending:
			pending.add(e)
		}
	}
	s.Unknown, s.UnknownMore = unknown.list(now)
	s.Pending, s.PendingMore = pending.list(now)
	b, _ := json.Marshal(s) // maps, strings and times: nothing that fails
	return b
}

// oldestList keeps the outboxListMax longest-waiting entries added to it and counts the others.
// kept is a heap whose root is the entry that waited least of those kept, the first to go.
type oldestList struct {
	kept []openEntry
	n    int
}

// waitedLonger orders entries by how long they waited, then by id.
func waitedLonger(a, b openEntry) bool {
	if !a.since.Equal(b.since) {
		return a.since.Before(b.since)
	}
	return a.id < b.id
}

func (l *oldestList) add(e openEntry) {
	l.n++
	if len(l.kept) < outboxListMax {
		l.kept = append(l.kept, e)
		l.up(len(l.kept) - 1)
		return
	}
	if !waitedLonger(e, l.kept[0]) {
		return
	}
	l.kept[0] = e
	l.down(0)
}

// up and down keep the heap: a parent waited less than its children.
func (l *oldestList) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !waitedLonger(l.kept[parent], l.kept[i]) {
			return
		}
		l.kept[parent], l.kept[i] = l.kept[i], l.kept[parent]
		i = parent
	}
}

func (l *oldestList) down(i int) {
	for {
		least := i
		if c := 2*i + 1; c < len(l.kept) && waitedLonger(l.kept[least], l.kept[c]) {
			least = c
		}
		if c := 2*i + 2; c < len(l.kept) && waitedLonger(l.kept[least], l.kept[c]) {
			least = c
		}
		if least == i {
			return
		}
		l.kept[least], l.kept[i] = l.kept[i], l.kept[least]
		i = least
	}
}

// list is the entries kept, the longest waiting first, as P/outbox shows them at now, and the
// count of the others.
func (l *oldestList) list(now time.Time) ([]OutboxEntry, int) {
	sort.Slice(l.kept, func(i, j int) bool { return waitedLonger(l.kept[i], l.kept[j]) })
	es := make([]OutboxEntry, 0, len(l.kept))
	for _, e := range l.kept {
		es = append(es, OutboxEntry{ID: e.id, Since: e.since, AgeSeconds: int64(now.Sub(e.since) / time.Second), Attempts: e.attempts})
	}
	return es, l.n - len(l.kept)
}

// outboxChanged follows a committed change of ctl's outbox: an entry that became unknown is
// logged, since it waits for a person, and its printer's P/outbox is published again.
func (b *Bridge) outboxChanged(ctl *controller, e outbox.Entry) {
	if e.State == outbox.Unknown {
		b.log.Warn("a command's outcome is unknown: check the printer, then send resend or cancel",
			"controller", ctl.url, "printer", e.Printer, "id", callerID(e), "kind", e.Kind, "err", e.Error)
	}
	ctl.view.mu.Lock()
	ctl.view.apply(e)
	ctl.view.mu.Unlock()
	if p := ctl.byRemote[e.Printer]; p != nil {
		b.publishOutbox(p)
		if b.spb != nil {
			if e.State == outbox.Sent {
				b.spb.jobSent(p, e)
			}
			b.spb.changed(p)
		}
	}
}

// publishOutbox queues p's P/outbox, unless a message for it is queued already or was sent
// less than outboxGap ago: then the next one follows that, with every change made meanwhile.
func (b *Bridge) publishOutbox(p *printer) {
	v := p.ctl.view
	v.mu.Lock()
	defer v.mu.Unlock()
	ps := v.pub[p.remote]
	if ps == nil {
		ps = &outboxPub{}
		v.pub[p.remote] = ps
	}
	if ps.queued {
		ps.dirty = true
		return
	}
	ps.queued, ps.dirty = true, false
	done := make(chan struct{})
	b.pub.push(&message{topic: p.topic(topicOutbox), payload: v.snapshot(p.remote, time.Now()), retain: true, done: done})
	go func() {
		<-done
		// Changes made within outboxGap of a message join the next one: a burst of commands
		// then costs a few messages a second per printer, not three per command, in the
		// queue that the commands' own results and acknowledgements wait in.
		select {
		case <-time.After(outboxGap):
		case <-b.pub.stopped:
			return // the bridge stopped: the last one published stays retained
		}
		v.mu.Lock()
		ps.queued = false
		again := ps.dirty
		v.mu.Unlock()
		if again {
			b.publishOutbox(p)
		}
	}()
}
