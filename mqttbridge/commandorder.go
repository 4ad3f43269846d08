package mqttbridge

import (
	"context"

	"github.com/eclipse/paho.golang/paho"
)

// A printer's commands are handled one at a time, in the order they came; different printers'
// commands are handled at once, each printer's by a goroutine of its own, so that a command
// waiting for its printer (an abortPrint in flight, an outbox that cannot be written) or for a
// database's round trips holds up no other printer. An abortPrint keeps its place: a command
// that comes while the printer's abortPrint is in flight (the printer answers 503 and the SDK
// retries it, say) waits for its answer, and so do the printer's commands after it. Each
// command is acknowledged once its first result is with the broker; paho's acknowledgement
// tracker sends the acknowledgements in arrival order (MQTT 5 §4.6), so a command handled
// early waits in it for those that came before it. What waits is not acknowledged yet: a
// printer whose abortPrint takes long holds up the broker's in-flight window (mosquitto's
// max_inflight_messages, 20 by default), not the other printers' commands inside it.

// heldCommand is a command waiting for its turn on its printer.
type heldCommand struct {
	ctx context.Context
	cl  *paho.Client // the connection it came on: its Done is closed once that is gone
	pb  *paho.Publish
	// spb is the Sparkplug device a command came to, whose Command/LastResult its results go
	// to besides P/result (sparkplugcommands.go); nil for the bridge's own topics. A pointer,
	// not a reply: a flood's queue holds thousands of these.
	spb *printer
}

// commandPrinter is the printer a command's topic names, or nil (its command is answered
// invalid, by a queue of its own).
func (b *Bridge) commandPrinter(topic string) *printer {
	segment, _, ok := parseCommandTopic(b.cfg.TopicPrefix, topic)
	if !ok {
		return nil
	}
	return b.printers[segment]
}

// queue puts c behind p's commands not handled yet, starting p's worker when none runs, and
// reports whether it did: not once the bridge stopped taking commands (c stays with the
// broker). It never waits on a command.
func (b *Bridge) queue(p *printer, c heldCommand) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	q, running := b.queued[p]
	if !running {
		b.workers.Add(1)
		go b.work(p)
	}
	b.queued[p] = append(q, c)
	return true
}

// work handles p's queued commands, one at a time in arrival order, each once p has no
// abortPrint in flight (one of them may start another), and returns when none is left. A
// bridge that stops, or whose lease may have run out, leaves them with the broker, which
// delivers them again; so does a command whose connection is gone (behind p's abortPrint
// again, if one is still in flight then).
func (b *Bridge) work(p *printer) {
	defer b.workers.Done()
	for {
		b.mu.Lock()
		if answered := b.aborting[p]; answered != nil {
			b.mu.Unlock()
			b.log.Debug("commands wait for their printer's abortPrint", "printer", p.name)
			<-answered // an abortPrint ends: answered, failed, or cut off by the fence
			continue
		}
		q := b.queued[p]
		if len(q) == 0 || !b.taking() {
			delete(b.queued, p)
			b.mu.Unlock()
			return
		}
		c := q[0]
		q[0] = heldCommand{}
		b.queued[p] = q[1:]
		b.executing.Add(1) // before stopped is set: Run waits for it
		b.mu.Unlock()
		select {
		case <-c.cl.Done():
		default:
			b.execute(c.ctx, c.cl, c.pb, reply{spb: c.spb})
		}
		b.executing.Done()
	}
}
