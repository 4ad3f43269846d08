package mqttbridge

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/fence"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// Every command takes effect once, whatever its kind. printJob, deselect and trigger are held
// by the outbox under their id; abortPrint by the ledger under its id, recorded before it is
// sent; cancel and resend, which carry the id of the entry they act on, by the ledger under
// the delivery that carried them (see ledger.go). A redelivery answers the record and does
// nothing.

// The points at which a process may die while it handles a command, in order.
const (
	crashBeforeCommit = "before-commit" // nothing of the command is on disk yet
	crashAfterCommit  = "after-commit"  // its record is on disk; its result is not published
	crashAfterResult  = "after-result"  // its result is with the broker; its PUBACK is not
)

// withCrash has f called at each crash point with the command's kind (printJob, deselect,
// trigger, abortPrint, cancel, resend): the tests' way to kill the process exactly there.
func withCrash(f func(kind, point string)) Option {
	return func(o *options) error { o.crash = f; return nil }
}

func (b *Bridge) crashPoint(kind, point string) {
	if b.crash != nil && kind != "" {
		b.crash(kind, point)
	}
}

// crashKind names the kind of the command pb carries, for crashPoint; "" without a hook.
func (b *Bridge) crashKind(pb *paho.Publish) string {
	if b.crash == nil {
		return ""
	}
	cmd, err := parseCommand(path.Base(pb.Topic), pb.Payload)
	if err != nil {
		return ""
	}
	return kindName(cmd)
}

// kindName is a command's kind: its topic's last segment, or deselect for a printJob
// without a job.
func kindName(cmd command) string {
	if cmd.name == cmdPrintJob && cmd.job == nil {
		return "deselect"
	}
	return cmd.name
}

// entryKindName is the kind of the command that made an outbox entry.
func entryKindName(e outbox.Entry) string {
	switch e.Kind {
	case outbox.KindDeselect:
		return "deselect"
	case outbox.KindTrigger:
		return cmdTrigger
	}
	return cmdPrintJob
}

// newDelivery forgets the record of an earlier message under pb's packet identifier when pb
// is a first delivery: the broker reuses an identifier only once it has our PUBACK for the
// message that held it, which then comes no more.
func (b *Bridge) newDelivery(pb *paho.Publish) {
	if pb.QoS == 0 || pb.Duplicate() {
		return
	}
	for _, ctl := range b.ctls {
		if err := ctl.led.forgetDelivery(pb.PacketID); err != nil {
			// Harmless: the record stays until the identifier is reused again.
			b.log.Warn("forgetting an acknowledged delivery failed", "packet_id", pb.PacketID, "err", err)
		}
	}
}

// abortOnce sends an abortPrint unless its id is already recorded for p, which answers the
// record (duplicate, with current done, failed or unknown). It is recorded durably before it
// is sent, and the printer's later commands wait until it is answered (waitAbort), so it never
// runs after a command that came later: not when redelivered, and not when the process died
// while it was out (it is then unknown, and a person sends a new one if it is still wanted).
// Other printers' commands go on meanwhile. A ledger that cannot be read or written returns
// that error before anything is sent (handle tries again in place).
func (b *Bridge) abortOnce(ctx context.Context, p *printer, cmd command, rep reply) (chan struct{}, error) {
	resultTopic := p.topic(topicResult)
	led := p.ctl.led
	r, err := led.abort(p.remote, cmd.id)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	}
	if r != nil {
		current := r.State
		if current == "sending" {
			current = StateUnknown // its outcome could not be recorded
		}
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmdAbortPrint, State: StateDuplicate,
			Current: current, Time: time.Now()}), nil
	}
	b.crashPoint(cmdAbortPrint, crashBeforeCommit)
	rec := abortRecord{Printer: p.remote, ID: cmd.id, State: "sending", Time: time.Now().UTC()}
	if err := led.putAbort(rec); err != nil {
		return nil, fmt.Errorf("recording the abortPrint in the ledger: %w", err)
	}
	answered := make(chan struct{})
	b.mu.Lock()
	b.aborting[p] = answered
	b.mu.Unlock()
	done := make(chan struct{})
	b.aborts.Add(1)
	go func() {
		defer b.aborts.Done()
		b.crashPoint(cmdAbortPrint, crashAfterCommit)
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
		defer cancel()
		var call *fence.Call
		if b.pair != nil {
			// Sent, and retried, only while the pair's lease is certain: a bridge that lost
			// it must not abort the jobs the one after it sent.
			actx, call = b.pair.bound(actx)
			if call != nil {
				defer call.End()
			}
		}
		res := Result{ID: cmd.id, Command: cmdAbortPrint, State: StateDone}
		resp, err := p.ctl.client.Printers.AbortPrint(actx, p.remote)
		if err != nil {
			res.State, res.Error = StateFailed, err.Error()
		}
		if err != nil && b.pair != nil && !b.pair.held() {
			// Nothing is recorded or published: the next bridge answers the abortPrint
			// unknown. What this one knows goes to its log.
			begun, written, last := 0, 0, fence.NotWritten
			if call != nil {
				begun, written, last = call.Attempts()
			}
			b.log.Error("the bridge lease ended while an abortPrint was being sent; it is not sent again",
				"id", cmd.id, "printer", p.name, "requests", begun, "written", written, "last_request", last.String(), "err", err)
		}
		if len(resp) > 0 {
			res.Response = resp
		}
		res.Time = time.Now()
		rec.State, rec.Error, rec.Response, rec.Time = res.State, res.Error, res.Response, res.Time.UTC()
		if err := led.putAbort(rec); err != nil {
			// It stays sending in the file: a redelivery answers unknown, and so does the next start.
			b.log.Error("recording an abortPrint's outcome failed", "id", cmd.id, "state", res.State, "err", err)
		}
		published := b.result(resultTopic, rep, res)
		b.mu.Lock()
		delete(b.aborting, p)
		b.mu.Unlock()
		close(answered)
		// Not waited for here: Run waits for the aborts before it stops the publisher.
		go func() { <-published; close(done) }()
	}()
	return done, nil
}

// waitAbort waits until p's abortPrint in flight, if any, is answered: a later command of p
// must not reach the printer before it.
func (b *Bridge) waitAbort(p *printer) {
	b.mu.Lock()
	ch := b.aborting[p]
	b.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

// changeOnce runs cancel or resend on the entry cmd.id of p, once per MQTT message: the
// command is recorded under the packet identifier of the PUBLISH that carried it before it
// acts, and its result after; a redelivery of that PUBLISH (DUP set, same identifier, same
// topic and payload) answers the record, duplicate with current done or failed, and does
// nothing. A redelivery that finds the record without a result (the process died while the
// command acted) acts only if the entry is still as the command found it. An outbox or ledger
// that cannot be read, or a ledger that cannot be written, before it acts returns that error
// (handle tries again in place).
func (b *Bridge) changeOnce(p *printer, cmd command, rep reply, pb *paho.Publish) (chan struct{}, error) {
	resultTopic := p.topic(topicResult)
	led := p.ctl.led
	e, getErr := b.entryOf(p, cmd.id)
	if getErr != nil && !errors.Is(getErr, outbox.ErrNotFound) {
		return nil, fmt.Errorf("reading the outbox: %w", getErr)
	}
	found := getErr == nil
	recorded := pb.QoS > 0 // a QoS 0 message is never delivered again
	var d *deliveryRecord
	if recorded && pb.Duplicate() {
		var err error
		if d, err = led.delivery(pb.PacketID); err != nil {
			return nil, fmt.Errorf("reading the ledger: %w", err)
		}
		if d != nil && !d.matches(pb.Topic, pb.Payload) {
			d = nil // an older message's record; this one was not seen before
		}
	}
	if d != nil && d.Result == "" && d.SeenState != "" && found && tookEffect(cmd.name, d, e) {
		d.Result = StateDone
		if err := led.putDelivery(pb.PacketID, *d); err != nil {
			return nil, fmt.Errorf("recording the result in the ledger: %w", err)
		}
	}
	if d != nil && d.Result != "" {
		res := Result{ID: cmd.id, Command: cmd.name, State: StateDuplicate, Current: d.Result, Error: d.Error, Time: time.Now()}
		if found {
			res.Attempts = e.Attempts
		}
		return b.result(resultTopic, rep, res), nil
	}

	b.crashPoint(cmd.name, crashBeforeCommit)
	sum := sha256.Sum256(pb.Payload)
	rec := deliveryRecord{Topic: pb.Topic, Sum: sum[:], Time: time.Now().UTC()}
	if found {
		rec.SeenState, rec.SeenAttempts = string(e.State), e.Attempts
	}
	if recorded {
		if err := led.putDelivery(pb.PacketID, rec); err != nil {
			return nil, fmt.Errorf("recording the command in the ledger: %w", err)
		}
	}
	res := b.changeEntry(p, cmd)
	if recorded {
		rec.Result, rec.Error = res.State, res.Error
		if err := led.putDelivery(pb.PacketID, rec); err != nil {
			// The record stays without a result: a redelivery looks at the entry instead.
			b.log.Error("recording a result failed", "id", cmd.id, "err", err)
		}
	}
	b.crashPoint(cmd.name, crashAfterCommit)
	return b.result(resultTopic, rep, res), nil
}

// tookEffect reports whether the command recorded in d changed the entry, now e, which a
// process that died before recording the result cannot say itself. A resend moves an unknown
// entry to pending, after which it is never unknown with the same attempts again; a cancel
// leaves it cancelled.
func tookEffect(name string, d *deliveryRecord, e outbox.Entry) bool {
	if name == cmdCancel {
		return e.State == outbox.Cancelled && d.SeenState != string(outbox.Cancelled)
	}
	return string(e.State) != d.SeenState || e.Attempts != d.SeenAttempts
}

// entryOf returns the outbox entry of the command id of printer p (ids.go); another
// printer's entry is not found.
func (b *Bridge) entryOf(p *printer, id string) (outbox.Entry, error) {
	e, err := lookupCommand(p, id)
	if err == nil && e.Printer != p.remote {
		return outbox.Entry{}, outbox.ErrNotFound
	}
	return e, err
}

// changeEntry runs cancel or resend on the entry cmd.id of p. A command naming the attempts
// it saw acts only while the entry still has them, as HTTP's If-Match does.
func (b *Bridge) changeEntry(p *printer, cmd command) Result {
	res := Result{ID: cmd.id, Command: cmd.name, State: StateDone}
	e, err := b.entryOf(p, cmd.id)
	switch {
	case err != nil:
	case cmd.attempts != nil && e.Attempts != *cmd.attempts:
		res.State, res.Attempts = StateFailed, e.Attempts
		res.Error = fmt.Sprintf("the command has %d attempts, not %d: it changed since; nothing done", e.Attempts, *cmd.attempts)
		res.Time = time.Now()
		return res
	case cmd.name == cmdCancel:
		err = p.ctl.ob.Cancel(e.ID)
	default:
		err = p.ctl.ob.Resend(e.ID)
	}
	switch {
	case errors.Is(err, outbox.ErrNotFound):
		res.State, res.Error = StateFailed, "no command with this id for this printer"
	case err != nil:
		res.State, res.Error = StateFailed, callerError(err, e.ID, cmd.id)
	}
	if now, gerr := b.entryOf(p, cmd.id); gerr == nil {
		res.Attempts = now.Attempts
	}
	res.Time = time.Now()
	return res
}
