package labelprinter_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

// TestSinglePrinterForms holds the README's and the doc comments' word on printer "": counters,
// history, printJob (deselecting included), and the waits and watches built on the counters
// reach the single-printer paths, which address the first printer; status has only that form;
// trigger, abortPrint and ConfirmTrigger have none in the contract, so "" is refused before
// anything is sent.
func TestSinglePrinterForms(t *testing.T) {
	srv, err := printersim.Start(printersim.WithPrinters("line1", "line2"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	sim := srv.Sim
	c, err := labelprinter.NewClient(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Labels.Put(ctx, "L", json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}

	single := []struct {
		name, method, route string
		call                func() error
	}{
		{"Counters", "GET", "/api/v3/printCounters", func() error { _, err := c.Printers.Counters(ctx, ""); return err }},
		{"History", "GET", "/api/v3/printHistory", func() error { _, err := c.Printers.History(ctx, "", nil); return err }},
		{"PrintJob", "POST", "/api/v3/printJob", func() error {
			_, err := c.Printers.PrintJob(ctx, "", &labelprinter.PrintJob{LabelName: "L", Copies: 1})
			return err
		}},
		{"WaitPrinted", "GET", "/api/v3/printCounters", func() error {
			since, err := c.Printers.Counters(ctx, "")
			if err != nil {
				return err
			}
			// The job PrintJob selected above sits on the first printer: one trigger prints it.
			if _, err := c.Printers.Trigger(ctx, "line1"); err != nil {
				return err
			}
			_, err = c.Printers.WaitPrinted(ctx, "", *since, 1, nil)
			return err
		}},
		{"WatchCounters", "GET", "/api/v3/printCounters", func() error {
			for _, err := range c.Printers.WatchCounters(ctx, "", nil) {
				return err
			}
			return errors.New("the watch yielded nothing")
		}},
		{"DeselectJobs", "POST", "/api/v3/printJob", func() error { _, err := c.Printers.DeselectJobs(ctx, ""); return err }},
		{"Status", "GET", "/api/v3/status", func() error { _, err := c.Printers.Status(ctx); return err }},
		{"WatchStatus", "GET", "/api/v3/status", func() error {
			for _, err := range c.Printers.WatchStatus(ctx, nil) {
				return err
			}
			return errors.New("the watch yielded nothing")
		}},
	}
	for _, tc := range single {
		before := sim.Requests(tc.method, tc.route)
		if err := tc.call(); err != nil {
			t.Errorf("%s on the single printer: %v", tc.name, err)
			continue
		}
		if sim.Requests(tc.method, tc.route) == before {
			t.Errorf("%s on the single printer never reached %s %s", tc.name, tc.method, tc.route)
		}
	}
	if got, _ := sim.Counters("line1"); got.PrintedLabels != 1 {
		t.Errorf("the single-printer job printed %d labels on the first printer, want 1", got.PrintedLabels)
	}

	named := map[string]func() error{
		"Trigger":        func() error { _, err := c.Printers.Trigger(ctx, ""); return err },
		"AbortPrint":     func() error { _, err := c.Printers.AbortPrint(ctx, ""); return err },
		"ConfirmTrigger": func() error { _, err := c.Printers.ConfirmTrigger(ctx, ""); return err },
		"ConfirmTriggerWith": func() error {
			_, err := c.Printers.ConfirmTriggerWith(ctx, "", &labelprinter.ConfirmOptions{})
			return err
		},
	}
	for name, call := range named {
		before := sim.TotalRequests()
		if err := call(); !errors.Is(err, labelprinter.ErrInvalidArgument) {
			t.Errorf("%s with printer \"\": %v, want ErrInvalidArgument", name, err)
		}
		if n := sim.TotalRequests() - before; n != 0 {
			t.Errorf("%s with printer \"\" sent %d request(s), want none", name, n)
		}
	}
}
