// Command watch-counters prints a printer's counters, then a line whenever they change, until
// Ctrl-C. It ranges over WatchCounters, which polls once, well: never overlapping, backing off
// while the printer is down, and noticing a restart that reset the counters. With no -url it
// starts a printer simulator in-process whose line triggers a label every -every, so there is
// something to watch.
//
//	go run ./examples/watch-counters -url http://192.168.1.50 -printer line1 -every 1s
package main

import (
	"context"
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
	every := flag.Duration("every", time.Second, "polling interval")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *printer, *every, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "watch-counters:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, printer string, every time.Duration, out io.Writer) error {
	simulated := url == ""
	// The simulated line triggers every printer with a job selected, standing in for the
	// photocell of a real line.
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
	if simulated {
		if err := selectJob(ctx, c, printer); err != nil {
			return err
		}
	}

	for ch, err := range c.Printers.WatchCounters(ctx, printer, &labelprinter.WatchOptions{Interval: every}) {
		now := time.Now().Format(time.TimeOnly)
		switch {
		case err != nil:
			// A failed poll is reported and the watch goes on (a line controller keeps watching
			// through a printer restart); an error that waiting cannot heal ends the stream.
			fmt.Fprintf(out, "%s error: %v\n", now, err)
		case ch.Reset:
			fmt.Fprintf(out, "%s counters went down (printer restarted): triggers=%d bounces=%d printed=%d\n", now, ch.Counters.Triggers, ch.Counters.TriggerBounces, ch.Counters.PrintedLabels)
		default:
			fmt.Fprintf(out, "%s triggers=%d bounces=%d printed=%d (+%d)\n", now, ch.Counters.Triggers, ch.Counters.TriggerBounces, ch.Counters.PrintedLabels, ch.Delta.PrintedLabels)
		}
	}
	// The stream ends without an error when ctx ends (Ctrl-C).
	fmt.Fprintln(out, "stopped")
	return nil
}

// selectJob stores a label on the simulator and selects it with no copy limit.
func selectJob(ctx context.Context, c *labelprinter.Client, printer string) error {
	label := map[string]any{"format": 3, "width": 30.0, "height": 15.0, "objs": []any{}}
	if err := c.Labels.Put(ctx, "watch", label); err != nil {
		return err
	}
	_, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{LabelName: "watch"})
	return err
}
