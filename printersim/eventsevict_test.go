package printersim

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestUIEventsIdleClientsGiveWay: 64 clients open the events and never read; a new client is
// refused (503) while they are younger than evictAfter (shortened to 300 ms here, 30 s in a
// run) and once they are older takes the place of the oldest, whose stream ends.
func TestUIEventsIdleClientsGiveWay(t *testing.T) {
	s := startSim(t, WithUI())
	const after = 300 * time.Millisecond
	s.srv.Sim.mu.Lock()
	s.srv.Sim.ui.evictAfter = after
	s.srv.Sim.mu.Unlock()
	clients := make([]*sseClient, 0, maxSubscribers)
	opened := time.Now()
	for range maxSubscribers {
		clients = append(clients, openEvents(t, s))
	}
	open := func() (*http.Response, string) {
		t.Helper()
		resp, err := s.client.Get(s.srv.URL + "/ui/events")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode == http.StatusOK {
			t.Cleanup(func() { resp.Body.Close() })
			return resp, ""
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	if resp, body := open(); time.Since(opened) < after && (resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(body, "64 clients") || resp.Header.Get("Retry-After") != "1") {
		t.Fatalf("client %d while the others are young: %d %s, want 503", maxSubscribers+1, resp.StatusCode, body)
	}
	time.Sleep(after)
	if resp, body := open(); resp.StatusCode != http.StatusOK {
		t.Fatalf("client %d once the others are %v old: %d %s, want 200", maxSubscribers+1, after, resp.StatusCode, body)
	}
	// The oldest client's stream ended: reading it reaches its end.
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, clients[0].rd)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the oldest client's stream: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("the oldest client's stream did not end")
		clients[0].resp.Body.Close()
	}
}
