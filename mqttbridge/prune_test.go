package mqttbridge

import (
	"testing"
	"time"
)

// TestPruneOnSchedule: with outbox.prune_after 2s, a job sent is pruned within a few seconds
// and its id kept: the same command again is answered duplicate with current pruned, and the
// printer sees it once.
func TestPruneOnSchedule(t *testing.T) {
	t.Parallel() // it mostly waits, on a broker, printers and state of its own
	pl := startPlant(t, "line1")
	bk := startTestBroker(t)
	w := watch(t, bk.URL(), "#")
	cfg := testConfig(t, bk.URL(), pl, "line1")
	cfg.Outbox.PruneAfter = 2 * time.Second
	startBridge(t, cfg)
	w.waitOnline(1)
	s := newSender(t, bk.URL())
	s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("old"))
	w.waitStates(resultTopic("line1"), "old", StateQueued, StateSent)
	pruned := func() bool {
		for _, r := range w.results(resultTopic("line1")) {
			if r.ID == "old" && r.State == StateDuplicate && r.Current == StatePruned {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(waitLimit); !pruned(); time.Sleep(500 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the sent job was not pruned")
		}
		s.send(cmdTopic("line1", cmdPrintJob), printJobCmd("old"))
	}
	if n := pl.printed("old"); n != 1 {
		t.Errorf("the job reached the printer %d times, want once", n)
	}
}

// TestPruneAfterConfig: the default is 30 days, a value below 1s is refused naming the field,
// and the schedule runs every quarter of it, within 1 s and 1 h.
func TestPruneAfterConfig(t *testing.T) {
	var c Config
	if err := c.validatePruneAfter(); err != nil || c.Outbox.PruneAfter != 30*24*time.Hour {
		t.Errorf("default: %v, %v", c.Outbox.PruneAfter, err)
	}
	c.Outbox.PruneAfter = time.Millisecond
	if err, ok := c.validatePruneAfter().(*ConfigError); !ok || err.Field != "outbox.prune_after" {
		t.Errorf("1ms: %v, want an error naming outbox.prune_after", err)
	}
	for after, want := range map[time.Duration]time.Duration{2 * time.Second: time.Second, time.Minute: 15 * time.Second, 30 * 24 * time.Hour: time.Hour} {
		if got := pruneEvery(after); got != want {
			t.Errorf("pruneEvery(%v) = %v, want %v", after, got, want)
		}
	}
}
