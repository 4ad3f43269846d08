package printersim

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestPressTriggerAndReset: a trigger from the line has the endpoint's effects, a bounce
// included, and a reset zeroes the counters but keeps the job.
func TestPressTriggerAndReset(t *testing.T) {
	s := startSim(t, WithPrinters("line1", "line2"))
	sim := s.srv.Sim
	if printed, err := sim.PressTrigger("line1"); err != nil || printed {
		t.Fatalf("no job: printed %v, err %v", printed, err)
	}
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L","copies":2}`, 200)
	for i := range 2 {
		if printed, err := sim.PressTrigger("line1"); err != nil || !printed {
			t.Fatalf("press %d: printed %v, err %v", i, printed, err)
		}
	}
	// Two copies printed, so the job is done and the next press bounces.
	if printed, _ := sim.PressTrigger("line1"); printed {
		t.Error("a finished job printed again")
	}
	want := Counters{Triggers: 4, TriggerBounces: 2, PrintedLabels: 2}
	var got Counters
	_ = json.Unmarshal(s.want("GET", "/api/v3/printers/line1/printCounters", "", "", 200), &got)
	if got != want || len(sim.PrintEvents("line1")) != 2 {
		t.Errorf("counters %+v, want %+v; %d events", got, want, len(sim.PrintEvents("line1")))
	}
	if _, err := sim.PressTrigger("nope"); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("unknown printer: %v", err)
	}
	if s.srv.Sim.Requests("POST", "/api/v3/printers/{name}/trigger") != 0 {
		t.Error("a press went over HTTP")
	}

	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	if err := sim.ResetCounters("line1"); err != nil {
		t.Fatal(err)
	}
	if c, _ := sim.Counters("line1"); c != (Counters{}) || sim.QueueLength("line1") != 1 {
		t.Errorf("after reset: %+v, queue %d", c, sim.QueueLength("line1"))
	}
	if err := sim.ResetCounters("nope"); err == nil {
		t.Error("reset of an unknown printer")
	}
}

// TestAutoTrigger: the running line prints on printers with a job and leaves the others alone.
func TestAutoTrigger(t *testing.T) {
	s := startSim(t, WithPrinters("line1", "line2"), WithAutoTrigger(5*time.Millisecond))
	sim := s.srv.Sim
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L","copies":3}`, 200)
	for deadline := time.Now().Add(10 * time.Second); sim.QueueLength("line1") > 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	c1, _ := sim.Counters("line1")
	c2, _ := sim.Counters("line2")
	if c1.PrintedLabels != 3 || c2 != (Counters{}) {
		t.Errorf("line1 %+v, line2 %+v", c1, c2)
	}
	// The job is done: the line stops pressing, so the counters stay where they are.
	if c1.Triggers != c1.PrintedLabels {
		t.Errorf("line1 bounced: %+v", c1)
	}
	sim.Close()
	sim.Close() // twice is fine; Server.Close calls it a third time
}

// TestSetStatus: the status answer follows SetStatus.
func TestSetStatus(t *testing.T) {
	s := startSim(t)
	s.srv.Sim.SetStatus("ERROR", "RED", "lid open")
	var st statusBody
	_ = json.Unmarshal(s.want("GET", "/api/v3/status", "", "", 200), &st)
	if st.State != "ERROR" || st.RagStatus != "RED" || len(st.Errors) != 1 || st.Errors[0] != "lid open" || len(st.Ink) != 1 {
		t.Errorf("status %+v", st)
	}
	s.srv.Sim.SetStatus("STARTED", "GREEN")
	b := s.want("GET", "/api/v3/status", "", "", 200)
	if !strings.Contains(string(b), `"errors":[]`) {
		t.Errorf("no errors is not []: %s", b)
	}
}
