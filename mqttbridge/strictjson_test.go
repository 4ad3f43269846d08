package mqttbridge

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestIDsArriveAsSent: encoding/json turns a lone surrogate escape into U+FFFD and keeps the
// last of two members of one name; the bridge refuses both, at any depth, so "o-\ud800",
// "o-\udfff" and "o-\ufffd" are not one id and a second "id" cannot replace the first.
func TestIDsArriveAsSent(t *testing.T) {
	cases := []struct {
		name, payload string
		id            string // the id the refusal names; "" when the id itself is at fault
		msg           string // in the error
	}{
		{"lone high surrogate in the id", `{"id":"o-\ud800"}`, "", `\ud800`},
		{"lone low surrogate in the id", `{"id":"o-\udfff"}`, "", `\udfff`},
		{"high surrogate followed by a non-surrogate", `{"id":"o-\ud800\u0041"}`, "", `\ud800`},
		{"two highs", `{"id":"o-\ud800\ud800"}`, "", `\ud800`},
		{"reversed pair", `{"id":"o-\udc00\ud800"}`, "", `\udc00`},
		{"high at the end", `{"id":"o-\uD800"}`, "", `\uD800`},
		{"lone surrogate in the job", `{"id":"j1","job":{"labelName":"a","description":"x\udc00"}}`, "j1", `"job.description"`},
		{"lone surrogate in label data", `{"id":"j2","job":{"labelData":{"objs":["\ud9ff"]}}}`, "j2", `a string in "job.labelData.objs"`},
		{"lone surrogate in a member name", `{"id":"j3","job":{"labelData":{"\ud800":1}}}`, "j3", "member name"},
		{"two ids", `{"id":"a","id":"b"}`, "", `member "id" appears twice in the command`},
		{"two ids, one escaped", `{"id":"a","\u0069d":"b"}`, "", `"id" appears twice`},
		{"two jobs", `{"id":"j4","job":null,"job":{"labelName":"a"}}`, "j4", `"job" appears twice`},
		{"two members in the job", `{"id":"j5","job":{"labelName":"a","copies":1,"copies":2}}`, "j5", `member "copies" appears twice in "job"`},
		{"two members deep in label data", `{"id":"j6","job":{"labelData":{"objs":[{"t":1,"t":2}]}}}`, "j6", `"job.labelData.objs[]"`},
		{"two members on the trigger", `{"id":"t1","id":"t1"}`, "", `"id" appears twice`},
	}
	for _, c := range cases {
		name := cmdPrintJob
		if strings.HasPrefix(c.payload, `{"id":"t`) {
			name = cmdTrigger
		}
		cmd, err := parseCommand(name, []byte(c.payload))
		if !errors.Is(err, errInvalid) {
			t.Errorf("%s: %s: err %v, want invalid", c.name, c.payload, err)
			continue
		}
		if cmd.id != c.id || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: id %q, err %q; want id %q and an error with %s", c.name, cmd.id, err, c.id, c.msg)
		}
	}
	// What arrives as sent is taken: a real U+FFFD, either spelling of a surrogate pair,
	// escapes that only look like surrogates, and one name in two objects.
	for _, c := range []struct{ payload, id string }{
		{`{"id":"o-\ufffd"}`, "o-\ufffd"},
		{`{"id":"o-` + "\ufffd" + `"}`, "o-\ufffd"},
		{`{"id":"o-\ud83d\ude00"}`, "o-😀"},
		{`{"id":"o-\uD83D\uDE00"}`, "o-😀"},
		{`{"id":"o-😀"}`, "o-😀"},
		{`{"id":"o-\\ud800"}`, `o-\ud800`},
		{`{"id":"o-\"\\\"\\\\ud800"}`, `o-"\"\\ud800`},
		{`{"id":"x","job":{"labelName":"a","labelData":{"id":"x","a":{"id":1}}}}`, "x"},
		{`{"id":"y","job":{"labelData":{"objs":[{"a":1},{"a":2}]}}}`, "y"},
	} {
		cmd, err := parseCommand(cmdPrintJob, []byte(c.payload))
		if err != nil || cmd.id != c.id {
			t.Errorf("%s: id %q, err %v; want id %q accepted", c.payload, cmd.id, err, c.id)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.payload), &m); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoneSurrogateIsNotADuplicate reproduces the report end to end: "o-\ufffd" is printed,
// and "o-\ud800" and "o-\udfff" after it are refused as invalid, not answered duplicate of it;
// a payload with two ids is refused, not taken with the last.
func TestLoneSurrogateIsNotADuplicate(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	rt := resultTopic("line1")
	s.send(cmdTopic("line1", "printJob"), `{"id":"o-\ufffd","job":{"labelData":{"t":1},"description":"o-fffd"}}`)
	w.waitStates(rt, "o-\ufffd", StateQueued, StateSent)
	s.send(cmdTopic("line1", "printJob"), `{"id":"o-\ud800","job":{"labelData":{"t":1},"description":"o-d800"}}`)
	s.send(cmdTopic("line1", "printJob"), `{"id":"o-\udfff","job":{"labelData":{"t":1},"description":"o-dfff"}}`)
	s.send(cmdTopic("line1", "printJob"), `{"id":"dup-a","job":{"labelData":{"t":1},"description":"dup"},"id":"dup-b"}`)
	s.send(cmdTopic("line1", "printJob"), printJobCmd("after"))
	w.waitStates(rt, "after", StateQueued, StateSent)
	var states []string
	for _, r := range w.results(rt) {
		if r.ID != "after" {
			states = append(states, r.ID+":"+r.State)
		}
	}
	want := []string{"o-\ufffd:queued", "o-\ufffd:sent", ":invalid", ":invalid", ":invalid"}
	if !equal(states, want) {
		t.Errorf("results %q, want %q", states, want)
	}
	for _, d := range []string{"o-d800", "o-dfff", "dup"} {
		if n := pl.printed(d); n != 0 {
			t.Errorf("%s reached the printer %d times", d, n)
		}
	}
}
