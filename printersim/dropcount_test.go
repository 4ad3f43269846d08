package printersim

import (
	"testing"
	"time"
)

// TestUIDroppedCountsKept: the list's count of pictures the renderer's full queue skipped
// counts the kept prints alone, as the list marks them, not prints gone from it.
func TestUIDroppedCountsKept(t *testing.T) {
	d := &testDrawer{hold: make(chan struct{})}
	s := startSim(t, WithUI(), WithPictures(d.draw))
	defer close(d.hold)
	s.want("PUT", "/api/v3/labels/L", "application/json", `{"format":3,"width":50,"height":20,"objs":[]}`, 204)
	s.want("POST", "/api/v3/printers/line1/printJob", "application/json", `{"labelName":"L"}`, 200)
	// One drawing held and the queue full: the 20 prints after them and the next KeptPrints
	// are skipped, and those 20 then leave the list.
	press := func(n int) {
		for i := range n {
			if printed, _ := s.srv.Sim.PressTrigger("line1"); !printed {
				t.Fatalf("trigger %d did not print", i+1)
			}
		}
	}
	press(1)
	// The renderer holds the first drawing before the queue fills, so that no place frees up.
	for deadline := time.Now().Add(10 * time.Second); d.count() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the renderer did not start drawing")
		}
	}
	press(renderQueue + 20 + KeptPrints)
	l := uiList(t, s, "line1")
	deferred := 0
	for _, e := range l.Prints {
		if e.Deferred {
			deferred++
		}
	}
	if deferred != KeptPrints || l.Dropped != int64(deferred) {
		t.Errorf("%d kept prints marked skipped, the list counts %d; want %d both", deferred, l.Dropped, KeptPrints)
	}
}
