package mqttbridge

import (
	"strings"
	"sync"
	"testing"

	"github.com/eclipse/paho.golang/paho"
	mqtt "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/packets"
)

// TestCommandCaps: a command whose Response Topic, Correlation Data, user properties or id is
// over its cap is answered invalid naming the cap, and nothing reaches the printer; one at
// every cap is executed (both brokers).
func TestCommandCaps(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), "#")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		cfg.Limits.IDBytes = 16
		startBridge(t, cfg)
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		rt := resultTopic("line1")
		props := func(topic string, corr int, user int) func(*paho.Publish) {
			return func(p *paho.Publish) {
				p.Properties = &paho.PublishProperties{ResponseTopic: topic, CorrelationData: []byte(strings.Repeat("c", corr))}
				if user > 0 {
					p.Properties.User = paho.UserProperties{{Key: "k", Value: strings.Repeat("v", user-1)}}
				}
			}
		}
		atCap := "mes/replies/" + strings.Repeat("r", DefaultResponseTopicBytes-len("mes/replies/"))
		overCap := atCap + "r"
		s.send(cmdTopic("line1", "printJob"), printJobCmd("topic"), props(overCap, 1, 0))
		s.send(cmdTopic("line1", "printJob"), printJobCmd("corr"), props("mes/replies/a", DefaultCorrelationBytes+1, 0))
		caps := map[string]string{"topic": "limits.response_topic_bytes", "corr": "limits.correlation_data_bytes",
			"a-seventeen-bytes": "limits.id_bytes"}
		// mochi forwards no user properties; mosquitto forwards them as they came.
		_, embedded := bk.(*embeddedBroker)
		if !embedded {
			s.send(cmdTopic("line1", "printJob"), printJobCmd("user"), props("mes/replies/a", 1, DefaultUserPropertiesBytes+1))
			caps["user"] = "limits.user_properties_bytes"
		}
		s.send(cmdTopic("line1", "trigger"), `{"id":"a-seventeen-bytes"}`, props("mes/replies/a", 1, 0))
		s.send(cmdTopic("line1", "printJob"), printJobCmd("at-caps"), props(atCap, DefaultCorrelationBytes, DefaultUserPropertiesBytes))
		w.waitStates(rt, "at-caps", StateQueued, StateSent)
		w.waitStates(atCap, "at-caps", StateQueued, StateSent)
		for id, cap := range caps {
			w.waitStates(rt, id, StateInvalid)
			for _, r := range w.results(rt) {
				if r.ID == id && !strings.Contains(r.Error, cap) {
					t.Errorf("%s: error %q does not name %s", id, r.Error, cap)
				}
			}
		}
		// Those over a cap of their own reply go to P/result alone; the others also to their
		// Response Topic.
		if !embedded {
			w.waitStates("mes/replies/a", "user", StateInvalid)
		}
		w.waitStates("mes/replies/a", "a-seventeen-bytes", StateInvalid)
		if got := w.statesOf("mes/replies/a", "corr"); len(got) != 0 {
			t.Errorf("the command over the Correlation Data cap was answered on its Response Topic: %v", got)
		}
		if n := pl.printed("topic") + pl.printed("corr") + pl.printed("user"); n != 0 {
			t.Errorf("commands over a cap reached the printer %d times", n)
		}
	})
}

// TestConnectAsksForLimits: the bridge's CONNECT carries the Maximum Packet Size and the
// Receive Maximum of its configuration (defaults 1 MiB and 100), as the broker read them.
func TestConnectAsksForLimits(t *testing.T) {
	for _, c := range []struct {
		limits     LimitsConfig
		size, recv uint32
	}{
		{LimitsConfig{}, 1 << 20, 100},
		{LimitsConfig{MaxPacketSize: 65536, ReceiveMaximum: 7}, 65536, 7},
	} {
		bk := startTestBroker(t)
		h := &connectHook{got: map[string]packets.Properties{}}
		if err := bk.srv.AddHook(h, nil); err != nil {
			t.Fatal(err)
		}
		pl := startPlant(t, "line1")
		cfg := testConfig(t, bk.URL(), pl, "line1")
		cfg.Limits = c.limits
		w := watch(t, bk.URL(), "#")
		r := startBridge(t, cfg)
		w.waitOnline(1)
		h.mu.Lock()
		p, ok := h.got[cfg.Broker.ClientID]
		h.mu.Unlock()
		if !ok || p.MaximumPacketSize != c.size || uint32(p.ReceiveMaximum) != c.recv {
			t.Errorf("limits %+v: CONNECT properties %+v, want Maximum Packet Size %d and Receive Maximum %d", c.limits, p, c.size, c.recv)
		}
		r.stop(t)
	}
}

// connectHook records the properties of each CONNECT by client id.
type connectHook struct {
	mqtt.HookBase
	mu  sync.Mutex
	got map[string]packets.Properties
}

func (h *connectHook) ID() string           { return "connect-recorder" }
func (h *connectHook) Provides(b byte) bool { return b == mqtt.OnConnect }
func (h *connectHook) OnConnect(cl *mqtt.Client, pk packets.Packet) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.got[string(pk.Connect.ClientIdentifier)] = pk.Properties
	return nil
}

// TestLimitsConfig: each cap's field is checked and named.
func TestLimitsConfig(t *testing.T) {
	for _, c := range []struct {
		l     LimitsConfig
		field string
	}{
		{LimitsConfig{MaxPacketSize: 100}, "limits.max_packet_size"},
		{LimitsConfig{ResponseTopicBytes: -1}, "limits.response_topic_bytes"},
		{LimitsConfig{CorrelationDataBytes: 70000}, "limits.correlation_data_bytes"},
		{LimitsConfig{UserPropertiesBytes: 2 << 20}, "limits.user_properties_bytes"},
		{LimitsConfig{IDBytes: 257}, "limits.id_bytes"},
	} {
		err := c.l.validate()
		if ce, ok := err.(*ConfigError); !ok || ce.Field != c.field {
			t.Errorf("%+v: %v, want an error naming %s", c.l, err, c.field)
		}
	}
	var l LimitsConfig
	if err := l.validate(); err != nil || l != (LimitsConfig{1 << 20, 100, 1024, 1024, 4096, 256}) {
		t.Errorf("defaults: %+v, %v", l, err)
	}
}
