package mqttbridge

import (
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestAbortPrintHoldsUpOnlyItsPrinter: printer p1 answers abortPrint 503 with Retry-After 1,
// which the SDK retries, so p1's abortPrint is in flight for about 3 s. A printJob for p1 sent
// after it waits for its answer and reaches the printer after the last abortPrint request; a
// printJob and a trigger for p2 sent after both are sent while p1's abortPrint is still in
// flight, not after it.
func TestAbortPrintHoldsUpOnlyItsPrinter(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
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

// TestOnePrinterHoldsUpNoOther: p1's deselect (a printJob without a job) is held while it is
// handled, before its commit (as a slow database holds it). p2's printJob, sent after it, is
// queued and sent meanwhile; p1's printJob, sent after the deselect, waits for it. Once the
// deselect goes on, both of p1's
// commands are queued in the order they came, and each command reaches its printer once.
func TestOnePrinterHoldsUpNoOther(t *testing.T) {
	pl := startPlant(t, "p1", "p2")
	bk := newEmbedded(t)
	w := watch(t, bk.URL(), prefix+"/#")
	held, release := make(chan struct{}), make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	b, err := New(testConfig(t, bk.URL(), pl, "p1", "p2"), withCrash(func(kind, point string) {
		if kind == "deselect" && point == crashBeforeCommit {
			holdOnce.Do(func() { close(held) })
			<-release
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	runBridge(t, b)
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo) // before the bridge stops, which waits for the command held
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("p1", "printJob"), map[string]any{"id": "d1"})
	select {
	case <-held:
	case <-time.After(waitLimit):
		t.Fatal("p1's deselect never reached its commit")
	}
	s.send(cmdTopic("p1", "printJob"), printJobCmd("x1"))
	s.send(cmdTopic("p2", "printJob"), printJobCmd("y1"))
	// Some 10 ms when nothing holds it up; a bound for a loaded machine.
	deadline := time.Now().Add(15 * time.Second)
	for pl.printed("y1") == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if pl.printed("y1") == 0 {
		t.Fatal("p2's printJob was not sent within 15 s while p1's deselect was held: one printer's command held up another's")
	}
	if st := w.statesOf(resultTopic("p1"), "x1"); len(st) != 0 {
		t.Errorf("p1's printJob answered %v while the deselect before it was held, want nothing yet", st)
	}
	letGo()
	w.waitStates(resultTopic("p1"), "d1", StateQueued, StateSent)
	w.waitStates(resultTopic("p1"), "x1", StateQueued, StateSent)
	var queued []string
	for _, r := range w.results(resultTopic("p1")) {
		if r.State == StateQueued {
			queued = append(queued, r.ID)
		}
	}
	if !equal(queued, []string{"d1", "x1"}) {
		t.Errorf("p1's commands queued in the order %v, want [d1 x1]", queued)
	}
	time.Sleep(100 * time.Millisecond) // a second printJob would show by now
	if n, m := pl.printed("x1"), pl.printed("y1"); n != 1 || m != 1 {
		t.Errorf("x1 reached p1 %d times, y1 p2 %d times; want once each", n, m)
	}
}

// TestHeldCommandSize: a command waiting for its turn takes 40 bytes of its printer's queue
// (80 before, with a whole reply for the Sparkplug device alone), which a flood fills with
// thousands.
func TestHeldCommandSize(t *testing.T) {
	if n := unsafe.Sizeof(heldCommand{}); n > 40 {
		t.Errorf("a queued command takes %d bytes of the queue, want at most 40", n)
	}
}
