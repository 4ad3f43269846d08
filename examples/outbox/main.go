// Command outbox is a line controller in miniature: it takes print orders, keeps them in an
// outbox file, and delivers them at most once while the printer is busy, refuses a job, or
// loses an answer. With no -url it starts a printer simulator in-process and injects those
// faults itself, so it runs anywhere.
//
//	go run ./examples/outbox
//	go run ./examples/outbox -url http://192.168.1.50 -printer line1 -db line1.outbox
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/labelprinter/go-labelprinter/printersim"
)

func main() {
	url := flag.String("url", "", "printer base URL, such as http://192.168.1.50 (empty: start a simulator in-process)")
	printer := flag.String("printer", "line1", "printer name")
	db := flag.String("db", "", "outbox file (empty: a temporary one)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *printer, *db, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "outbox:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, printer, db string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	var sim *printersim.Simulator
	if url == "" {
		srv, err := printersim.Start(printersim.WithPrinters(printer))
		if err != nil {
			return err
		}
		defer srv.Close()
		url, sim = srv.URL, srv.Sim
		fmt.Fprintf(out, "started a simulated printer %q at %s\n", printer, url)
	}
	if db == "" {
		dir, err := os.MkdirTemp("", "outbox-example")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, printer+".outbox")
	}

	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Labels.Put(ctx, "outbox-example", json.RawMessage(`{"format":3,"width":50,"height":30,"objs":[]}`)); err != nil {
		return fmt.Errorf("store label: %w", err)
	}

	ob, err := outbox.Open(db, c, outbox.WithRetryInterval(50*time.Millisecond))
	if errors.Is(err, outbox.ErrLocked) {
		return fmt.Errorf("%s is in use by another controller", db)
	}
	if err != nil {
		return err
	}
	defer ob.Close()

	if sim != nil {
		const route = "/api/v3/printers/{name}/printJob"
		// The printer is busy for the first two tries, then loses the answer to one job.
		sim.InjectFault(printersim.Fault{Method: "POST", Route: route, Times: 2, Status: 503})
		sim.InjectFault(printersim.Fault{Method: "POST", Route: route, Times: 1, Reset: printersim.ResetAfterRead})
	}

	// Orders from the ERP: each order line is its own key, so re-reading the orders after a
	// restart adds nothing twice.
	orders := []struct{ id, label string }{
		{"order-4711/1", "outbox-example"}, {"order-4711/2", "outbox-example"},
		{"order-4712/1", "no-such-label"}, {"order-4713/1", "outbox-example"},
	}
	for pass := 0; pass < 2; pass++ {
		for _, o := range orders {
			job := labelprinter.PrintJob{LabelName: o.label, Copies: 1, Queue: labelprinter.Ptr(true), Description: o.id}
			if _, err := ob.Enqueue(ctx, outbox.Intent{ID: o.id, Printer: printer, Job: job}); err != nil {
				return fmt.Errorf("enqueue %s: %w", o.id, err)
			}
		}
	}
	all, err := ob.List()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "enqueued %d orders twice: %d entries\n", len(orders), len(all))

	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ob.Run(runCtx) }()
	for {
		waiting, err := ob.List(outbox.Pending, outbox.Sending)
		if err != nil {
			stopRun()
			<-done
			return err
		}
		if len(waiting) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			stopRun()
			<-done
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	stopRun()
	if err := <-done; err != nil {
		return err
	}

	all, err = ob.List()
	if err != nil {
		return err
	}
	for _, e := range all {
		fmt.Fprintf(out, "- %-13s %-9s attempts=%d", e.ID, e.State, e.Attempts)
		if e.State == outbox.Unknown {
			fmt.Fprint(out, "  (the printer may have it: check, then Resend or Cancel)")
		}
		fmt.Fprintln(out)
	}
	if sim != nil {
		fmt.Fprintf(out, "printJob requests: %d, 2 of them answered busy\n", sim.Requests("POST", "/api/v3/printers/{name}/printJob"))
	}
	fmt.Fprintln(out, "done")
	return nil
}
