package mqttbridge

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

// sessionClient connects to the broker with a persistent session and never acknowledges what
// it receives, so the broker keeps it queued for the next connection.
type sessionClient struct {
	conn net.Conn
	cli  *paho.Client
	mu   sync.Mutex
	got  []string
}

func connectSession(t *testing.T, addr, id string) *sessionClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	sc := &sessionClient{conn: conn}
	sc.cli = paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn, EnableManualAcknowledgment: true,
		OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
			sc.mu.Lock()
			sc.got = append(sc.got, string(pr.Packet.Payload))
			sc.mu.Unlock()
			return true, nil
		}}})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	expiry := uint32(60)
	if _, err := sc.cli.Connect(ctx, &paho.Connect{ClientID: id, KeepAlive: 30,
		Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry}}); err != nil {
		t.Fatal(err)
	}
	return sc
}

func (sc *sessionClient) received() []string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return append([]string(nil), sc.got...)
}

// crash drops the connection without DISCONNECT, as a killed process does.
func (sc *sessionClient) crash() {
	_ = sc.conn.Close()
	<-sc.cli.Done()
}

// TestBrokerKeepsQueuedMessages holds the embedded broker to what the bridge relies on: a
// message delivered but not acknowledged survives the client publishing and then dying, and
// the messages queued meanwhile come back after it, in the order they were published.
func TestBrokerKeepsQueuedMessages(t *testing.T) {
	bk := newEmbedded(t)
	sub := connectSession(t, bk.addr, "session")
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := sub.cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "cmd", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	pub := newSender(t, bk.URL())
	pub.send("cmd", "m000")
	eventually(t, "m000 delivered", func() bool { return len(sub.received()) == 1 })
	if _, err := sub.cli.Publish(ctx, &paho.Publish{Topic: "result", QoS: 1, Payload: []byte("r")}); err != nil {
		t.Fatal(err)
	}
	sub.crash()
	var want []string
	want = append(want, "m000")
	for i := 1; i <= 300; i++ {
		m := fmt.Sprintf("m%03d", i)
		want = append(want, m)
		pub.send("cmd", m)
	}
	// The broker hands a message to the session after it acknowledged it to the publisher:
	// the last ones may still be on their way as the session is taken over (which
	// resumeHook makes safe).
	again := connectSession(t, bk.addr, "session")
	defer again.crash()
	eventually(t, "every queued message", func() bool { return len(again.received()) >= len(want) })
	if got := again.received(); !equal(got[:len(want)], want) {
		t.Errorf("after the crash the broker delivered %v, want %v", got, want)
	}
}
