package mqttbridge

import (
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"
)

// refuseHook lets every client in and refuses subscriptions to the bridge's command filter
// while refuse is set, as a broker's ACL would: the SUBACK says 0x87 (not authorized).
type refuseHook struct {
	mqtt.HookBase
	refuse atomic.Bool
}

func (h *refuseHook) ID() string { return "refuse-commands" }

func (h *refuseHook) Provides(b byte) bool {
	return b == mqtt.OnConnectAuthenticate || b == mqtt.OnACLCheck
}

func (h *refuseHook) OnConnectAuthenticate(*mqtt.Client, packets.Packet) bool { return true }

func (h *refuseHook) OnACLCheck(_ *mqtt.Client, topic string, write bool) bool {
	return write || topic != commandFilter(prefix) || !h.refuse.Load()
}

// refusingBroker serves a mochi broker with hook on a free loopback port until the test ends.
func refusingBroker(t *testing.T, hook *refuseHook) (*mqtt.Server, string) {
	t.Helper()
	srv := mqtt.New(&mqtt.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := srv.AddHook(hook, nil); err != nil {
		t.Fatal(err)
	}
	tcp := listeners.NewTCP(listeners.Config{ID: "tcp", Address: "127.0.0.1:0"})
	if err := srv.AddListener(tcp); err != nil {
		t.Fatal(err)
	}
	if err := srv.Serve(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv, "mqtt://" + tcp.Address()
}

// TestOnlineOnlyWhenSubscribed: a broker whose ACL refuses the bridge the command filter
// answers its SUBACK with 0x87. The bridge does not say online, logs the refusal at error
// level with the reason code, and tries again with back-off; once the broker grants it, the
// bridge subscribes, says online once, and takes commands.
func TestOnlineOnlyWhenSubscribed(t *testing.T) {
	hook := &refuseHook{}
	hook.refuse.Store(true)
	_, url := refusingBroker(t, hook)

	pl := startPlant(t, "line1")
	w := watch(t, url, prefix+"/#")
	var logs lockedBuffer
	b, err := New(testConfig(t, url, pl, "line1"), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	refusal := `level=ERROR msg="the broker refused the subscription to the commands; not online, trying again" filter=labelprinter/+/cmd/+ reason=0x87`
	eventually(t, "two refusals logged", func() bool { return strings.Count(logs.String(), refusal) >= 2 })
	if n := w.onlines(); n != 0 {
		t.Fatalf("online published %d times while the broker refused the subscription", n)
	}
	hook.refuse.Store(false)
	w.waitOnline(1)
	s := newSender(t, url)
	s.send(cmdTopic("line1", "printJob"), printJobCmd("after-grant"))
	w.waitStates(resultTopic("line1"), "after-grant", StateQueued, StateSent)
	if n := w.onlines(); n != 1 {
		t.Errorf("online published %d times, want once", n)
	}
}

// TestSubscribeRetriesPastLateLossReport: the broker cuts the bridge off and refuses its next
// connection the command filter for a while, and autopaho's report that the old connection
// is gone comes only once the next one is up. The bridge still tries the subscription again
// on the next connection until the broker grants it, then says online and takes commands.
// When the report closed the current connection's lost channel, the late one ended the next
// connection's retries: no online and no command until the bridge reconnected.
func TestSubscribeRetriesPastLateLossReport(t *testing.T) {
	hook := &refuseHook{}
	srv, url := refusingBroker(t, hook)
	pl := startPlant(t, "line1")
	w := watch(t, url, prefix+"/#")
	cfg := testConfig(t, url, pl, "line1")
	var logs lockedBuffer
	var ups atomic.Int32
	second, reported, end := make(chan struct{}), make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(end) })
	var once sync.Once
	b, err := New(cfg, WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), withConnectionUp(func() {
		if ups.Add(1) == 2 {
			close(second)
		}
	}), withLateLossReport(func(report func()) {
		select {
		case <-second:
		case <-end:
			return
		}
		report()
		once.Do(func() { close(reported) })
	}))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	hook.refuse.Store(true)
	cl, ok := srv.Clients.Get(cfg.Broker.ClientID)
	if !ok {
		t.Fatal("the bridge is not among the broker's clients")
	}
	_ = cl.Net.Conn.Close()
	cl.Stop(errors.New("cut off by the test"))
	select {
	case <-reported:
	case <-time.After(waitLimit):
		t.Fatal("the lost connection was never reported")
	}
	refusal := `msg="the broker refused the subscription to the commands; not online, trying again"`
	eventually(t, "the next connection's subscription refused", func() bool { return strings.Contains(logs.String(), refusal) })
	hook.refuse.Store(false)
	w.waitOnline(2)
	newSender(t, url).send(cmdTopic("line1", "printJob"), printJobCmd("after-grant"))
	w.waitStates(resultTopic("line1"), "after-grant", StateQueued, StateSent)
}
