package mqttbridge

import (
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

func TestCheckResponseTopic(t *testing.T) {
	for _, c := range []struct {
		topic, want string // want: in the error; "" accepted
	}{
		{"mes/replies/7", ""},
		{"replies", ""},
		{"labelprinterx/replies", ""},
		{"a/b/", ""},
		{"réponses/ligne 1", ""},
		{"replies/#", "wildcard"},
		{"replies/+/x", "wildcard"},
		{"#", "wildcard"},
		{"", "empty"},
		{strings.Repeat("r", 65536), "longer than 65535 bytes"},
		{"a\x00b", "NUL"},
		{"a\nb", "control character"},
		{"a\ufffeb", "non-character"},
		{"a\ufdd0b", "non-character"},
		{"a\xffb", "not UTF-8"},
		{"$SYS/x", "starts with $"},
		{"labelprinter", "under the bridge's own topics"},
		{"labelprinter/line1/status", "under the bridge's own topics"},
		{"labelprinter/bridge/online", "under the bridge's own topics"},
	} {
		err := checkResponseTopic("labelprinter", c.topic)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v, want it accepted", clip(c.topic), err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%q: %v, want an error saying %q", clip(c.topic), err, c.want)
		}
	}
	if err := checkResponseTopic("labelprinter", strings.Repeat("r", 65535)); err != nil {
		t.Errorf("65535 bytes: %v", err)
	}
}

// TestResponseTopicRefused reproduces the report against each broker: a command whose
// Response Topic is a wildcard (which mosquitto answers by disconnecting the publisher) or one
// of the bridge's own topics is answered invalid on P/result, nothing is published there, and
// the next command goes through.
func TestResponseTopicRefused(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), "#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		replyTo := func(topic string) func(*paho.Publish) {
			return func(p *paho.Publish) {
				p.Properties = &paho.PublishProperties{ResponseTopic: topic, CorrelationData: []byte("c")}
			}
		}
		rt := resultTopic("line1")
		refused := map[string]string{"w3": "under the bridge's own topics"}
		// mochi leaves a wildcard Response Topic out when it forwards a command; mosquitto
		// forwards it as it came.
		if _, embedded := bk.(*embeddedBroker); !embedded {
			s.send(cmdTopic("line1", "printJob"), printJobCmd("w1"), replyTo("replies/#"))
			s.send(cmdTopic("line1", "trigger"), `{"id":"w2"}`, replyTo("replies/+/x"))
			refused["w1"], refused["w2"] = "wildcard", "wildcard"
		}
		s.send(cmdTopic("line1", "printJob"), printJobCmd("w3"), replyTo(prefix+"/line1/status"))
		s.send(cmdTopic("line1", "printJob"), printJobCmd("ok"), replyTo("mes/replies"))
		w.waitStates(rt, "ok", StateQueued, StateSent)
		w.waitStates("mes/replies", "ok", StateQueued, StateSent)
		for id, want := range refused {
			w.waitStates(rt, id, StateInvalid)
			for _, r := range w.results(rt) {
				if r.ID == id && !strings.Contains(r.Error, want) {
					t.Errorf("%s: error %q, want it to say %q", id, r.Error, want)
				}
			}
		}
		if n := pl.printed("w1") + pl.printed("w3"); n != 0 {
			t.Errorf("refused commands reached the printer %d times", n)
		}
		if st := w.last(prefix + "/line1/status"); st != nil && strings.Contains(string(st.Payload), `"state":"invalid"`) {
			t.Errorf("a result was published on the bridge's status topic: %s", st.Payload)
		}
		if n := w.onlines(); n != 1 {
			t.Errorf("the bridge connected %d times, want once", n)
		}
	})
}

// TestPublishBoundedTries: a message the broker answers by disconnecting (mosquitto, for a
// PUBLISH to a wildcard topic) is sent at most maxPublishTries times, then dropped, and the
// queue goes on: the bridge stays on the air and later commands are answered.
func TestPublishBoundedTries(t *testing.T) {
	bin := mosquittoBin(t)
	if bin == "" {
		t.Skip("mosquitto is not installed (Debian: apt-get install mosquitto); MQTTBRIDGE_MOSQUITTO=required makes this a failure")
	}
	bk := newMosquitto(t, bin)
	pl := startPlant(t, "line1")
	w := watch(t, bk.URL(), prefix+"/#")
	b, err := New(testConfig(t, bk.URL(), pl, "line1"))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	// A message no validation caught, straight into the queue.
	bad := &message{topic: "replies/#", payload: []byte("x"), done: make(chan struct{})}
	b.pub.push(bad)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), printJobCmd("after"))
	// Sent while the broker disconnects the bridge: it may be delivered again, and then
	// answered duplicate too.
	eventually(t, "the later command sent", func() bool { return contains(w.statesOf(resultTopic("line1"), "after"), StateSent) })
	for _, st := range w.statesOf(resultTopic("line1"), "after") {
		if st != StateQueued && st != StateSent && st != StateDuplicate {
			t.Errorf("the later command was %s", st)
		}
	}
	<-bad.done
	if n, _ := b.pub.store.tries(bad); n != maxPublishTries {
		t.Errorf("the bad message went out %d times, want %d", n, maxPublishTries)
	}
	// Connected once, then once again after each try the broker disconnected.
	if n := w.onlines(); n > maxPublishTries+1 {
		t.Errorf("the bridge connected %d times, want at most %d", n, maxPublishTries+1)
	}
	if n := pl.printed("after"); n != 1 {
		t.Errorf("the later command reached the printer %d times, want 1", n)
	}
}
