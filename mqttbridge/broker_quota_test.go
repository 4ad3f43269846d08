package mqttbridge

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// TestEmbeddedBrokerSessionQuota: a client with a Receive Maximum of 2 leaves the embedded
// broker with 2 messages unacknowledged; the messages published meanwhile, and after it comes
// back, all arrive on its next connection, each acknowledged as it comes, in order. Without
// sendQuotaHook mochi carried the spent quota over to the new connection and held the
// messages published after it came back.
func TestEmbeddedBrokerSessionQuota(t *testing.T) {
	bk := startTestBroker(t)
	s := newSender(t, bk.URL())
	const id = "quota-client"
	var mu sync.Mutex
	var got []string
	connect := func(clean bool, ack bool) (*paho.Client, net.Conn) {
		conn, err := net.Dial("tcp", bk.Addr())
		if err != nil {
			t.Fatal(err)
		}
		var cli *paho.Client
		cli = paho.NewClient(paho.ClientConfig{ClientID: id, Conn: conn, EnableManualAcknowledgment: true,
			OnPublishReceived: []func(paho.PublishReceived) (bool, error){func(pr paho.PublishReceived) (bool, error) {
				mu.Lock()
				got = append(got, string(pr.Packet.Payload))
				mu.Unlock()
				if ack {
					go func() { _ = cli.Ack(pr.Packet) }()
				}
				return true, nil
			}}})
		expiry, recv := uint32(300), uint16(2)
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if _, err := cli.Connect(ctx, &paho.Connect{ClientID: id, CleanStart: clean, KeepAlive: 30,
			Properties: &paho.ConnectProperties{SessionExpiryInterval: &expiry, ReceiveMaximum: &recv}}); err != nil {
			t.Fatal(err)
		}
		return cli, conn
	}
	publish := func(from, to int) {
		for i := from; i <= to; i++ {
			s.send("quota/t", fmt.Sprintf("m%02d", i))
		}
	}
	cli, conn := connect(true, false)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: "quota/t", QoS: 1}}}); err != nil {
		t.Fatal(err)
	}
	publish(1, 4)
	eventually(t, "2 messages, unacknowledged", func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= 2 })
	_ = conn.Close()
	<-cli.Done()
	publish(5, 8)
	mu.Lock()
	got = nil
	mu.Unlock()
	cli, conn = connect(false, true)
	defer func() { _ = conn.Close(); <-cli.Done() }()
	publish(9, 12)
	var want []string
	for i := 1; i <= 12; i++ {
		want = append(want, fmt.Sprintf("m%02d", i))
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		seen := slices.Clone(got)
		mu.Unlock()
		var first []string
		for _, m := range seen {
			if !slices.Contains(first, m) {
				first = append(first, m)
			}
		}
		if slices.Equal(first, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second connection got %v within 10 s, want each of %v, in order", first, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
