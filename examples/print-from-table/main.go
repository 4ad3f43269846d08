// Command print-from-table stores a table of products and selects a print job from it by key,
// the database selection of the printJob contract, then triggers one print. With no -url it
// starts a printer simulator in-process.
//
//	go run ./examples/print-from-table -sku S12-500A
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
	sku := flag.String("sku", "S12-342C", "SKU of the row to print")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *printer, *sku, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "print-from-table:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, printer, sku string, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
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

	label := map[string]any{"format": 3, "width": 40.0, "height": 20.0, "objs": []any{
		map[string]any{"type": "Text", "x": 1.0, "y": 1.0, "text": "{{SKU}} {{Description}}",
			"font": map[string]any{"family": "Arial", "style": "Regular", "height": 6.0}, "color": "black"},
	}}
	if err := c.Labels.Put(ctx, "SMALL", label); err != nil {
		return err
	}
	table := map[string]any{
		"columns": []string{"SKU", "Label", "Description", "Copies"},
		"rows": [][]string{
			{"S12-342C", "SMALL", "Hex bolt M12", "3"},
			{"S12-500A", "SMALL", "Washer 12 mm", "1"},
		},
	}
	if err := c.Tables.Put(ctx, "Products", table); err != nil {
		return err
	}
	resp, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{
		TableName: "Products", KeyColumn: "SKU", Key: sku, LabelColumn: "Label",
	})
	if err != nil {
		return fmt.Errorf("select %s: %w", sku, err)
	}
	fmt.Fprintf(out, "selected %s: %s\n", sku, resp)
	if _, err := c.Printers.Trigger(ctx, printer); err != nil {
		return fmt.Errorf("trigger: %w", err)
	}
	counters, err := c.Printers.Counters(ctx, printer)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "printed labels: %d\n", counters.PrintedLabels)
	_, err = c.Printers.DeselectJobs(ctx, printer)
	return err
}
