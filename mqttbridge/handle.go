package mqttbridge

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/eclipse/paho.golang/paho"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/outbox"
)

// onCommand takes one PUBLISH on the command filter, unless the bridge is stopping (then it
// stays with the broker): it queues it on its printer, whose worker handles it in turn
// (commandorder.go), and returns at once, so paho's delivery goroutine never waits on a
// command. Each is acknowledged once its first result is with the broker, by a goroutine of
// its own; MQTT 5 §4.6 and paho's acknowledgement tracker keep the acknowledgements in
// arrival order.
func (b *Bridge) onCommand(ctx context.Context, cl *paho.Client, pb *paho.Publish) {
	b.log.Debug("command received", "topic", pb.Topic, "bytes", len(pb.Payload))
	if b.stopping.Load() {
		return
	}
	b.queue(b.commandPrinter(pb.Topic), heldCommand{ctx: ctx, cl: cl, pb: keepCommand(pb)})
}

// taking reports whether commands are executed: not once the bridge stops, nor by a bridge
// whose lease may have run out (fencing). b.mu is held.
func (b *Bridge) taking() bool {
	return !b.stopped && (b.pair == nil || b.pair.held())
}

// execute handles pb, which came on cl's connection, and acknowledges it once its first result
// is with the broker. Its printer's worker runs it (commandorder.go).
func (b *Bridge) execute(ctx context.Context, cl *paho.Client, pb *paho.Publish, origin reply) {
	kind := b.crashKind(pb)
	done := b.handle(ctx, pb, origin)
	if done == nil {
		return
	}
	ack := ackOnly(pb) // not pb: its payload and properties are not needed while it waits
	b.ackers.Add(1)
	go func() {
		defer b.ackers.Done()
		if b.await(cl, done) {
			b.crashPoint(kind, crashAfterResult)
			b.ack(cl, ack)
		}
	}()
}

// ack acknowledges pb on the connection it came from, unless that connection is gone (the
// broker sends it again on the next one, and the id makes it a no-op).
func (b *Bridge) ack(cl *paho.Client, pb *paho.Publish) {
	select {
	case <-cl.Done():
		return
	default:
	}
	_ = cl.Ack(pb)
}

// handle executes one command and returns a channel closed once the command may be
// acknowledged: when its first result (queued, duplicate, invalid; done or failed for the
// others) is with the broker. nil leaves the command unacknowledged, to be delivered again.
// origin is where its results go besides P/result (a Sparkplug device's Command/LastResult).
func (b *Bridge) handle(ctx context.Context, pb *paho.Publish, origin reply) chan struct{} {
	segment, name, ok := parseCommandTopic(b.cfg.TopicPrefix, pb.Topic)
	if !ok {
		return closed() // not a command topic: nothing to do
	}
	rep := origin
	resultTopic := commandResultTopic(b.cfg.TopicPrefix, segment)
	replyOK, capErr := b.cfg.Limits.checkCaps(pb)
	if !replyOK {
		// Over the cap on its Response Topic or Correlation Data: answered on P/result alone.
		cmd, _ := parseCommand(name, pb.Payload)
		b.log.Info("command refused", "topic", pb.Topic, "err", capErr)
		return b.result(resultTopic, reply{spb: origin.spb}, Result{ID: cmd.id, Command: clip(name), State: StateInvalid, Error: capErr.Error()})
	}
	if pb.Properties != nil && pb.Properties.ResponseTopic != "" {
		rep = reply{topic: pb.Properties.ResponseTopic, corr: pb.Properties.CorrelationData, spb: origin.spb}
		// A caller cannot steer the bridge's output: such a command is refused on P/result.
		if err := checkResponseTopic(b.cfg.TopicPrefix, rep.topic); err != nil {
			cmd, _ := parseCommand(name, pb.Payload)
			b.log.Info("command refused", "topic", pb.Topic, "err", err)
			return b.result(resultTopic, reply{spb: origin.spb}, Result{ID: cmd.id, Command: clip(name), State: StateInvalid, Error: invalidf("%v; nothing was done", err).Error()})
		}
	}
	cmd, err := parseCommand(name, pb.Payload)
	if err == nil {
		err = capErr
	}
	if err == nil {
		err = b.cfg.Limits.checkIDCap(cmd.id)
	}
	b.log.Debug("command", "topic", pb.Topic, "id", cmd.id, "dup", pb.Duplicate())
	p := b.printers[segment]
	if err == nil && p == nil {
		err = invalidf("no printer %q on this bridge", clip(segment))
	}
	if err == nil && p.remote == "" && (name == cmdTrigger || name == cmdAbortPrint) {
		err = invalidf("%s needs a named printer; %q uses the single-printer paths", name, p.name)
	}
	if err != nil {
		b.log.Info("command refused", "topic", pb.Topic, "err", err)
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: clip(name), State: StateInvalid, Error: err.Error()})
	}
	switch name {
	case cmdPrintJob, cmdTrigger:
		return b.enqueue(ctx, p, cmd, rep)
	case cmdCancel, cmdResend:
		// A ledger or outbox that cannot be read or written is tried again in place, as enqueue does.
		return b.inPlace(ctx, p, cmd, "the outbox or the ledger cannot be read or written; the command waits and is tried again",
			func() (chan struct{}, error) { return b.change(p, cmd, rep) })
	default: // abortPrint: sent at once, beside the queue, before any later command
		return b.inPlace(ctx, p, cmd, "the ledger failed (a read or a write, as err says); the command waits and is tried again",
			func() (chan struct{}, error) { return b.abortOnce(ctx, p, cmd, rep) })
	}
}

func closed() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// enqueueOnce commits a printJob or trigger to the outbox and waits until its queued result
// is with the broker. A known id adds nothing and is answered duplicate; an id a cancel came
// for first (cancelAhead) adds nothing and is answered cancelled. An outbox or ledger that
// cannot be read or written returns that error (enqueue tries again).
func (b *Bridge) enqueueOnce(ctx context.Context, p *printer, cmd command, rep reply) (chan struct{}, error) {
	ctl := p.ctl
	resultTopic := p.topic(topicResult)
	if err := checkKey(p, cmd.id); err != nil {
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmd.name, State: StateInvalid, Error: err.Error()}), nil
	}
	known := b.enqueueReads(p, cmd.id)
	e, err := known.entry, known.err
	switch {
	case errors.Is(err, outbox.ErrPruned):
		// Settled and pruned long ago: the id is still held, so nothing is sent again.
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmd.name, State: StateDuplicate,
			Current: StatePruned, Time: time.Now()}), nil
	case err == nil:
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmd.name, State: StateDuplicate,
			Current: resultState(e.State), Time: time.Now()}), nil
	case !errors.Is(err, outbox.ErrNotFound):
		return nil, fmt.Errorf("reading the outbox: %w", err)
	}
	// A cancel that came first (naming 0 attempts) left a tombstone: the job is never sent.
	if r, err := known.tomb, known.tombErr; err != nil {
		return nil, fmt.Errorf("reading the ledger: %w", err)
	} else if r != nil {
		return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmd.name, State: StateCancelled,
			Error: "a cancel of this id came before it (at " + r.Time.Format(time.RFC3339) + "); nothing was sent", Time: time.Now()}), nil
	}
	in := outbox.Intent{ID: outboxKey(p, cmd.id), Printer: p.remote, ExpireAfter: cmd.expireAfter}
	switch {
	case cmd.name == cmdTrigger:
		in.Kind = outbox.KindTrigger
	case cmd.job == nil:
		in.Kind = outbox.KindDeselect
	default:
		in.Job = *cmd.job
	}
	key := entryKey{ctl, in.ID}
	w := &waiter{done: make(chan struct{})}
	b.mu.Lock()
	b.waiting[key] = w
	if rep.topic != "" || rep.spb != nil {
		b.replies[key] = rep
	}
	b.mu.Unlock()
	b.crashPoint(kindName(cmd), crashBeforeCommit)
	if _, err := ctl.ob.Enqueue(context.WithoutCancel(ctx), in); err != nil {
		b.mu.Lock()
		delete(b.waiting, key)
		delete(b.replies, key)
		b.mu.Unlock()
		if errors.Is(err, labelprinter.ErrInvalidArgument) {
			return b.result(resultTopic, rep, Result{ID: cmd.id, Command: cmd.name, State: StateInvalid, Error: err.Error()}), nil
		}
		return nil, err
	}
	// The outbox reports the new Pending entry to entryChanged, which publishes queued and
	// closes w.done once the broker has it.
	return w.done, nil
}

// knownCommand is what enqueueOnce decides by: the outbox entry of the command's id on its
// printer (lookupCommand) and the tombstone of a cancel of the id that came before it.
type knownCommand struct {
	entry   outbox.Entry
	err     error
	tomb    *cancelRecord
	tombErr error
}

// enqueueReads reads what enqueueOnce decides by. On a pair's database, where each read is a
// round trip, they are made at once; from the files, one after the other, and the ledger only
// when the outbox does not hold the id.
func (b *Bridge) enqueueReads(p *printer, id string) knownCommand {
	var k knownCommand
	if b.pair == nil {
		k.entry, k.err = lookupCommand(p, id)
		if errors.Is(k.err, outbox.ErrNotFound) && !errors.Is(k.err, outbox.ErrPruned) {
			k.tomb, k.tombErr = p.ctl.led.cancelled(p.remote, id)
		}
		return k
	}
	led := make(chan struct{})
	go func() {
		defer close(led)
		k.tomb, k.tombErr = p.ctl.led.cancelled(p.remote, id)
	}()
	entry, err := lookupCommandAtOnce(p, id)
	<-led
	k.entry, k.err = entry, err
	return k
}

// result publishes r on topic and, when the command has one, on its Response Topic; the
// channel returned is closed once the broker has both.
func (b *Bridge) result(topic string, rep reply, r Result) chan struct{} {
	return b.publishResult(topic, rep, r, nil)
}

// publishResult is result, with sent called once the broker took the message on topic.
func (b *Bridge) publishResult(topic string, rep reply, r Result, sent func()) chan struct{} {
	done := make(chan struct{})
	b.publishResultTo(topic, rep, r, sent, done)
	return done
}

// publishResultTo is publishResult closing done, a channel of the caller's: a command's queued
// result closes the channel its acknowledgement waits on, with no goroutine between them (a
// flood had thousands waiting).
func (b *Bridge) publishResultTo(topic string, rep reply, r Result, sent func(), done chan struct{}) {
	payload := r.encode()
	b.met.result(r)
	if rep.spb != nil && b.spb != nil {
		b.spb.result(rep.spb, payload, r)
	}
	if rep.topic != "" {
		b.pub.push(&message{topic: topic, payload: payload, sent: sent})
		b.pub.push(&message{topic: rep.topic, payload: payload, corr: rep.corr, done: done})
	} else {
		b.pub.push(&message{topic: topic, payload: payload, done: done, sent: sent})
	}
}

// await waits until done is closed, or the bridge stops, or the connection the command came
// on is lost (cl has shut down: only cl tells, as autopaho's reports of a loss may come once
// the next connection is up); true in the first case. A command not acknowledged is delivered
// again on the next connection, where its id makes it a duplicate.
func (b *Bridge) await(cl *paho.Client, done chan struct{}) bool {
	select {
	case <-done:
		return true
	case <-cl.Done():
		return false
	case <-b.stopCh:
		// One last look: it may have gone out just now.
		select {
		case <-done:
			return true
		default:
			return false
		}
	}
}

// entryChanged is the outbox's report of an entry's new state. It publishes queued for a
// command being enqueued, and the states a caller hears of (sent, rejected, unknown, expired,
// cancelled), on P/result and on the command's Response Topic while this process knows it.
// It never blocks.
func (b *Bridge) entryChanged(ctl *controller, e outbox.Entry) {
	defer b.outboxChanged(ctl, e) // after the result, which a command's acknowledgement waits for
	p := ctl.byRemote[e.Printer]
	key := entryKey{ctl, e.ID}
	b.mu.Lock()
	w := b.waiting[key]
	if e.State == outbox.Pending {
		delete(b.waiting, key) // the queued result is published once
	}
	rep, hasRep := b.replies[key]
	if e.State != outbox.Pending && e.State != outbox.Sending && e.State != outbox.Unknown {
		delete(b.replies, key)
	}
	b.mu.Unlock()
	if p == nil {
		b.log.Warn("an outbox entry for a printer no longer configured changed state", "id", callerID(e), "printer", e.Printer, "state", e.State)
		return
	}
	if !hasRep {
		rep = reply{}
	}
	switch {
	case e.State == outbox.Pending && w != nil:
		b.crashPoint(entryKindName(e), crashAfterCommit)
		b.publishResultTo(p.topic(topicResult), rep, entryResult(e), nil, w.done)
	case reported(e.State):
		b.report(ctl, p, rep, e)
	}
}
