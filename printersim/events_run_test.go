package printersim

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
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

// TestUIEventsClientsBounded: the events take at most maxSubscribers clients at once; one more
// is answered 503 and taken again once a client has gone, so clients that never read cannot
// grow the simulator's memory and the work of each trigger without bound.
func TestUIEventsClientsBounded(t *testing.T) {
	s := startSim(t, WithUI())
	clients := make([]*sseClient, 0, maxSubscribers)
	for range maxSubscribers {
		clients = append(clients, openEvents(t, s))
	}
	// open opens one more client and returns its status and the start of its body.
	open := func() (int, string) {
		t.Helper()
		resp, err := s.client.Get(s.srv.URL + "/ui/events")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return resp.StatusCode, ""
		}
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := open(); code != http.StatusServiceUnavailable || !strings.Contains(body, "64 clients") {
		t.Fatalf("client %d: %d %s, want 503 naming the bound", maxSubscribers+1, code, body)
	}
	clients[0].resp.Body.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		code, _ := open()
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a client went and another is still refused: %d", code)
		}
	}
}
