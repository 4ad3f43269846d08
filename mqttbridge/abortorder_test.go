package mqttbridge

import (
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestAbortPrintHoldsUpOnlyItsPrinter: printer p1 answers abortPrint 503 with Retry-After 1,
// which the SDK retries, so p1's abortPrint is in flight for about 3 s. A printJob for p1 sent
// after it waits for its answer and reaches the printer after the last abortPrint request; a
// printJob and a trigger for p2 sent after both are sent while p1's abortPrint is still in
// flight, not after it.
func TestAbortPrintHoldsUpOnlyItsPrinter(t *testing.T) {
	eachBroker(t, func(t *testing.T, bk testBroker) {
		ap := startAbortPlant(t, "p1", "p2")
		w := watch(t, bk.URL(), prefix+"/#")
		startBridge(t, testConfig(t, bk.URL(), ap.plant, "p1", "p2"))
		w.waitOnline(1)
		ap.Sim.InjectFault(printersim.Fault{Method: "POST", Route: "/api/v3/printers/{name}/abortPrint", Status: 503, RetryAfter: "1"})
		s := newSender(t, bk.URL())
		s.send(cmdTopic("p1", "abortPrint"), map[string]any{"id": "a1"})
		eventually(t, "p1's abortPrint at the printer", func() bool { return len(ap.times("p1", "abortPrint")) > 0 })
		began := ap.times("p1", "abortPrint")[0]
		s.send(cmdTopic("p1", "printJob"), printJobCmd("x1"))
		s.send(cmdTopic("p2", "printJob"), printJobCmd("y1"))
		s.send(cmdTopic("p2", "trigger"), map[string]any{"id": "y2"})
		w.waitStates(resultTopic("p2"), "y1", StateQueued, StateSent)
		w.waitStates(resultTopic("p2"), "y2", StateQueued, StateSent)
		p2Done := time.Now()
		if st := w.statesOf(resultTopic("p1"), "a1"); len(st) != 0 {
			t.Errorf("p2's printJob and trigger were sent only after p1's abortPrint was answered (%v): one printer's abortPrint held up another's commands", st)
		} else if n := len(ap.times("p1", "printJob")); n != 0 {
			t.Errorf("p1's printJob reached the printer while its abortPrint was in flight")
		}
		w.waitStates(resultTopic("p1"), "a1", StateFailed)
		answered := time.Now()
		w.waitStates(resultTopic("p1"), "x1", StateQueued, StateSent)
		aborts, jobs := ap.times("p1", "abortPrint"), ap.times("p1", "printJob")
		if len(jobs) != 1 || !jobs[0].After(aborts[len(aborts)-1]) {
			t.Errorf("p1's printJob reached the printer at %v, its abortPrint's requests at %v: want the printJob once, after the last abortPrint", jobs, aborts)
		}
		t.Logf("p2's printJob and trigger sent %v after p1's abortPrint began; p1's abortPrint (%d requests) answered after %v",
			p2Done.Sub(began).Round(time.Millisecond), len(aborts), answered.Sub(began).Round(time.Millisecond))
	})
}
