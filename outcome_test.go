package labelprinter

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labelprinter/go-labelprinter/printersim"
)

const routeTrigger = "/api/v3/printers/{name}/trigger"

// TestWaitPrintedAutoTrigger: a running line prints a job of five copies and WaitPrinted
// returns once all five are counted, with the Client's real sleep.
func TestWaitPrintedAutoTrigger(t *testing.T) {
	_, c, _ := wtSetup(t, false, printersim.WithAutoTrigger(5*time.Millisecond))
	since, err := c.Printers.Counters(t.Context(), "line1")
	if err != nil {
		t.Fatal(err)
	}
	wtSelect(t, c, 5)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	p, err := c.Printers.WaitPrinted(ctx, "line1", *since, 5, &WatchOptions{Interval: 10 * time.Millisecond})
	if err != nil || p.Target != 5 || p.Printed != 5 || p.Bounces != 0 || p.Counters.PrintedLabels != since.PrintedLabels+5 {
		t.Errorf("progress %+v, err %v", p, err)
	}
}

// TestWaitPrintedDeadline: with no triggers, WaitPrinted ends with the deadline and says so.
func TestWaitPrintedDeadline(t *testing.T) {
	srv, c, _ := wtSetup(t, false)
	wtSelect(t, c, 5)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	p, err := c.Printers.WaitPrinted(ctx, "line1", PrintCounters{}, 5, &WatchOptions{Interval: 10 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) || p.Printed != 0 || p.Target != 5 {
		t.Errorf("progress %+v, err %v", p, err)
	}
	if srv.Sim.Requests("GET", routeCounters) < 1 {
		t.Error("no poll before the deadline")
	}
}

// TestWaitPrintedProgressAndFailures: WaitPrinted rides out failed polls, counts bounces, and
// ends with the context, reporting how far it got.
func TestWaitPrintedProgressAndFailures(t *testing.T) {
	srv, c, rec := wtSetup(t, true)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	wtPress(t, srv.Sim, 1) // a bounce before the job
	since, _ := srv.Sim.Counters("line1")
	wtPress(t, srv.Sim, 1) // a bounce after the baseline
	wtSelect(t, c, 0)
	srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Times: 2, Status: http.StatusBadGateway})
	rec.step = func(n int, _ time.Duration) {
		switch n {
		case 2:
			wtPress(t, srv.Sim, 3)
		case 4:
			cancel()
		}
	}
	base := PrintCounters{Triggers: since.Triggers, TriggerBounces: since.TriggerBounces, PrintedLabels: since.PrintedLabels}
	p, err := c.Printers.WaitPrinted(ctx, "line1", base, 10, &WatchOptions{Interval: 10 * time.Millisecond})
	if !errors.Is(err, context.Canceled) || p.Printed != 3 || p.Bounces != 1 {
		t.Errorf("progress %+v, err %v", p, err)
	}
	ms := time.Millisecond
	if w := rec.got(); len(w) != 4 || w[0] != 20*ms || w[1] != 40*ms || w[2] != 10*ms {
		t.Errorf("waits %v", w)
	}
}

// TestWaitPrintedAcrossReset: the counters going down ends the wait with ErrCountersReset and
// the progress up to then.
func TestWaitPrintedAcrossReset(t *testing.T) {
	srv, c, rec := wtSetup(t, true)
	wtSelect(t, c, 0)
	rec.step = func(n int, _ time.Duration) {
		switch n {
		case 1:
			wtPress(t, srv.Sim, 2)
		case 2:
			if err := srv.Sim.ResetCounters("line1"); err != nil {
				t.Error(err)
			}
		}
	}
	p, err := c.Printers.WaitPrinted(t.Context(), "line1", PrintCounters{}, 5, &WatchOptions{Interval: 10 * time.Millisecond})
	if !errors.Is(err, ErrCountersReset) || p.Printed != 2 || p.Counters != (PrintCounters{}) {
		t.Errorf("progress %+v, err %v", p, err)
	}
	// The reset shows on a non-zero baseline too.
	wtPress(t, srv.Sim, 1)
	p, err = c.Printers.WaitPrinted(t.Context(), "line1", PrintCounters{Triggers: 9, PrintedLabels: 9}, 1, nil)
	if !errors.Is(err, ErrCountersReset) || p.Printed != 0 {
		t.Errorf("below the baseline: %+v, %v", p, err)
	}
}

// wtHook is a transport that runs after before a response to a matching request is returned.
type wtHook struct {
	rt    http.RoundTripper
	match string
	after func()
}

func (h wtHook) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := h.rt.RoundTrip(r)
	if strings.HasSuffix(r.URL.Path, h.match) && h.after != nil {
		h.after()
	}
	return resp, err
}

// ctSetup is wtSetup with a hook run after every trigger request.
func ctSetup(t *testing.T, after func(*printersim.Simulator)) (*printersim.Server, *Client, *wtRecorder) {
	t.Helper()
	srv, err := printersim.Start(printersim.WithPrinters("line1"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	hook := wtHook{rt: DefaultTransport(), match: "/trigger"}
	if after != nil {
		hook.after = func() { after(srv.Sim) }
	}
	c, err := NewClient(srv.URL, WithRetry(RetryPolicy{MaxAttempts: 1}), WithHTTPClient(&http.Client{Transport: hook}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(); hook.rt.(*http.Transport).CloseIdleConnections() })
	rec := &wtRecorder{}
	c.sleep = rec.sleep
	if err := c.Labels.Put(t.Context(), "L", map[string]any{"format": 3}); err != nil {
		t.Fatal(err)
	}
	return srv, c, rec
}

func TestConfirmTrigger(t *testing.T) {
	t.Run("printed, answer lost", func(t *testing.T) {
		srv, c, rec := ctSetup(t, nil)
		wtSelect(t, c, 0)
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Reset: printersim.ResetAfterRead})
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerPrinted || !errors.Is(res.Err, ErrOutcomeUnknown) || res.Response != nil {
			t.Errorf("%+v, %v", res, err)
		}
		if res.Before != (PrintCounters{}) || res.After != (PrintCounters{Triggers: 1, PrintedLabels: 1}) {
			t.Errorf("before %+v after %+v", res.Before, res.After)
		}
		if n := srv.Sim.Requests("POST", routeTrigger); n != 1 {
			t.Errorf("the simulator saw %d trigger requests, want 1", n)
		}
		if len(rec.got()) != 0 {
			t.Errorf("paused %v though the trigger showed", rec.got())
		}
	})
	t.Run("dropped after it was written", func(t *testing.T) {
		// The connection drops before the printer read the trigger, but nothing on this side
		// can tell that from a drop after it acted: the counters not moving prove nothing.
		srv, c, rec := ctSetup(t, nil)
		wtSelect(t, c, 0)
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Reset: printersim.ResetBeforeRead})
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerUnknown || !errors.Is(res.Err, ErrOutcomeUnknown) {
			t.Errorf("%+v, %v", res, err)
		}
		if got, _ := srv.Sim.Counters("line1"); got.Triggers != 0 {
			t.Errorf("a trigger was counted: %+v", got)
		}
		if w := rec.got(); len(w) != 1 || w[0] != confirmPause || srv.Sim.Requests("GET", routeCounters) != 3 {
			t.Errorf("waits %v and %d readings, want one pause and three", w, srv.Sim.Requests("GET", routeCounters))
		}
	})
	for _, status := range []int{http.StatusBadRequest, http.StatusUnauthorized, http.StatusTooManyRequests} {
		t.Run(fmt.Sprint("answered ", status), func(t *testing.T) {
			srv, c, _ := ctSetup(t, nil)
			wtSelect(t, c, 0)
			srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Status: status})
			res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
			var apiErr *APIError
			if err != nil || res.Outcome != TriggerNotReceived || !errors.As(res.Err, &apiErr) || apiErr.StatusCode != status {
				t.Errorf("%+v, %v", res, err)
			}
		})
	}
	for _, status := range []int{http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout} {
		t.Run(fmt.Sprint("answered ", status), func(t *testing.T) {
			srv, c, _ := ctSetup(t, nil)
			wtSelect(t, c, 0)
			srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Status: status})
			res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
			if err != nil || res.Outcome != TriggerUnknown || !errors.Is(res.Err, ErrServer) {
				t.Errorf("%+v, %v", res, err)
			}
		})
	}
	t.Run("Settle", func(t *testing.T) {
		// Readings every confirmPause until Settle has passed, the last pause cut to fit.
		srv, c, rec := ctSetup(t, nil)
		wtSelect(t, c, 0)
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Reset: printersim.ResetBeforeRead})
		res, err := c.Printers.ConfirmTriggerWith(t.Context(), "line1", &ConfirmOptions{Settle: 2*confirmPause + 100*time.Millisecond})
		if err != nil || res.Outcome != TriggerUnknown {
			t.Errorf("%+v, %v", res, err)
		}
		if w := rec.got(); len(w) != 3 || w[0] != confirmPause || w[1] != confirmPause || w[2] != 100*time.Millisecond {
			t.Errorf("waits %v", w)
		}
		// A printer that shows the trigger only after four pauses: read until it does, and no longer.
		rec.step = func(n int, _ time.Duration) {
			if n == 5 {
				wtPress(t, srv.Sim, 1)
			}
		}
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Reset: printersim.ResetBeforeRead})
		res, err = c.Printers.ConfirmTriggerWith(t.Context(), "line1", &ConfirmOptions{Settle: time.Hour})
		if err != nil || res.Outcome != TriggerPrinted || len(rec.got()) != 5 {
			t.Errorf("%+v, %v, waits %v", res, err, rec.got())
		}
		if _, err := c.Printers.ConfirmTriggerWith(t.Context(), "line1", &ConfirmOptions{Settle: -1}); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("negative Settle: %v", err)
		}
	})
	t.Run("counted late", func(t *testing.T) {
		srv, c, rec := ctSetup(t, nil)
		wtSelect(t, c, 0)
		srv.Sim.InjectFault(printersim.Fault{Method: "POST", Route: routeTrigger, Times: 1, Reset: printersim.ResetBeforeRead})
		rec.step = func(int, time.Duration) { wtPress(t, srv.Sim, 1) }
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerPrinted {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("another trigger between the readings", func(t *testing.T) {
		srv, c, _ := ctSetup(t, func(sim *printersim.Simulator) { _, _ = sim.PressTrigger("line1") })
		wtSelect(t, c, 0)
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerUnknown || res.Err != nil || len(res.Response) == 0 {
			t.Errorf("%+v, %v", res, err)
		}
		if got, _ := srv.Sim.Counters("line1"); got.PrintedLabels != 2 {
			t.Errorf("counters %+v", got)
		}
	})
	t.Run("no job", func(t *testing.T) {
		_, c, _ := ctSetup(t, nil)
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerBounced || !errors.Is(res.Err, ErrConflict) || res.After != (PrintCounters{Triggers: 1, TriggerBounces: 1}) {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("first reading fails", func(t *testing.T) {
		srv, c, _ := ctSetup(t, nil)
		wtSelect(t, c, 0)
		srv.Sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Times: 1, Status: http.StatusServiceUnavailable})
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if !errors.Is(err, ErrServer) || res.Outcome != 0 || srv.Sim.Requests("POST", routeTrigger) != 0 {
			t.Errorf("%+v, %v, %d triggers sent", res, err, srv.Sim.Requests("POST", routeTrigger))
		}
	})
	t.Run("last reading fails", func(t *testing.T) {
		srv, c, _ := ctSetup(t, func(sim *printersim.Simulator) {
			sim.InjectFault(printersim.Fault{Method: "GET", Route: routeCounters, Status: http.StatusServiceUnavailable})
		})
		wtSelect(t, c, 0)
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if !errors.Is(err, ErrServer) || res.Outcome != TriggerUnknown || res.Err != nil || res.Before != (PrintCounters{}) {
			t.Errorf("%+v, %v", res, err)
		}
		if got, _ := srv.Sim.Counters("line1"); got.PrintedLabels != 1 {
			t.Errorf("counters %+v", got)
		}
	})
	t.Run("counters reset", func(t *testing.T) {
		var triggers atomic.Int64
		_, c, _ := ctSetup(t, func(sim *printersim.Simulator) {
			if triggers.Add(1) > 1 {
				_ = sim.ResetCounters("line1")
			}
		})
		wtSelect(t, c, 0)
		if _, err := c.Printers.Trigger(t.Context(), "line1"); err != nil {
			t.Fatal(err)
		}
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerUnknown || res.Before != (PrintCounters{Triggers: 1, PrintedLabels: 1}) {
			t.Errorf("%+v, %v", res, err)
		}
	})
	t.Run("answered but not counted", func(t *testing.T) {
		// The printer answers 2xx and restarts before the next reading, which finds the same
		// zeros as before: the trigger did arrive, so it is not "not received".
		_, c, rec := ctSetup(t, func(sim *printersim.Simulator) { _ = sim.ResetCounters("line1") })
		wtSelect(t, c, 0)
		res, err := c.Printers.ConfirmTrigger(t.Context(), "line1")
		if err != nil || res.Outcome != TriggerUnknown || res.Err != nil || len(rec.got()) != 1 {
			t.Errorf("%+v, %v, waits %v", res, err, rec.got())
		}
	})
	t.Run("bad input", func(t *testing.T) {
		srv, c, _ := ctSetup(t, nil)
		before := srv.Sim.TotalRequests()
		var nilCtx context.Context
		for _, call := range []func() error{
			func() error { _, err := c.Printers.ConfirmTrigger(t.Context(), ""); return err },
			func() error { _, err := c.Printers.ConfirmTrigger(t.Context(), ".."); return err },
			func() error { _, err := c.Printers.ConfirmTrigger(nilCtx, "line1"); return err },
		} {
			if err := call(); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("bad input: %v", err)
			}
		}
		if srv.Sim.TotalRequests() != before {
			t.Error("a request was sent for bad input")
		}
	})
}

// TestPending: the counters are still awaited while unchanged or while only the trigger shows.
func TestPending(t *testing.T) {
	b := PrintCounters{Triggers: 5, TriggerBounces: 1, PrintedLabels: 4}
	for _, tc := range []struct {
		after PrintCounters
		want  bool
	}{
		{b, true},
		{PrintCounters{6, 1, 4}, true},
		{PrintCounters{6, 1, 5}, false},
		{PrintCounters{6, 2, 4}, false},
		{PrintCounters{7, 1, 4}, false},
		{PrintCounters{5, 1, 5}, false},
		{PrintCounters{0, 0, 0}, false},
	} {
		if got := pending(b, tc.after); got != tc.want {
			t.Errorf("pending(%+v, %+v) = %v", b, tc.after, got)
		}
	}
}

func TestTriggerOutcomeString(t *testing.T) {
	for o, want := range map[TriggerOutcome]string{
		TriggerPrinted: "printed", TriggerBounced: "bounced", TriggerNotReceived: "not received",
		TriggerUnknown: "unknown", 0: "TriggerOutcome(0)", 9: "TriggerOutcome(9)",
	} {
		if got := o.String(); got != want {
			t.Errorf("%d: %q, want %q", int(o), got, want)
		}
	}
}
