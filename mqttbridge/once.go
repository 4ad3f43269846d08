package mqttbridge

import (
	"context"
	"path"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// Every command takes effect once, whatever its kind. printJob, deselect and trigger are held
// by the outbox under their id; abortPrint by the ledger under its id, recorded before it is
// sent. A redelivery answers the record and does nothing.

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

// abortOnce sends an abortPrint unless its id is already recorded for p, which answers the
// record (duplicate, with current done, failed or unknown). It is recorded durably before it
// is sent and runs before any later command is taken, so it never runs after a command that
// came later: not when redelivered, and not when the process died while it was out (it is
// then unknown, and a person sends a new one if it is still wanted).
func (b *Bridge) abortOnce(ctx context.Context, p *printer, cmd command, rep reply) chan struct{} {
	resultTopic := p.topic(topicResult)
	led := p.ctl.led
	r, err := led.abort(p.remote, cmd.id)
	if err != nil {
		b.log.Error("reading the ledger failed; the abortPrint stays with the broker", "id", cmd.id, "err", err)
		return nil
	}
	if r != nil {
		current := r.State
		if current == "sending" {
			current = StateUnknown // another delivery of it is out, or its outcome could not be recorded
		}
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmdAbortPrint, State: StateDuplicate,
			Current: current, Time: time.Now()})
	}
	b.crashPoint(cmdAbortPrint, crashBeforeCommit)
	rec := abortRecord{Printer: p.remote, ID: cmd.id, State: "sending", Time: time.Now().UTC()}
	if err := led.putAbort(rec); err != nil {
		b.log.Error("recording an abortPrint failed; it stays with the broker", "id", cmd.id, "err", err)
		return nil
	}
	b.crashPoint(cmdAbortPrint, crashAfterCommit)
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), abortTimeout)
	defer cancel()
	res := Result{ID: cmd.id, Command: cmdAbortPrint, State: StateDone}
	resp, err := p.ctl.client.Printers.AbortPrint(actx, p.remote)
	if err != nil {
		res.State, res.Error = StateFailed, err.Error()
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
	return b.result(resultTopic, rep, res)
}
