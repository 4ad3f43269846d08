package printersim

import (
	"fmt"
	"testing"
)

// TestUIEventsOfAnotherRun: a page left open while the simulator restarts on the same address
// comes back with an event id of the previous run; it is told to reload, never given this
// run's events as the ones it missed.
func TestUIEventsOfAnotherRun(t *testing.T) {
	a := startSim(t, WithUI())
	for range 2 {
		_, _ = a.srv.Sim.PressTrigger("line1")
	}
	last := uiList(t, a, "line1").LastEvent
	b := startSim(t, WithUI())
	for range 5 {
		_, _ = b.srv.Sim.PressTrigger("line1")
	}
	current := uiList(t, b, "line1").LastEvent
	if ev := openEvents(t, b, "Last-Event-ID", fmt.Sprint(last)).next(); ev.name != "reload" || ev.id != fmt.Sprint(current) {
		t.Errorf("Last-Event-ID %d of the previous run: %+v, want a reload with id %d", last, ev, current)
	}
	c := openEventsURL(t, b, fmt.Sprintf("/ui/events?after=%d", last))
	if ev := c.next(); ev.name != "reload" {
		t.Errorf("?after=%d of the previous run: %+v, want a reload", last, ev)
	}
}
