package mqttbridge

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/packets"
	"github.com/eclipse/paho.golang/paho"
)

// TestRedeliveryOfAnUnfinishedRecord: a cancel or resend whose record has no result (the
// process died after recording it, before recording what it did) acts on redelivery only if
// the entry is still as the command found it; otherwise the redelivery is answered
// duplicate with current done. A redelivery whose topic or payload differ from the record
// under its packet identifier is a message not seen before, and acts.
func TestRedeliveryOfAnUnfinishedRecord(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	b, err := New(testConfig(t, bk.URL(), pl, "line1"))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	rt := resultTopic("line1")
	unknown := func(id string) {
		pl.mu.Lock()
		pl.hangUp[id] = true
		pl.mu.Unlock()
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd(id))
		w.waitStates(rt, id, StateQueued, StateUnknown)
		pl.mu.Lock()
		delete(pl.hangUp, id)
		pl.mu.Unlock()
	}
	led := b.ctls[0].led
	// unfinished records cmd under pid as the dead process left it: seen, no result.
	unfinished := func(pid uint16, cmd, payload string) *paho.Publish {
		topic := cmdTopic("line1", cmd)
		sum := sha256.Sum256([]byte(payload))
		if err := led.putDelivery(pid, deliveryRecord{Topic: topic, Sum: sum[:], SeenState: StateUnknown, SeenAttempts: 1, Time: time.Now()}); err != nil {
			t.Fatal(err)
		}
		return paho.PublishFromPacketPublish(&packets.Publish{Properties: &packets.Properties{}, PacketID: pid, QoS: 1, Duplicate: true, Topic: topic, Payload: []byte(payload)})
	}
	deliver := func(pb *paho.Publish) {
		b.handleMu.Lock()
		done := b.handle(context.Background(), pb)
		b.handleMu.Unlock()
		if done == nil {
			t.Fatal("the command was left with the broker")
		}
		<-done
	}
	answers := func(cmd, id string) []string {
		var out []string
		for _, r := range w.results(rt) {
			if r.ID == id && r.Command == cmd {
				out = append(out, r.State+"("+r.Current+")")
			}
		}
		return out
	}
	waitAnswers := func(cmd, id string, want ...string) {
		t.Helper()
		eventually(t, cmd+" "+id+" answered", func() bool { return len(answers(cmd, id)) >= len(want) })
		if got := answers(cmd, id); !equal(got, want) {
			t.Errorf("%s %s answers %v, want %v", cmd, id, got, want)
		}
	}

	// The resend had not acted: it acts now.
	unknown("X")
	deliver(unfinished(7, cmdResend, `{"id":"X"}`))
	waitAnswers(cmdResend, "X", "done()")
	eventually(t, "X sent", func() bool { return contains(answers(cmdPrintJob, "X"), "sent()") })
	// It had acted (X was sent again since): answered from the entry, nothing more sent.
	deliver(unfinished(7, cmdResend, `{"id":"X"}`))
	waitAnswers(cmdResend, "X", "done()", "duplicate(done)")

	// The cancel had acted: the entry is cancelled.
	unknown("Y")
	pb := unfinished(8, cmdCancel, `{"id":"Y"}`)
	if err := b.ctls[0].ob.Cancel(outboxKey(b.printers["line1"], "Y")); err != nil {
		t.Fatal(err)
	}
	deliver(pb)
	waitAnswers(cmdCancel, "Y", "duplicate(done)")

	// A record under the identifier for another payload: this message is new, and acts.
	unknown("Z")
	unfinished(9, cmdResend, `{"id":"X"}`)
	deliver(paho.PublishFromPacketPublish(&packets.Publish{Properties: &packets.Properties{}, PacketID: 9, QoS: 1, Duplicate: true,
		Topic: cmdTopic("line1", cmdResend), Payload: []byte(`{"id":"Z"}`)}))
	waitAnswers(cmdResend, "Z", "done()")
	eventually(t, "Z sent", func() bool { return contains(answers(cmdPrintJob, "Z"), "sent()") })

	for id, want := range map[string]int{"X": 2, "Y": 1, "Z": 2} {
		if n := pl.printed(id); n != want {
			t.Errorf("%s reached the printer %d times, want %d", id, n, want)
		}
	}
}
