package mqttbridge

import (
	"context"

	"github.com/eclipse/paho.golang/paho"
)

// A printer's commands reach it in the order they came, an abortPrint included: a command
// that comes while the printer's abortPrint is in flight (the printer answers 503 and the SDK
// retries it, say) waits for its answer, and so do the printer's commands after it. Other
// printers' commands do not wait: the abortPrint of one printer holds up no other. What waits
// is not acknowledged yet; MQTT keeps acknowledgements in arrival order, so a printer whose
// abortPrint takes long holds up the broker's in-flight window (mosquitto's
// max_inflight_messages, 20 by default), not the commands inside it.

// heldCommand is a command waiting for its printer's abortPrint to be answered.
type heldCommand struct {
	ctx  context.Context
	cl   *paho.Client
	pb   *paho.Publish
	lost chan struct{} // closed when the connection it came on is lost
}

// behindAbort holds pb back when its printer has an abortPrint in flight, or commands held
// back already, and reports whether it did; a drainer of the printer's own handles them in
// order once the abortPrint is answered. handleMu is held.
func (b *Bridge) behindAbort(ctx context.Context, cl *paho.Client, pb *paho.Publish, lost chan struct{}) bool {
	segment, _, ok := parseCommandTopic(b.cfg.TopicPrefix, pb.Topic)
	p := b.printers[segment]
	if !ok || p == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.aborting[p] == nil && len(b.behind[p]) == 0 {
		return false
	}
	// A drainer runs for p exactly while p has commands held back.
	if len(b.behind[p]) == 0 {
		b.drainers.Add(1)
		go b.drain(p)
	}
	b.behind[p] = append(b.behind[p], heldCommand{ctx: ctx, cl: cl, pb: pb, lost: lost})
	b.log.Debug("command waits for its printer's abortPrint", "topic", pb.Topic)
	return true
}

// drain handles p's held commands, one at a time in arrival order, each once p has no
// abortPrint in flight (one of them may start another). A bridge that stops, or whose lease
// may have run out, leaves them with the broker, which delivers them again.
func (b *Bridge) drain(p *printer) {
	defer b.drainers.Done()
	for {
		b.mu.Lock()
		answered := b.aborting[p]
		b.mu.Unlock()
		if answered != nil {
			<-answered // an abortPrint ends: answered, failed, or cut off by the fence
		}
		b.handleMu.Lock()
		b.mu.Lock()
		if !b.taking() {
			delete(b.behind, p)
			b.mu.Unlock()
			b.handleMu.Unlock()
			return
		}
		if b.aborting[p] != nil {
			b.mu.Unlock()
			b.handleMu.Unlock()
			continue
		}
		c := b.behind[p][0]
		b.behind[p] = b.behind[p][1:]
		b.mu.Unlock()
		select {
		case <-c.lost:
			// Its connection is gone: the broker delivers it again on the next one, behind
			// this printer's abortPrint if one is still in flight then.
		default:
			b.execute(c.ctx, c.cl, c.pb, c.lost)
		}
		b.mu.Lock()
		last := len(b.behind[p]) == 0
		if last {
			delete(b.behind, p)
		}
		b.mu.Unlock()
		b.handleMu.Unlock()
		if last {
			return
		}
	}
}
