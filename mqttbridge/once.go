package mqttbridge

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/eclipse/paho.golang/paho"
	"github.com/labelprinter/go-labelprinter/internal/fence"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// Every command takes effect once, whatever its kind, by an identity the caller gives it,
// never the transport's: printJob, deselect and trigger are held by the outbox under their id;
// abortPrint by the ledger under its id, recorded before it is sent; cancel and resend name
// the entry's id and the attempts the caller saw, and act only while the entry still has them,
// so a repetition (a redelivery, or a publisher that sends the message again under a new
// packet identifier after a lost PUBACK) finds the entry changed and does nothing.

// The points at which a process may die while it handles a command, in order.
const (
	crashBeforeCommit = "before-commit" // nothing of the command is on disk yet
	crashAfterCommit  = "after-commit"  // its record is on disk; its result is not published
	crashAfterResult  = "after-result"  // its result is with the broker; its PUBACK is not
	// crashAfterFinal is where a print command's entry has its final (or unknown) state
	// committed and its result is not published yet (reports.go).
	crashAfterFinal = "after-final"
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
// is sent, and the printer's later commands wait until it is answered (work), so it never
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
			// Its failure is not the abortPrint's outcome (the request may have been written),
			// and a result would have the command acknowledged: the broker would not give it
			// to the next bridge, which answers it unknown from the shared ledger. done is
			// never closed, so the command stays unacknowledged.
			b.mu.Lock()
			delete(b.aborting, p)
			b.mu.Unlock()
			close(answered)
			return
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

// change runs cancel or resend on the entry cmd.id of p, naming the attempts the caller saw
// (required; parseCommand checks it): it acts only while the entry still has them and is in a
// state the command applies to, as HTTP's If-Match does. A command that finds the change it
// would make already made (a cancel finds the entry cancelled with those attempts; a resend
// finds it resent: pending with them, or past them) is a repetition and is answered duplicate
// with current done; anything else that does not match is answered failed with the entry's
// attempts. A cancel naming 0 attempts of an id that p's outbox does not hold leaves a
// tombstone in the ledger (enqueueOnce answers the job cancelled when it comes). An outbox or
// ledger that cannot be read, or a tombstone that cannot be written, returns that error
// (handle tries again in place).
func (b *Bridge) change(p *printer, cmd command, rep reply) (chan struct{}, error) {
	resultTopic := p.topic(topicResult)
	n := *cmd.attempts
	res := Result{ID: cmd.id, Command: cmd.name, State: StateDone}
	e, err := b.entryOf(p, cmd.id)
	switch {
	case errors.Is(err, outbox.ErrPruned):
		res.State, res.Error = StateFailed, callerError(err, outboxKey(p, cmd.id), cmd.id)
	case errors.Is(err, outbox.ErrNotFound) && cmd.name == cmdCancel && n == 0:
		return b.cancelAhead(p, cmd, rep)
	case errors.Is(err, outbox.ErrNotFound):
		res.State, res.Error = StateFailed, "no command with this id for this printer"
	case err != nil:
		return nil, fmt.Errorf("reading the outbox: %w", err)
	case repeated(cmd.name, n, e):
		res.State, res.Current, res.Attempts = StateDuplicate, StateDone, e.Attempts
	case e.Attempts != n:
		res.State, res.Attempts = StateFailed, e.Attempts
		res.Error = fmt.Sprintf("the command has %d attempts, not %d: it changed since; nothing done", e.Attempts, n)
	default:
		b.crashPoint(cmd.name, crashBeforeCommit)
		if cmd.name == cmdCancel {
			err = p.ctl.ob.Cancel(e.ID)
		} else {
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
		b.crashPoint(cmd.name, crashAfterCommit)
	}
	res.Time = time.Now()
	return b.result(resultTopic, rep, res), nil
}

// repeated reports whether a cancel or resend naming n attempts finds entry e as that command
// leaves it. A resend moves an unknown entry with n attempts to pending, and each request
// after counts one more, so the entry is never unknown with n attempts again; a cancel leaves
// it cancelled with them. An entry is never unknown with 0 attempts, so a resend naming 0
// matches nothing.
func repeated(name string, n int, e outbox.Entry) bool {
	if name == cmdCancel {
		return e.State == outbox.Cancelled && e.Attempts == n
	}
	return n > 0 && (e.Attempts > n || e.Attempts == n && e.State == outbox.Pending)
}

// cancelAhead answers a cancel naming 0 attempts of an id p's outbox does not hold: it leaves
// a tombstone for p and the id, so the command that comes later with it is answered cancelled
// and never sent. A tombstone already there answers duplicate with current done.
func (b *Bridge) cancelAhead(p *printer, cmd command, rep reply) (chan struct{}, error) {
	res := Result{ID: cmd.id, Command: cmd.name, State: StateDone}
	r, err := p.ctl.led.cancelled(p.remote, cmd.id)
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the ledger: %w", err)
	case r != nil:
		res.State, res.Current = StateDuplicate, StateDone
	default:
		if err := checkKey(p, cmd.id); err != nil {
			res.State, res.Error = StateInvalid, err.Error()
			break
		}
		b.crashPoint(cmd.name, crashBeforeCommit)
		if err := p.ctl.led.putCancel(cancelRecord{Printer: p.remote, ID: cmd.id, Time: time.Now().UTC()}); err != nil {
			return nil, fmt.Errorf("recording the cancel in the ledger: %w", err)
		}
		b.crashPoint(cmd.name, crashAfterCommit)
	}
	res.Time = time.Now()
	return b.result(p.topic(topicResult), rep, res), nil
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
