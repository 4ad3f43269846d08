package labelprinter

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
	"go.uber.org/goleak"
)

// The watch tests run over real HTTP against the simulator. Most replace the Client's sleep
// with a recorder that returns at once and lets the test act between two polls, so every wait
// is checked exactly and no test depends on how fast the machine is.

const routeCounters = "/api/v3/printers/{name}/printCounters"

// wtRecorder records the waits of a Client and runs a step before the n-th wait returns.
type wtRecorder struct {
	mu    sync.Mutex
	waits []time.Duration
	step  func(n int, d time.Duration)
}

func (r *wtRecorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	r.waits = append(r.waits, d)
	n, step := len(r.waits), r.step
	r.mu.Unlock()
	if step != nil {
		step(n, d)
	}
	if n > 1000 {
		// A watch that should have ended spins here instead of sleeping: end it, and let the
		// test's own checks fail.
		return errors.New("wtRecorder: more than 1000 waits")
	}
	return ctx.Err()
}

func (r *wtRecorder) got() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Duration(nil), r.waits...)
}

// wtSetup starts a simulator with printer line1 and the label L, and a Client that makes one
// attempt per call, so every poll is one request the simulator counts. With record set, the
// Client's waits go to the returned recorder instead of sleeping.
func wtSetup(t *testing.T, record bool, simOpts ...printersim.Option) (*printersim.Server, *Client, *wtRecorder) {
	t.Helper()
	srv, err := printersim.Start(append([]printersim.Option{printersim.WithPrinters("line1")}, simOpts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	rec := &wtRecorder{}
	if record {
		c.sleep = rec.sleep
	}
	if err := c.Labels.Put(t.Context(), "L", map[string]any{"format": 3}); err != nil {
		t.Fatal(err)
	}
	return srv, c, rec
}

func wtSelect(t *testing.T, c *Client, copies int) {
	t.Helper()
	if _, err := c.Printers.PrintJob(t.Context(), "line1", &PrintJob{LabelName: "L", Copies: copies}); err != nil {
		t.Fatal(err)
	}
}

func wtPress(t *testing.T, sim *printersim.Simulator, times int) {
	for range times {
		if _, err := sim.PressTrigger("line1"); err != nil {
			t.Error(err)
		}
	}
}

// TestWatchCountersChanges: the first answer at once, then only changes with their deltas, a
// Reset after the counters went down whose Delta holds the labels printed since the restart,
// and the waits all Interval while polls succeed.
func TestWatchCountersChanges(t *testing.T) {
	srv, c, rec := wtSetup(t, true)
	wtSelect(t, c, 0)
	rec.step = func(n int, _ time.Duration) {
		switch n {
		case 1:
			wtPress(t, srv.Sim, 2)
		case 2: // nothing: the third poll finds no change
		case 3:
			wtPress(t, srv.Sim, 1)
		case 4:
			// A restart, and a label printed before the next poll: the Reset's Delta holds it.
			if err := srv.Sim.ResetCounters("line1"); err != nil {
				t.Error(err)
			}
			wtPress(t, srv.Sim, 1)
		case 5:
			wtPress(t, srv.Sim, 1)
		}
	}
	want := []CountersChange{
		{Counters: PrintCounters{}},
		{Counters: PrintCounters{Triggers: 2, PrintedLabels: 2}, Delta: PrintCounters{Triggers: 2, PrintedLabels: 2}},
		{Counters: PrintCounters{Triggers: 3, PrintedLabels: 3}, Delta: PrintCounters{Triggers: 1, PrintedLabels: 1}},
		{Counters: PrintCounters{Triggers: 1, PrintedLabels: 1}, Delta: PrintCounters{Triggers: 1, PrintedLabels: 1}, Reset: true},
		{Counters: PrintCounters{Triggers: 2, PrintedLabels: 2}, Delta: PrintCounters{Triggers: 1, PrintedLabels: 1}},
	}
	var got []CountersChange
	start := time.Now()
	for ch, err := range c.Printers.WatchCounters(t.Context(), "line1", &WatchOptions{Interval: 50 * time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		if ch.Time.Before(start) {
			t.Errorf("change %d: time %v before the watch began", len(got), ch.Time)
		}
		ch.Time = time.Time{}
		got = append(got, ch)
		if len(got) == len(want) {
			break
		}
	}
	for i := range want {
		if i >= len(got) || got[i] != want[i] {
			t.Fatalf("changes %+v,\nwant %+v", got, want)
		}
	}
	// Six polls (the third unchanged) and five waits of Interval between them; none after break.
	if n := srv.Sim.Requests("GET", routeCounters); n != 6 {
		t.Errorf("%d polls, want 6", n)
	}
	waits := rec.got()
	if len(waits) != 5 {
		t.Errorf("waits %v, want 5", waits)
	}
	for _, d := range waits {
		if d != 50*time.Millisecond {
			t.Errorf("waits %v, want Interval each", waits)
			break
		}
	}
}

// TestWatchCountersBackoff: during a run of 503s each failure is yielded and the wait doubles up
// to MaxInterval; the first success is yielded and the wait falls back to Interval.
func TestWatchCountersBackoff(t *testing.T) {
	srv, c, rec := wtSetup(t, true)
	srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Times: 4, Status: http.StatusServiceUnavailable})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rec.step = func(n int, _ time.Duration) {
		if n == 5 {
			cancel()
		}
	}
	var errs, changes int
	for ch, err := range c.Printers.WatchCounters(ctx, "line1", &WatchOptions{Interval: 10 * time.Millisecond, MaxInterval: 40 * time.Millisecond}) {
		switch {
		case err != nil:
			errs++
			if !errors.Is(err, ErrServer) || ch != (CountersChange{}) {
				t.Errorf("failure %d: %v with %+v", errs, err, ch)
			}
		default:
			changes++
		}
	}
	ms := time.Millisecond
	want := []time.Duration{20 * ms, 40 * ms, 40 * ms, 40 * ms, 10 * ms}
	waits := rec.got()
	if len(waits) != len(want) {
		t.Fatalf("waits %v, want %v", waits, want)
	}
	for i := range want {
		if waits[i] != want[i] {
			t.Fatalf("waits %v, want %v", waits, want)
		}
	}
	if errs != 4 || changes != 1 {
		t.Errorf("%d errors and %d changes, want 4 and 1", errs, changes)
	}
	if n := srv.Sim.Requests("GET", routeCounters); n != 5 {
		t.Errorf("the simulator saw %d polls, want 5", n)
	}
}

// TestWatchTerminalErrors: errors waiting cannot heal are yielded once and end the stream.
func TestWatchTerminalErrors(t *testing.T) {
	cases := []struct {
		name    string
		printer string
		opts    []printersim.Option
		fault   int
		want    error
	}{
		{"unknown printer", "nope", nil, 0, ErrNotFound},
		{"wrong token", "line1", []printersim.Option{printersim.WithToken("secret")}, 0, ErrUnauthorized},
		{"forbidden", "line1", nil, http.StatusForbidden, ErrForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := printersim.Start(append([]printersim.Option{printersim.WithPrinters("line1")}, tc.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			rec := &wtRecorder{}
			c.sleep = rec.sleep
			if tc.fault != 0 {
				srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Status: tc.fault})
			}
			var errs []error
			for _, err := range c.Printers.WatchCounters(t.Context(), tc.printer, &WatchOptions{Interval: 10 * time.Millisecond}) {
				errs = append(errs, err)
			}
			if len(errs) != 1 || !errors.Is(errs[0], tc.want) {
				t.Errorf("yielded %v, want one %v", errs, tc.want)
			}
			if n := srv.Sim.TotalRequests(); n != 1 || len(rec.got()) != 0 {
				t.Errorf("%d requests and waits %v after a terminal error", n, rec.got())
			}
			for _, err := range c.Printers.WatchStatus(t.Context(), &WatchOptions{Interval: 10 * time.Millisecond}) {
				if tc.want == ErrUnauthorized && !errors.Is(err, ErrUnauthorized) {
					t.Errorf("status watch without the token: %v", err)
				}
				if tc.want != ErrUnauthorized && err != nil {
					t.Errorf("status watch: %v", err)
				}
				break
			}
		})
	}
}

// TestWatchBadInput: a bad printer name, bad options or a nil context are one
// ErrInvalidArgument, with nothing sent.
func TestWatchBadInput(t *testing.T) {
	srv, c, _ := wtSetup(t, true)
	before := srv.Sim.TotalRequests()
	ms := time.Millisecond
	var nilCtx context.Context
	cases := []struct {
		name    string
		ctx     context.Context
		printer string
		opts    *WatchOptions
	}{
		{"dot-dot name", t.Context(), "..", nil},
		{"control character", t.Context(), "line\n1", nil},
		{"negative interval", t.Context(), "line1", &WatchOptions{Interval: -ms}},
		{"negative max", t.Context(), "line1", &WatchOptions{MaxInterval: -ms}},
		{"interval below the floor", t.Context(), "line1", &WatchOptions{Interval: 9 * ms}},
		{"nil context", nilCtx, "line1", nil},
	}
	for _, tc := range cases {
		var errs []error
		for ch, err := range c.Printers.WatchCounters(tc.ctx, tc.printer, tc.opts) {
			if ch != (CountersChange{}) {
				t.Errorf("%s: change %+v", tc.name, ch)
			}
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.Is(errs[0], ErrInvalidArgument) {
			t.Errorf("%s: WatchCounters yielded %v", tc.name, errs)
		}
		if _, err := c.Printers.WaitPrinted(tc.ctx, tc.printer, PrintCounters{}, 1, tc.opts); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: WaitPrinted: %v", tc.name, err)
		}
		if tc.printer != "line1" {
			continue
		}
		errs = errs[:0]
		for _, err := range c.Printers.WatchStatus(tc.ctx, tc.opts) {
			errs = append(errs, err)
		}
		if len(errs) != 1 || !errors.Is(errs[0], ErrInvalidArgument) {
			t.Errorf("%s: WatchStatus yielded %v", tc.name, errs)
		}
	}
	if _, err := c.Printers.WaitPrinted(t.Context(), "line1", PrintCounters{}, 0, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("n = 0: %v", err)
	}
	if n := srv.Sim.TotalRequests(); n != before {
		t.Errorf("%d requests sent for bad input", n-before)
	}
	// Zero durations are the defaults, and a MaxInterval below Interval only disables the back-off.
	if p, err := (&WatchOptions{}).pace("x"); err != nil || p.interval != time.Second || p.maxInterval != 30*time.Second {
		t.Errorf("defaults %+v, %v", p, err)
	}
	if p, err := (&WatchOptions{Interval: 10 * ms, MaxInterval: ms}).pace("x"); err != nil || p.backoff(3) != 10*ms {
		t.Errorf("max below interval: %+v, %v", p, err)
	}
}

// TestWatchStopsPromptly: a break, a cancelled context during the wait and a cancelled context
// during a hung poll each end the stream with no error yielded and no goroutine left, with the
// Client's real sleep.
func TestWatchStopsPromptly(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	srv, c, _ := wtSetup(t, false)
	hour := &WatchOptions{Interval: time.Hour}

	n := 0
	for _, err := range c.Printers.WatchCounters(t.Context(), "line1", hour) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		break
	}
	if n != 1 {
		t.Errorf("%d changes before break", n)
	}

	ctx, cancel := context.WithCancel(t.Context())
	n = 0
	for _, err := range c.Printers.WatchStatus(ctx, hour) {
		if err != nil {
			t.Errorf("yielded %v", err)
		}
		n++
		cancel() // the watch now waits an hour, unless the cancel ends it
	}
	if n != 1 {
		t.Errorf("%d status changes", n)
	}

	srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Delay: time.Hour})
	ctx, cancel = context.WithCancel(t.Context())
	stop := time.AfterFunc(20*time.Millisecond, cancel)
	defer stop.Stop()
	for ch, err := range c.Printers.WatchCounters(ctx, "line1", hour) {
		t.Errorf("a hung poll yielded %+v, %v", ch, err)
	}
	srv.Sim.ClearFaults()
	_ = c.Close()
	srv.Close()
}

// TestWatchStatusChange: the first status at once, nothing for an unchanged poll, then the
// change SetStatus made with the previous status.
func TestWatchStatusChange(t *testing.T) {
	srv, c, rec := wtSetup(t, true)
	rec.step = func(n int, _ time.Duration) {
		if n == 2 {
			srv.Sim.SetStatus("ERROR", "RED", "lid open")
		}
	}
	var got []StatusChange
	for ch, err := range c.Printers.WatchStatus(t.Context(), &WatchOptions{Interval: 10 * time.Millisecond}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ch)
		if len(got) == 2 {
			break
		}
	}
	if got[0].Previous != nil || got[0].Status.State != StateStarted || got[0].Status.RAGStatus != RAGGreen {
		t.Errorf("first %+v", got[0])
	}
	if got[1].Previous != got[0].Status || got[1].Status.State != StateError || got[1].Status.RAGStatus != RAGRed ||
		len(got[1].Status.Errors) != 1 || got[1].Status.Errors[0] != "lid open" || got[1].Status.State.Printable() {
		t.Errorf("second %+v", got[1])
	}
	if n := srv.Sim.Requests("GET", "/api/v3/status"); n != 3 {
		t.Errorf("%d polls, want 3", n)
	}
}
