// Command print-and-confirm answers "did it print, and how many?" as far as the contract
// allows. It selects a job of 5 copies, waits with WaitPrinted until the counters show all five
// (printing its progress), then sends one more trigger with ConfirmTrigger and settles from the
// counters what it did (printed, bounced, never arrived), even if its answer were lost. With no -url it starts a printer
// simulator in-process whose line triggers a label every -every.
//
//	go run ./examples/print-and-confirm -url http://192.168.1.50 -printer line1
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

func main() {
	url := flag.String("url", "", "printer base URL (empty: start a simulator in-process)")
	printer := flag.String("printer", "line1", "printer name")
	every := flag.Duration("every", 100*time.Millisecond, "how often the simulated line triggers")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *printer, *every, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "print-and-confirm:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, printer string, every time.Duration, out io.Writer) error {
	const copies = 5
	url, stop, err := printersim.OrStart(url, printersim.WithPrinters(printer), printersim.WithAutoTrigger(every))
	if err != nil {
		return err
	}
	defer stop()
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()

	label := map[string]any{"format": 3, "width": 30.0, "height": 15.0, "objs": []any{}}
	if err := c.Labels.Put(ctx, "confirm", label); err != nil {
		return err
	}
	// The baseline comes first: labels are counted from here.
	since, err := c.Printers.Counters(ctx, printer)
	if err != nil {
		return err
	}
	if _, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{LabelName: "confirm", Copies: copies}); err != nil {
		return err
	}
	fmt.Fprintf(out, "selected %d copies of %q on %s\n", copies, "confirm", printer)

	// Accepted is not printed: wait for the counters, one label at a time to show progress.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	opts := &labelprinter.WatchOptions{Interval: 50 * time.Millisecond}
	var p labelprinter.PrintProgress
	for p.Printed < copies {
		p, err = c.Printers.WaitPrinted(wait, printer, *since, p.Printed+1, opts)
		if err != nil {
			if errors.Is(err, labelprinter.ErrCountersReset) {
				return fmt.Errorf("the printer restarted after %d label(s): %w", p.Printed, err)
			}
			return fmt.Errorf("%d of %d printed: %w", p.Printed, copies, err)
		}
		fmt.Fprintf(out, "printed %d/%d\n", min(p.Printed, copies), copies)
	}
	fmt.Fprintf(out, "all %d labels printed (%d bounce(s))\n", copies, p.Bounces)

	// One more trigger, settled from the counters around it. The job is finished, so the line
	// is idle and nothing else triggers the printer meanwhile, which is what lets the counters
	// answer; with no job left, the printer takes the trigger and bounces it (a 409, kept in
	// res.Err, while the returned error is nil because the counters settled it).
	res, err := c.Printers.ConfirmTrigger(ctx, printer)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "trigger outcome: %s (triggers %d -> %d, bounces %d -> %d, printed %d -> %d)\n", res.Outcome,
		res.Before.Triggers, res.After.Triggers, res.Before.TriggerBounces, res.After.TriggerBounces,
		res.Before.PrintedLabels, res.After.PrintedLabels)
	if res.Outcome == labelprinter.TriggerNotReceived {
		fmt.Fprintln(out, "the trigger never reached the printer: sending it again is safe")
	}
	return nil
}
