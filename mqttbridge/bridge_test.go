package mqttbridge

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/eclipse/paho.golang/paho"
)

const prefix = DefaultTopicPrefix

func resultTopic(p string) string { return prefix + "/" + p + "/result" }
func cmdTopic(p, c string) string { return prefix + "/" + p + "/cmd/" + c }

// TestPrintJobAtMostOnce: a printJob is queued then sent; the same id again, from the same
// or another publisher, is a duplicate and reaches the printer no second time.
func TestPrintJobAtMostOnce(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		s.send(cmdTopic("line1", "printJob"), printJobCmd("order-1"))
		w.waitStates(resultTopic("line1"), "order-1", StateQueued, StateSent)
		s.send(cmdTopic("line1", "printJob"), printJobCmd("order-1"))
		newSender(t, bk.URL()).send(cmdTopic("line1", "printJob"), printJobCmd("order-1"))
		w.waitStates(resultTopic("line1"), "order-1", StateQueued, StateSent, StateDuplicate, StateDuplicate)
		if n := pl.printed("order-1"); n != 1 {
			t.Fatalf("order-1 reached the printer %d times, want 1", n)
		}
		rs := w.results(resultTopic("line1"))
		sent := rs[1]
		if sent.Command != "printJob" || len(sent.Response) == 0 || string(sent.Response) == "null" || sent.Time.IsZero() {
			t.Errorf("sent result = %+v, want command printJob, the printer's response and a time", sent)
		}
		if d := rs[2]; d.Current != StateSent {
			t.Errorf("duplicate's current = %q, want sent", d.Current)
		}
		// The raw result keeps the field names the README documents.
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(w.last(resultTopic("line1")).Payload, &raw)
		for _, k := range []string{"id", "command", "state", "response", "time", "current"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("result lacks %q: %s", k, w.last(resultTopic("line1")).Payload)
			}
		}
		if _, ok := raw["error"]; ok {
			t.Errorf("result has an empty error: %s", w.last(resultTopic("line1")).Payload)
		}
	})
}

// TestCommandTable runs every row of the command table.
func TestCommandTable(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1", "line2")
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1", "line2"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		rt := resultTopic("line1")

		// printJob with a job, then deselect (job null, and job left out).
		s.send(cmdTopic("line1", "printJob"), map[string]any{"id": "j1", "job": job("j1"), "expireAfter": "10m"})
		w.waitStates(rt, "j1", StateQueued, StateSent)
		s.send(cmdTopic("line1", "printJob"), map[string]any{"id": "d1", "job": nil})
		w.waitStates(rt, "d1", StateQueued, StateSent)
		s.send(cmdTopic("line1", "printJob"), map[string]any{"id": "d2"})
		w.waitStates(rt, "d2", StateQueued, StateSent)
		if n := pl.printed("<deselect>"); n != 2 {
			t.Errorf("deselects that reached the printer: %d, want 2", n)
		}

		// trigger: with a job selected, it prints one label.
		s.send(cmdTopic("line1", "printJob"), map[string]any{"id": "j2", "job": job("j2")})
		w.waitStates(rt, "j2", StateQueued, StateSent)
		before, _ := pl.Sim.Counters("line1")
		s.send(cmdTopic("line1", "trigger"), map[string]any{"id": "t1"})
		w.waitStates(rt, "t1", StateQueued, StateSent)
		if r := w.results(rt); !strings.Contains(string(r[len(r)-1].Response), "line1") || r[len(r)-1].Command != "trigger" {
			t.Errorf("trigger result = %+v", r[len(r)-1])
		}
		after, _ := pl.Sim.Counters("line1")
		if after.Triggers != before.Triggers+1 {
			t.Errorf("triggers %d -> %d, want one more", before.Triggers, after.Triggers)
		}

		// abortPrint goes out at once.
		s.send(cmdTopic("line1", "abortPrint"), map[string]any{"id": "a1"})
		w.waitStates(rt, "a1", StateDone)
		if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/abortPrint"); n != 1 {
			t.Errorf("abortPrint requests = %d, want 1", n)
		}

		// cancel: a command waiting behind another of its printer is cancelled, never sent.
		release := make(chan struct{})
		pl.mu.Lock()
		pl.hold["h1"] = release
		pl.mu.Unlock()
		s.send(cmdTopic("line2", "printJob"), printJobCmd("h1"))
		eventually(t, "h1 at the printer", func() bool { return pl.printed("h1") == 1 })
		s.send(cmdTopic("line2", "printJob"), printJobCmd("c1"))
		w.waitStates(resultTopic("line2"), "c1", StateQueued)
		s.send(cmdTopic("line2", "cancel"), map[string]any{"id": "c1", "attempts": 0})
		eventually(t, "cancel results", func() bool {
			return len(w.statesOf(resultTopic("line2"), "c1")) == 3
		})
		// The entry's cancelled and the cancel's done come in either order.
		if got := w.statesOf(resultTopic("line2"), "c1"); got[0] != StateQueued || !contains(got, StateCancelled) || !contains(got, StateDone) {
			t.Errorf("c1 states %v, want queued, then cancelled (the entry) and done (the cancel)", got)
		}
		close(release)
		w.waitStates(resultTopic("line2"), "h1", StateQueued, StateSent)
		s.send(cmdTopic("line2", "cancel"), map[string]any{"id": "c1", "attempts": 0})
		s.send(cmdTopic("line2", "cancel"), map[string]any{"id": "no-such", "attempts": 1})
		s.send(cmdTopic("line1", "cancel"), map[string]any{"id": "c1", "attempts": 1}) // another printer's command
		w.waitStates(resultTopic("line2"), "no-such", StateFailed)
		w.waitStates(resultTopic("line1"), "c1", StateFailed)
		eventually(t, "second cancel answered", func() bool { return len(w.statesOf(resultTopic("line2"), "c1")) == 4 })
		if got := w.statesOf(resultTopic("line2"), "c1"); got[3] != StateDuplicate {
			t.Errorf("the same cancel again: %v, want duplicate", got)
		}

		// resend: a job whose answer was lost is unknown; resend sends it again.
		pl.mu.Lock()
		pl.hangUp["u1"] = true
		pl.mu.Unlock()
		s.send(cmdTopic("line2", "printJob"), printJobCmd("u1"))
		w.waitStates(resultTopic("line2"), "u1", StateQueued, StateUnknown)
		pl.mu.Lock()
		pl.hangUp["u1"] = false
		pl.mu.Unlock()
		s.send(cmdTopic("line2", "resend"), map[string]any{"id": "u1", "attempts": 1})
		eventually(t, "resend results", func() bool { return len(w.statesOf(resultTopic("line2"), "u1")) == 4 })
		got := w.statesOf(resultTopic("line2"), "u1")
		if got[2] != StateDone && got[3] != StateDone || !contains(got, StateSent) {
			t.Errorf("u1 states %v, want queued, unknown, then done and sent", got)
		}
		if n := pl.printed("u1"); n != 2 {
			t.Errorf("u1 reached the printer %d times, want 2 (the lost one and the resend)", n)
		}
		if n := pl.printed("c1"); n != 0 {
			t.Errorf("the cancelled c1 reached the printer %d times", n)
		}
	})
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestMalformedCommands: every kind of bad command is answered invalid, executes nothing,
// is acknowledged, and the bridge goes on with the next.
func TestMalformedCommands(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	cfg := testConfig(t, bk.URL(), pl, "line1")
	cfg.Printers = append(cfg.Printers, PrinterConfig{Name: "single", URL: pl.URL})
	startBridge(t, cfg)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	long := strings.Repeat("x", 257)
	cases := []struct {
		name, topic, payload, id string
	}{
		{"not JSON", cmdTopic("line1", "printJob"), `{"id":`, ""},
		{"an array", cmdTopic("line1", "printJob"), `[1,2]`, ""},
		{"a string", cmdTopic("line1", "trigger"), `"x"`, ""},
		{"null", cmdTopic("line1", "trigger"), `null`, ""},
		{"empty", cmdTopic("line1", "trigger"), ``, ""},
		{"no id", cmdTopic("line1", "printJob"), `{"job":null}`, ""},
		{"id a number", cmdTopic("line1", "trigger"), `{"id":7}`, ""},
		{"id null", cmdTopic("line1", "trigger"), `{"id":null}`, ""},
		{"id empty", cmdTopic("line1", "trigger"), `{"id":""}`, ""},
		{"id too long", cmdTopic("line1", "trigger"), `{"id":"` + long + `"}`, ""},
		{"id with a control character", cmdTopic("line1", "trigger"), `{"id":"a\u0007b"}`, ""},
		{"not UTF-8", cmdTopic("line1", "trigger"), "{\"id\":\"a\xffb\"}", ""},
		{"unknown member", cmdTopic("line1", "trigger"), `{"id":"m1","job":null}`, "m1"},
		{"misspelt member", cmdTopic("line1", "printJob"), `{"id":"m2","expireafter":"1m"}`, "m2"},
		{"job not an object", cmdTopic("line1", "printJob"), `{"id":"m3","job":"label"}`, "m3"},
		{"job field of the wrong type", cmdTopic("line1", "printJob"), `{"id":"m4","job":{"labelName":5}}`, "m4"},
		{"empty job", cmdTopic("line1", "printJob"), `{"id":"m5","job":{}}`, "m5"},
		{"job the SDK refuses", cmdTopic("line1", "printJob"), `{"id":"m6","job":{"labelName":"a","copies":-1}}`, "m6"},
		{"expireAfter not a duration", cmdTopic("line1", "printJob"), `{"id":"m7","job":null,"expireAfter":"soon"}`, "m7"},
		{"expireAfter negative", cmdTopic("line1", "printJob"), `{"id":"m8","job":null,"expireAfter":"-1m"}`, "m8"},
		{"unknown command", cmdTopic("line1", "reboot"), `{"id":"m9"}`, "m9"},
		{"unknown printer", cmdTopic("nowhere", "trigger"), `{"id":"m10"}`, "m10"},
		{"trigger on single-printer paths", cmdTopic("single", "trigger"), `{"id":"m11"}`, "m11"},
		{"abortPrint on single-printer paths", cmdTopic("single", "abortPrint"), `{"id":"m12"}`, "m12"},
	}
	for i, c := range cases {
		s.send(c.topic, c.payload)
		segment := strings.Split(c.topic, "/")[1]
		eventually(t, c.name, func() bool { return len(w.results(resultTopic(segment))) > countBefore(w, cases[:i], segment) })
		rs := w.results(resultTopic(segment))
		r := rs[len(rs)-1]
		if r.State != StateInvalid || r.ID != c.id || r.Error == "" {
			t.Errorf("%s: result %+v, want invalid with id %q and an error", c.name, r, c.id)
		}
	}
	// Nothing reached the printer, and the bridge goes on.
	if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/printJob") + pl.Sim.Requests("POST", "/api/v3/printers/{name}/trigger"); n != 0 {
		t.Errorf("%d print requests reached the printer", n)
	}
	s.send(cmdTopic("line1", "printJob"), printJobCmd("after"))
	w.waitStates(resultTopic("line1"), "after", StateQueued, StateSent)
}

func countBefore(w *watcher, cases []struct{ name, topic, payload, id string }, segment string) int {
	n := 0
	for _, c := range cases {
		if strings.Split(c.topic, "/")[1] == segment {
			n++
		}
	}
	return n
}

// TestResponseTopic: every result of a command with a Response Topic also goes there, with
// its Correlation Data.
func TestResponseTopic(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		pl := startPlant(t, "line1")
		w := watch(t, bk.URL(), "#")
		startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
		w.waitOnline(1)
		s := newSender(t, bk.URL())
		withReply := func(corr string) func(*paho.Publish) {
			return func(p *paho.Publish) {
				p.Properties = &paho.PublishProperties{ResponseTopic: "mes/replies/7", CorrelationData: []byte(corr)}
			}
		}
		s.send(cmdTopic("line1", "printJob"), printJobCmd("r1"), withReply("corr-1"))
		s.send(cmdTopic("line1", "printJob"), `{"id":"r2","job":{}}`, withReply("corr-2"))
		s.send(cmdTopic("line1", "abortPrint"), `{"id":"r3"}`, withReply("corr-3"))
		w.waitStates("mes/replies/7", "r1", StateQueued, StateSent)
		w.waitStates("mes/replies/7", "r2", StateInvalid)
		w.waitStates("mes/replies/7", "r3", StateDone)
		w.waitStates(resultTopic("line1"), "r1", StateQueued, StateSent)
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, p := range w.got {
			if p.Topic != "mes/replies/7" {
				continue
			}
			var r Result
			_ = json.Unmarshal(p.Payload, &r)
			want := map[string]string{"r1": "corr-1", "r2": "corr-2", "r3": "corr-3"}[r.ID]
			if p.Properties == nil || string(p.Properties.CorrelationData) != want {
				t.Errorf("%s on the response topic: correlation data %v, want %q", r.ID, p.Properties, want)
			}
		}
	})
}

var _ = fmt.Sprint
