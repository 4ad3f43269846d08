// Command watch-counters polls a printer's counters and prints a line whenever they change,
// until Ctrl-C. With no -url it starts a printer simulator in-process and prints a label on it
// every second, so there is something to watch.
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
	url, stop, err := printersim.OrStart(url, printersim.WithPrinters(printer))
	if err != nil {
		return err
	}
	defer stop()
	if simulated {
		go simulateLine(ctx, url, printer, every)
	}
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()

	ticker := time.NewTicker(every)
	defer ticker.Stop()
	var last *labelprinter.PrintCounters
	for {
		pc, err := c.Printers.Counters(ctx, printer)
		switch {
		case ctx.Err() != nil:
			fmt.Fprintln(out, "stopped")
			return nil
		case err != nil:
			// A line controller keeps watching through a printer restart.
			fmt.Fprintf(out, "%s error: %v\n", time.Now().Format(time.TimeOnly), err)
		case last == nil || *pc != *last:
			fmt.Fprintf(out, "%s triggers=%d bounces=%d printed=%d\n", time.Now().Format(time.TimeOnly), pc.Triggers, pc.TriggerBounces, pc.PrintedLabels)
			last = pc
		}
		select {
		case <-ctx.Done():
			fmt.Fprintln(out, "stopped")
			return nil
		case <-ticker.C:
		}
	}
}

// simulateLine selects a label on the simulator and triggers it periodically, standing in for
// the photocell of a real line.
func simulateLine(ctx context.Context, url, printer string, every time.Duration) {
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return
	}
	defer c.Close()
	label := map[string]any{"format": 3, "width": 30.0, "height": 15.0, "objs": []any{}}
	if c.Labels.Put(ctx, "watch", label) != nil {
		return
	}
	if _, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{LabelName: "watch"}); err != nil {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = c.Printers.Trigger(ctx, printer)
		}
	}
}
