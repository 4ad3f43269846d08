package mqttbridge

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/eclipse/paho.golang/autopaho"
	"github.com/eclipse/paho.golang/paho"
)

// message is one PUBLISH the bridge makes. done, when set, is closed once the broker
// acknowledged it (or it was dropped after the broker refused it, or the bridge stopped).
type message struct {
	topic   string
	payload []byte
	retain  bool
	corr    []byte // MQTT 5 Correlation Data, for a Response Topic
	done    chan struct{}
	// sent, when set, is called once the broker took it (or refused it, or it was dropped
	// after maxPublishTries: sending it again cannot help), and not when the bridge stopped
	// before that.
	sent func()
	// tries counts the times it went to the broker, and dropped says it was given up after
	// maxPublishTries; both under the pubStore's lock.
	tries   int
	dropped bool
}

// publisher sends messages at QoS 1, one at a time and in the order they were pushed, across
// reconnects: a message whose acknowledgement was lost with the connection is sent again on
// the next one. Results and retained state share it, so a command's results keep their order.
type publisher struct {
	log   *slog.Logger
	store *pubStore // paho's session store, which counts each message's tries
	mu    sync.Mutex
	q     []*message
	wake  chan struct{}
	// stopped is closed when run returns; pushes after that close done at once.
	stopped chan struct{}
}

func newPublisher(l *slog.Logger) *publisher {
	return &publisher{log: l, store: newPubStore(), wake: make(chan struct{}, 1), stopped: make(chan struct{})}
}

// push queues m; it never blocks.
func (p *publisher) push(m *message) {
	select {
	case <-p.stopped:
		if m.done != nil {
			close(m.done)
		}
		return
	default:
	}
	p.mu.Lock()
	p.q = append(p.q, m)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// publishTimeout bounds one wait for a PUBACK; a connection that is half open is found out
// by then and the message goes again.
const publishTimeout = 30 * time.Second

// run publishes through cm until ctx ends; messages left then are dropped, their done closed.
func (p *publisher) run(ctx context.Context, cm *autopaho.ConnectionManager) {
	defer func() {
		p.mu.Lock()
		close(p.stopped)
		left := p.q
		p.q = nil
		p.mu.Unlock()
		for _, m := range left {
			if m.done != nil {
				close(m.done)
			}
		}
	}()
	for {
		p.mu.Lock()
		var m *message
		if len(p.q) > 0 {
			m = p.q[0]
		}
		p.mu.Unlock()
		if m == nil {
			select {
			case <-ctx.Done():
				return
			case <-p.wake:
				continue
			}
		}
		if !p.send(ctx, cm, m) {
			return
		}
		p.mu.Lock()
		p.q[0] = nil
		p.q = p.q[1:]
		p.mu.Unlock()
		if m.sent != nil {
			m.sent()
		}
		if m.done != nil {
			close(m.done)
		}
	}
}

// send publishes m until the broker takes or refuses it; false when ctx ended first.
func (p *publisher) send(ctx context.Context, cm *autopaho.ConnectionManager, m *message) bool {
	pub := &paho.Publish{QoS: 1, Topic: m.topic, Payload: m.payload, Retain: m.retain}
	if m.corr != nil {
		pub.Properties = &paho.PublishProperties{CorrelationData: m.corr}
	}
	for {
		if err := cm.AwaitConnection(ctx); err != nil {
			return false
		}
		if p.gaveUp(m) {
			return true
		}
		p.store.publishing(m)
		pctx, cancel := context.WithTimeout(ctx, publishTimeout)
		resp, err := cm.Publish(pctx, pub)
		cancel()
		if err == nil {
			return true
		}
		if resp != nil {
			// The broker answered (0x91, say): a try that the connection outlived.
			p.store.answered(m)
		}
		if p.gaveUp(m) {
			return true
		}
		// 0x91 (identifier in use) is the broker confusing our identifier with one of its
		// own; the next attempt takes another.
		if resp != nil && resp.ReasonCode >= 0x80 && resp.ReasonCode != 0x91 {
			// The broker refused it (an ACL, say): sending again cannot help.
			p.log.Warn("the broker refused a message", "topic", m.topic, "reason", resp.ReasonCode)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		p.log.Debug("publish failed; sending again when connected", "topic", m.topic, "err", err)
		select {
		case <-ctx.Done():
			return false
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// gaveUp reports whether m went to the broker maxPublishTries times without being taken (each
// time the connection was lost before its acknowledgement, as when the broker disconnects
// rather than take it), and then logs that it is dropped, so the queue goes on.
func (p *publisher) gaveUp(m *message) bool {
	n, dropped := p.store.tries(m)
	if !dropped && n < maxPublishTries {
		return false
	}
	p.log.Error("dropped a message: the connection was lost before the broker took it, each time it was sent (a broker disconnects rather than take a message it finds invalid)",
		"topic", clip(m.topic), "tries", n)
	return true
}
