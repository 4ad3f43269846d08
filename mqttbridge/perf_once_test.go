package mqttbridge

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/eclipse/paho.golang/paho"
)

// BenchmarkCommandRoundTrip: one command at a time from one MQTT client through the embedded
// broker to a bridge with one printer, each waited for until its first answer is back: what a
// command's durable record costs the caller. trigger goes through the outbox (one commit before
// its queued answer); abortPrint is recorded in the ledger, sent, and recorded again (two
// commits and the request before its answer); resend (of an id the outbox does not hold, so
// nothing prints) is answered from a read of the outbox (no commit).
func BenchmarkCommandRoundTrip(b *testing.B) {
	for _, kind := range []string{cmdTrigger, cmdAbortPrint, cmdResend} {
		b.Run("kind="+kind, func(b *testing.B) { benchRoundTrip(b, kind) })
	}
}

func benchRoundTrip(b *testing.B, kind string) {
	bk := startTestBroker(b)
	pl := startPlant(b, "line1")
	online := watch(b, bk.URL(), onlineTopic(DefaultTopicPrefix))
	startBridge(b, testConfig(b, bk.URL(), pl, "line1"))
	online.waitOnline(1)
	answers := make(chan Result, 16)
	cli := dialMQTT(b, bk.URL(), fmt.Sprintf("bench-rt-%d", time.Now().UnixNano()), func(pr paho.PublishReceived) (bool, error) {
		var r Result
		if json.Unmarshal(pr.Packet.Payload, &r) == nil && r.Command == kind {
			answers <- r
		}
		return true, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if _, err := cli.Subscribe(ctx, &paho.Subscribe{Subscriptions: []paho.SubscribeOptions{{Topic: resultTopic("line1"), QoS: 1}}}); err != nil {
		b.Fatal(err)
	}
	// A trigger needs a job selected to print.
	pub := func(topic string, payload []byte) {
		if _, err := cli.Publish(ctx, &paho.Publish{Topic: topic, QoS: 1, Payload: payload}); err != nil {
			b.Fatal(err)
		}
	}
	sel, _ := json.Marshal(map[string]any{"id": "sel", "job": map[string]any{"labelData": map[string]any{}, "description": "sel"}})
	pub(cmdTopic("line1", cmdPrintJob), sel)
	eventually(b, "sel sent", func() bool { return pl.printed("sel") == 1 })
	time.Sleep(100 * time.Millisecond)

	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		id := fmt.Sprintf("rt-%d", i)
		if kind == cmdResend {
			id = "none"
		}
		cmd := map[string]any{"id": id}
		if kind == cmdResend {
			cmd["attempts"] = 1
		}
		payload, _ := json.Marshal(cmd)
		pub(cmdTopic("line1", kind), payload)
		// The first answer of this command; the later ones of the one before (a trigger's
		// sent) are passed over.
		for answered := false; !answered; {
			select {
			case r := <-answers:
				if r.State == StateInvalid {
					b.Fatalf("answer %+v", r)
				}
				answered = r.ID == id && (kind != cmdTrigger || r.State == StateQueued)
			case <-ctx.Done():
				b.Fatal("no answer")
			}
		}
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/cmd")
}
