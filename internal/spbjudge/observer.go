package spbjudge

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// Observer is a client of the judge's broker that records every Sparkplug message: a test
// waits on it for what the edge node under test has sent before it stops the judge, so the
// judge evaluates a recording that holds it. It subscribes and never publishes.
type Observer struct {
	cli  *paho.Client
	mu   sync.Mutex
	msgs []Message
	// grew is signalled each time a message arrives.
	grew chan struct{}
}

// Message is a message the observer received.
type Message struct {
	Topic   string
	Payload []byte
	At      time.Time
}

// Observe connects an observer to the judge's broker, subscribed to spBv1.0/# at QoS 1.
func (j *Judge) Observe(t testing.TB) *Observer {
	t.Helper()
	o := &Observer{grew: make(chan struct{}, 1)}
	conn, err := net.Dial("tcp", j.Addr)
	if err != nil {
		t.Fatal(err)
	}
	o.cli = paho.NewClient(paho.ClientConfig{ClientID: "spbjudge-observer", Conn: conn,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			o.mu.Lock()
			o.msgs = append(o.msgs, Message{pr.Packet.Topic, append([]byte(nil), pr.Packet.Payload...), time.Now()})
			o.mu.Unlock()
			select {
			case o.grew <- struct{}{}:
			default:
			}
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if ca, err := o.cli.Connect(ctx, &paho.Connect{ClientID: "spbjudge-observer", CleanStart: true, KeepAlive: 30}); err != nil || ca.ReasonCode != 0 {
		t.Fatalf("observer: connect: %v", err)
	}
	if _, err := o.cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "spBv1.0/#", QoS: 1}}}); err != nil {
		t.Fatalf("observer: subscribe: %v", err)
	}
	t.Cleanup(o.Close)
	return o
}

// Close disconnects the observer.
func (o *Observer) Close() {
	select {
	case <-o.cli.Done():
		return
	default:
	}
	_ = o.cli.Disconnect(&paho.Disconnect{})
	<-o.cli.Done()
}

// Messages returns what arrived so far, in order.
func (o *Observer) Messages() []Message {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Message(nil), o.msgs...)
}

// WaitFor waits until the n-th message (counting from 1) on topic has arrived, and fails the
// test after limit.
func (o *Observer) WaitFor(t testing.TB, topic string, n int, limit time.Duration) Message {
	t.Helper()
	deadline := time.NewTimer(limit)
	defer deadline.Stop()
	for {
		seen := 0
		for _, m := range o.Messages() {
			if m.Topic == topic {
				if seen++; seen == n {
					return m
				}
			}
		}
		select {
		case <-o.grew:
		case <-deadline.C:
			t.Fatalf("observer: %d message(s) on %s after %s, waiting for %d", seen, topic, limit, n)
		}
	}
}
