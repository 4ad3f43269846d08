package mqttbridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestJobAttributesStrict: a job member that is not one of the maker's documented attributes,
// spelled exactly, is refused, naming it and the closest known one; every documented one passes.
func TestJobAttributesStrict(t *testing.T) {
	for _, c := range []struct{ job, want string }{
		{`{"labelName":"MEDIUM","copeis":1}`, `invalid command: "copeis": not an attribute of a print job; did you mean "copies"?`},
		{`{"labelName":"MEDIUM","Copies":1}`, `invalid command: "Copies": not an attribute of a print job; did you mean "copies"?`},
		{`{"LABELNAME":"MEDIUM"}`, `invalid command: "LABELNAME": not an attribute of a print job; did you mean "labelName"?`},
		{`{"labelName":"MEDIUM","repeatprint":true}`, `invalid command: "repeatprint": not an attribute of a print job; did you mean "repeatPrint"?`},
		{`{"labelName":"MEDIUM","colour":"red"}`, `invalid command: "colour": not an attribute of a print job`},
		// The first unknown member in sorted order, whatever the order on the wire.
		{`{"zz":1,"labelName":"MEDIUM","qeueu":true}`, `invalid command: "qeueu": not an attribute of a print job; did you mean "queue"?`},
	} {
		_, err := parseCommand(cmdPrintJob, []byte(`{"id":"x-3","job":`+c.job+`}`))
		if !errors.Is(err, errInvalid) || err.Error() != c.want {
			t.Errorf("job %s: %v, want %q", c.job, err, c.want)
		}
	}
	// Every documented attribute, with a value of its type, is taken.
	full := map[string]any{
		"labelName": "MEDIUM", "labelColumn": "Label", "labelData": map[string]any{"objs": []any{}},
		"tableName": "T", "keyColumn": "SKU", "key": "S1", "copies": 2, "copiesColumn": "N", "queue": true,
		"freeze": false, "firstRow": 1, "rowCount": 2, "printedColumn": "P", "printDelay": 1.5,
		"autoPrintGap": 10, "autoPrintInterval": 20, "checkpoint": true, "description": "d", "repeatPrint": true,
	}
	if len(full) != len(jobAttributes) {
		t.Fatalf("the test names %d attributes, the bridge knows %d: %v", len(full), len(jobAttributes), jobAttributes)
	}
	b, _ := json.Marshal(map[string]any{"id": "all", "job": full})
	cmd, err := parseCommand(cmdPrintJob, b)
	if err != nil {
		t.Fatalf("every documented attribute: %v", err)
	}
	if cmd.job.Copies != 2 || cmd.job.Description != "d" || len(cmd.job.Extra) != 1 || fmt.Sprintf("%s", cmd.job.Extra["repeatPrint"]) != "true" {
		t.Errorf("job %+v", cmd.job)
	}
}

// TestJobTypoNotPrinted: through the broker, a job with a misspelt "copies" is answered invalid
// with the suggestion and never reaches the printer.
func TestJobTypoNotPrinted(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), `{"id":"x-3","job":{"labelData":{"text":"x-3"},"description":"x-3","copeis":1}}`)
	w.waitStates(resultTopic("line1"), "x-3", StateInvalid)
	rs := w.results(resultTopic("line1"))
	if got := rs[len(rs)-1].Error; !strings.Contains(got, `"copeis": not an attribute of a print job; did you mean "copies"?`) {
		t.Errorf("error %q", got)
	}
	s.send(cmdTopic("line1", "printJob"), printJobCmd("after"))
	w.waitStates(resultTopic("line1"), "after", StateQueued, StateSent)
	if n := pl.Sim.Requests("POST", "/api/v3/printers/{name}/printJob"); n != 1 {
		t.Errorf("%d printJob requests reached the printer, want 1 (the job after)", n)
	}
}

// TestJobWithoutCopiesPrintsEveryTrigger holds what every doc says of a job without copies:
// it prints on every trigger until it is deselected.
func TestJobWithoutCopiesPrintsEveryTrigger(t *testing.T) {
	pl := startPlant(t, "line1")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	startBridge(t, testConfig(t, bk.URL(), pl, "line1"))
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", "printJob"), printJobCmd("endless"))
	w.waitStates(resultTopic("line1"), "endless", StateQueued, StateSent)
	printed := func(id string) int {
		for _, r := range w.results(resultTopic("line1")) {
			if r.ID == id && r.State == StateSent {
				var resp struct{ Printed int }
				_ = json.Unmarshal(r.Response, &resp)
				return resp.Printed
			}
		}
		return -1
	}
	for i := range 3 {
		id := fmt.Sprintf("t-%d", i)
		s.send(cmdTopic("line1", "trigger"), map[string]any{"id": id})
		w.waitStates(resultTopic("line1"), id, StateQueued, StateSent)
		if n := printed(id); n != 1 {
			t.Errorf("trigger %d printed %d labels, want 1", i, n)
		}
	}
	s.send(cmdTopic("line1", "printJob"), `{"id":"deselect"}`)
	w.waitStates(resultTopic("line1"), "deselect", StateQueued, StateSent)
	s.send(cmdTopic("line1", "trigger"), `{"id":"t-after"}`)
	// The printer refuses a trigger with no job selected: nothing prints.
	w.waitStates(resultTopic("line1"), "t-after", StateQueued, StateRejected)
}
