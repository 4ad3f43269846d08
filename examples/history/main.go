// Command history prints a printer's print history as one line per bucket, with a bar for the
// count. With no -url it starts a printer simulator in-process and prints a few labels first.
//
//	go run ./examples/history -url http://192.168.1.50 -printer line1 -resolution HOURS -since 24h
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

func main() {
	url := flag.String("url", "", "printer base URL (empty: start a simulator in-process)")
	printer := flag.String("printer", "line1", "printer name (empty: the single-printer path)")
	resolution := flag.String("resolution", string(labelprinter.ResolutionHours), "MINUTES, HOURS, DAYS or WEEKS")
	since := flag.Duration("since", 24*time.Hour, "how far back to look")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	opts := &labelprinter.HistoryOptions{Resolution: labelprinter.Resolution(*resolution), Start: time.Now().Add(-*since), End: time.Now()}
	if err := run(ctx, *url, *printer, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "history:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, printer string, opts *labelprinter.HistoryOptions, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	seed := url == ""
	url, stop, err := printersim.OrStart(url, printersim.WithPrinters(printer))
	if err != nil {
		return err
	}
	defer stop()
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()
	if seed {
		if err := printSome(ctx, c, printer, 7); err != nil {
			return err
		}
	}

	hist, err := c.Printers.History(ctx, printer, opts)
	if err != nil {
		return err
	}
	buckets, err := hist.Buckets()
	if err != nil {
		return err
	}
	if len(buckets) == 0 {
		fmt.Fprintln(out, "no labels printed in this range")
		return nil
	}
	for _, b := range buckets {
		fmt.Fprintf(out, "%s %5d %s\n", b.Start.Format("2006-01-02 15:04"), b.Count, strings.Repeat("#", int(min(b.Count, 60))))
	}
	return nil
}

// printSome gives a fresh simulator a history: n labels printed now.
func printSome(ctx context.Context, c *labelprinter.Client, printer string, n int) error {
	if err := c.Labels.Put(ctx, "history", map[string]any{"format": 3, "width": 30.0, "height": 15.0, "objs": []any{}}); err != nil {
		return err
	}
	if _, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{LabelName: "history"}); err != nil {
		return err
	}
	for range n {
		if _, err := c.Printers.Trigger(ctx, printer); err != nil {
			return err
		}
	}
	return nil
}
