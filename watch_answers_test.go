package labelprinter

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// These tests run a watch against a hand-written printer over real HTTP whose answers follow a
// script: partial counters, restarts between two polls, failures and a return with the same
// values. The Client's waits are recorded instead of slept, so nothing depends on timing.

// scripted answers the n-th request with script[n], and every later one with the last entry.
// An entry is "<status> <body>".
type scripted struct {
	mu     sync.Mutex
	script []string
	served int
}

func (s *scripted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	entry := s.script[min(s.served, len(s.script)-1)]
	s.served++
	s.mu.Unlock()
	code, body, _ := strings.Cut(entry, " ")
	status, err := strconv.Atoi(code)
	if err != nil {
		panic("bad script entry " + strconv.Quote(entry))
	}
	w.Header().Set("Content-Type", mediaJSON)
	w.WriteHeader(status)
	io.WriteString(w, body)
}

func (s *scripted) requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.served
}

// scriptedClient serves script and returns a one-attempt Client whose waits return at once.
// A watch that outlives its script by 100 polls is ended, so a wrong watch fails the test
// instead of hanging it.
func scriptedClient(t *testing.T, script ...string) (*scripted, *Client) {
	t.Helper()
	s := &scripted{script: script}
	srv := rtStart(t, func(_ int64, w http.ResponseWriter, r *http.Request) { s.ServeHTTP(w, r) })
	c, _ := rtClient(t, srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}))
	c.sleep = func(ctx context.Context, _ time.Duration) error {
		if s.requests() > len(script)+100 {
			return errors.New("the script ended long ago")
		}
		return ctx.Err()
	}
	return s, c
}

func countersBody(triggers, bounces, printed int) string {
	return fmt.Sprintf(`200 {"triggers":%d,"triggerBounces":%d,"printedLabels":%d}`, triggers, bounces, printed)
}

// The 2xx counters answers that lack a counter, as a busy printer or a proxy's placeholder
// page sends them.
var partialCounters = []string{
	`200 {}`,
	`200 {"status":"busy"}`,
	`200 {"triggers":102}`,
	`200 {"triggers":102,"triggerBounces":5}`,
	`200 {"triggers":null,"triggerBounces":5,"printedLabels":497}`,
	`200 {"triggers":102,"triggerBounces":5,"printedLabels":null}`,
	`200 {"triggers":"102","triggerBounces":5,"printedLabels":497}`,
	`200 {"triggers":102,"triggerBounces":true,"printedLabels":497}`,
	`200 {"triggers":102,"triggerBounces":5,"printedLabels":[497]}`,
	`200 {"Triggers":102,"TriggerBounces":5}`,
}

// TestCountersPartialBody: every partial counters answer is a *DecodeError with the 2xx status
// and a sample of the body, never zeros.
func TestCountersPartialBody(t *testing.T) {
	for _, entry := range partialCounters {
		_, c := scriptedClient(t, entry)
		pc, err := c.Printers.Counters(t.Context(), "line1")
		var de *DecodeError
		if !errors.As(err, &de) || pc != nil || de.StatusCode != 200 || de.What != "PrintCounters" || de.Snippet != entry[4:] {
			t.Errorf("%s: %+v, %v", entry, pc, err)
		}
	}
	t.Logf("%d partial counters answers, each a *DecodeError", len(partialCounters))
	// Every JSON form of a number, and members in any order, still decode.
	_, c := scriptedClient(t, `200 {"printedLabels":4.97e2,"triggerBounces":5.0,"triggers":102,"extra":null}`)
	if pc, err := c.Printers.Counters(t.Context(), "line1"); err != nil || *pc != (PrintCounters{102, 5, 497}) {
		t.Errorf("%+v, %v", pc, err)
	}
}

// TestWatchCountersPartialBodies: partial answers between two readings are failed polls: no
// Reset, no event, and the next good answer carries the growth since the last good one.
// WaitPrinted rides them out and does not report a reset.
func TestWatchCountersPartialBodies(t *testing.T) {
	script := append([]string{countersBody(100, 5, 495)}, partialCounters...)
	script = append(script, countersBody(102, 5, 497))
	s, c := scriptedClient(t, script...)
	var changes []CountersChange
	decodeErrs := 0
	for ch, err := range c.Printers.WatchCounters(t.Context(), "line1", &WatchOptions{Interval: 10 * time.Millisecond}) {
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) || ch != (CountersChange{}) {
				t.Fatalf("poll %d: %+v, %v", s.requests(), ch, err)
			}
			decodeErrs++
			continue
		}
		ch.Time = time.Time{}
		changes = append(changes, ch)
		if len(changes) == 2 {
			break
		}
	}
	want := []CountersChange{
		{Counters: PrintCounters{100, 5, 495}},
		{Counters: PrintCounters{102, 5, 497}, Delta: PrintCounters{Triggers: 2, PrintedLabels: 2}},
	}
	if len(changes) != 2 || changes[0] != want[0] || changes[1] != want[1] || decodeErrs != len(partialCounters) {
		t.Errorf("changes %+v with %d decode errors,\nwant %+v with %d", changes, decodeErrs, want, len(partialCounters))
	}

	s, c = scriptedClient(t, script...)
	p, err := c.Printers.WaitPrinted(t.Context(), "line1", PrintCounters{100, 5, 495}, 2, &WatchOptions{Interval: 10 * time.Millisecond})
	if err != nil || p.Printed != 2 || p.Counters != (PrintCounters{102, 5, 497}) || s.requests() != len(script) {
		t.Errorf("WaitPrinted %+v, %v after %d polls", p, err, s.requests())
	}
}

// TestWatchCountersRestartDelta: a restart between two polls is a Reset whose Delta is what
// the printer counted since it started again, so the deltas add up to every label printed.
func TestWatchCountersRestartDelta(t *testing.T) {
	// 497 printed; the printer restarts and prints 3 before the next poll, then 2 more.
	_, c := scriptedClient(t, countersBody(500, 3, 497), countersBody(3, 0, 3), countersBody(5, 0, 5))
	var changes []CountersChange
	for ch, err := range c.Printers.WatchCounters(t.Context(), "line1", &WatchOptions{Interval: 10 * time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		ch.Time = time.Time{}
		changes = append(changes, ch)
		if len(changes) == 3 {
			break
		}
	}
	want := []CountersChange{
		{Counters: PrintCounters{500, 3, 497}},
		{Counters: PrintCounters{3, 0, 3}, Delta: PrintCounters{3, 0, 3}, Reset: true},
		{Counters: PrintCounters{5, 0, 5}, Delta: PrintCounters{2, 0, 2}},
	}
	sum := int64(0)
	for i := range want {
		if i >= len(changes) || changes[i] != want[i] {
			t.Fatalf("changes %+v,\nwant %+v", changes, want)
		}
		sum += changes[i].Delta.PrintedLabels
	}
	if sum != 5 {
		t.Errorf("the deltas add up to %d labels, want the 5 printed since the first reading", sum)
	}
	// WaitPrinted still refuses to count across a restart.
	_, c = scriptedClient(t, countersBody(500, 3, 497), countersBody(3, 0, 3))
	if p, err := c.Printers.WaitPrinted(t.Context(), "line1", PrintCounters{500, 3, 497}, 5, nil); !errors.Is(err, ErrCountersReset) {
		t.Errorf("WaitPrinted across a restart: %+v, %v", p, err)
	}
}

// TestWatchCountersBackAfterFailures: the first answer after failed polls is yielded even with
// the same values; later unchanged answers are not.
func TestWatchCountersBackAfterFailures(t *testing.T) {
	same := countersBody(7, 1, 6)
	s, c := scriptedClient(t, same, `503 {"message":"busy"}`, `502 <html>bad gateway</html>`, same, same, same, countersBody(8, 1, 7))
	type item struct {
		ch  CountersChange
		err bool
	}
	var got []item
	for ch, err := range c.Printers.WatchCounters(t.Context(), "line1", &WatchOptions{Interval: 10 * time.Millisecond}) {
		ch.Time = time.Time{}
		got = append(got, item{ch, err != nil})
		if len(got) == 5 {
			break
		}
	}
	want := []item{
		{CountersChange{Counters: PrintCounters{7, 1, 6}}, false},
		{CountersChange{}, true},
		{CountersChange{}, true},
		{CountersChange{Counters: PrintCounters{7, 1, 6}}, false}, // back, nothing changed
		{CountersChange{Counters: PrintCounters{8, 1, 7}, Delta: PrintCounters{1, 0, 1}}, false},
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("yielded %+v,\nwant %+v", got, want)
		}
	}
	if n := s.requests(); n != 7 {
		t.Errorf("%d polls, want 7 (two unchanged answers yield nothing)", n)
	}
}

// TestWatchStatusBackAfterFailures: the same for WatchStatus; Previous is the status read
// before the failures.
func TestWatchStatusBackAfterFailures(t *testing.T) {
	ready := `200 {"state":"STARTED","ragStatus":"GREEN","errors":[],"ink":[]}`
	s, c := scriptedClient(t, ready, `504 <html>gateway time-out</html>`, ready, ready, `200 {"state":"STOPPED","ragStatus":"AMBER","errors":[],"ink":[]}`)
	var changes []StatusChange
	errs := 0
	for ch, err := range c.Printers.WatchStatus(t.Context(), &WatchOptions{Interval: 10 * time.Millisecond}) {
		if err != nil {
			if !errors.Is(err, ErrServer) {
				t.Fatal(err)
			}
			errs++
			continue
		}
		changes = append(changes, ch)
		if len(changes) == 3 {
			break
		}
	}
	if errs != 1 || len(changes) != 3 || s.requests() != 5 {
		t.Fatalf("%d errors, %d changes after %d polls", errs, len(changes), s.requests())
	}
	if changes[0].Previous != nil || changes[1].Previous != changes[0].Status || changes[1].Status.State != StateStarted {
		t.Errorf("back after the failure: %+v", changes[1])
	}
	if changes[2].Previous != changes[1].Status || changes[2].Status.State != StateStopped {
		t.Errorf("the change after: %+v", changes[2])
	}
}
