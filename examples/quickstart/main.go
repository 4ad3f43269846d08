// Command quickstart walks the whole flow of a print line through the SDK: upload an image and
// wait until the printer has processed it, store a label and a table, simulate and print a
// label selected from the table, trigger, read the counters and the history, deselect, and
// clean up. With no -url it starts a printer simulator in-process, so it runs anywhere.
//
// Against a real printer (-url) it only reads (status, what is stored, counters, history) and
// says what it left out, unless -allow-writes is given: the whole flow stores an image, a
// label and a table, prints 2 labels, deselects every job on the printer and deletes what it
// stored, which nobody wants by surprise on a production line.
//
//	go run ./examples/quickstart
//	go run ./examples/quickstart -url http://192.168.1.50 -printer line1
//	go run ./examples/quickstart -url http://192.168.1.50 -printer line1 -allow-writes
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/signal"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
)

func main() {
	url := flag.String("url", "", "printer base URL, such as http://192.168.1.50 (empty: start a simulator in-process)")
	printer := flag.String("printer", "line1", "printer name")
	allowWrites := flag.Bool("allow-writes", false, "with -url: walk the whole flow on that printer, printing 2 labels, deselecting every job on -printer and deleting what it stored (without -url the simulator gets the whole flow anyway)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *printer, *allowWrites, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run walks the flow against url, or against a simulator it starts when url is "". On a real
// printer only allowWrites lets it store, print, deselect or delete anything.
func run(ctx context.Context, url, printer string, allowWrites bool, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	simulated := url == ""
	url, stop, err := printersim.OrStart(url, printersim.WithPrinters(printer))
	if err != nil {
		return err
	}
	defer stop()
	if simulated {
		fmt.Fprintf(out, "started a simulated printer %q at %s\n", printer, url)
	}
	c, err := labelprinter.NewClient(url)
	if err != nil {
		return err
	}
	defer c.Close()

	step := func(format string, args ...any) { fmt.Fprintf(out, "- "+format+"\n", args...) }

	status, err := c.Printers.Status(ctx)
	if err != nil {
		return fmt.Errorf("status: %w", err)
	}
	step("printer status: %s (printable: %v)", status.State, status.State.Printable())

	if !simulated && !allowWrites {
		return readOnly(ctx, c, printer, step, out)
	}

	// 1. An image, made here so the example needs no file.
	img := image.NewGray(image.Rect(0, 0, 64, 32))
	for x := 0; x < 64; x++ {
		img.SetGray(x, 16, color.Gray{Y: 255})
	}
	var pngData bytes.Buffer
	if err := png.Encode(&pngData, img); err != nil {
		return err
	}
	if err := c.Images.Put(ctx, "quickstart-logo", bytes.NewReader(pngData.Bytes()), "image/png",
		&labelprinter.ImagePutOptions{Intent: labelprinter.IntentPerceptual}); err != nil {
		return fmt.Errorf("upload image: %w", err)
	}
	step("uploaded image quickstart-logo (%d bytes of PNG)", pngData.Len())
	info, err := c.Images.WaitReady(ctx, "quickstart-logo")
	if err != nil {
		return fmt.Errorf("wait for image: %w", err)
	}
	step("image is %s: %dx%d px, %.1fx%.1f mm, %d channel(s)", info.State, info.Width, info.Height, info.WidthMM, info.HeightMM, info.Format.Channels)

	// 2. A label whose text is filled from the table row it is printed for.
	label := map[string]any{
		"format": 3, "width": 50.0, "height": 30.0,
		"objs": []any{
			map[string]any{"type": "Text", "x": 2.0, "y": 2.0, "text": "{{Description}}",
				"font": map[string]any{"family": "Arial", "style": "Regular", "height": 8.0}, "color": "black"},
		},
	}
	if err := c.Labels.Put(ctx, "quickstart-label", label); err != nil {
		return fmt.Errorf("store label: %w", err)
	}
	step("stored label quickstart-label")

	// 3. A table the print job selects its row from.
	table := map[string]any{
		"columns": []string{"SKU", "Label", "Description"},
		"rows": [][]string{
			{"S12-342C", "quickstart-label", "Hex bolt M12"},
			{"S12-500A", "quickstart-label", "Washer 12 mm"},
		},
	}
	if err := c.Tables.Put(ctx, "quickstart-products", table); err != nil {
		return fmt.Errorf("store table: %w", err)
	}
	step("stored table quickstart-products with 2 rows")

	sim, err := c.Labels.Simulate(ctx, "quickstart-label", &labelprinter.SimulationOptions{
		TableName: "quickstart-products", KeyColumn: "SKU", Key: "S12-342C"})
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	step("simulation for S12-342C: %s", compact(sim))

	// 4. Select the job: the row with SKU S12-342C, its label named by the Label column, 2 copies.
	resp, err := c.Printers.PrintJob(ctx, printer, &labelprinter.PrintJob{
		TableName: "quickstart-products", KeyColumn: "SKU", Key: "S12-342C",
		LabelColumn: "Label", Copies: 2, Queue: labelprinter.Ptr(false),
		Description: "quickstart",
	})
	if err != nil {
		return fmt.Errorf("print job: %w", err)
	}
	step("selected the print job: %s", compact(resp))

	// 5. Each trigger prints one label; the third finds the job done.
	for i := 1; i <= 3; i++ {
		resp, err := c.Printers.Trigger(ctx, printer)
		var apiErr *labelprinter.APIError
		switch {
		case errors.As(err, &apiErr):
			step("trigger %d: the printer refused: %v", i, apiErr)
		case err != nil:
			return fmt.Errorf("trigger: %w", err)
		default:
			step("trigger %d: %s", i, compact(resp))
		}
	}

	if err := readCounters(ctx, c, printer, step); err != nil {
		return err
	}

	if _, err := c.Printers.DeselectJobs(ctx, printer); err != nil {
		return fmt.Errorf("deselect: %w", err)
	}
	step("deselected every job on %s", printer)

	// 6. Leave the printer as we found it.
	if err := c.Tables.Delete(ctx, "quickstart-products"); err != nil {
		return fmt.Errorf("clean up: %w", err)
	}
	if err := c.Labels.Delete(ctx, "quickstart-label"); err != nil {
		return fmt.Errorf("clean up: %w", err)
	}
	if err := c.Images.Delete(ctx, "quickstart-logo"); err != nil {
		return fmt.Errorf("clean up: %w", err)
	}
	step("deleted the table, the label and the image")
	fmt.Fprintln(out, "done")
	return nil
}

// readOnly is the reading half of the flow, all a real printer gets without -allow-writes:
// what is stored, the counters and the history. It then says what it left out.
func readOnly(ctx context.Context, c *labelprinter.Client, printer string, step func(string, ...any), out io.Writer) error {
	labels, err := c.Labels.List(ctx)
	if err != nil {
		return fmt.Errorf("list labels: %w", err)
	}
	images, err := c.Images.List(ctx, nil)
	if err != nil {
		return fmt.Errorf("list images: %w", err)
	}
	tables, err := c.Tables.List(ctx)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	step("stored on the printer: %d label(s), %d image(s), %d table(s)", len(labels), len(images), len(tables))
	if err := readCounters(ctx, c, printer, step); err != nil {
		return err
	}
	fmt.Fprintf(out, "left out on this printer, since -allow-writes was not given: uploading an image, storing a label and a table, "+
		"selecting a print job of 2 labels and triggering 3 times, deselecting every job on %s, "+
		"and deleting what it stored.\nRun again with -allow-writes to walk the whole flow on this printer.\n", printer)
	fmt.Fprintln(out, "done")
	return nil
}

// readCounters reads the printer's counters and its history over the last 24 hours.
func readCounters(ctx context.Context, c *labelprinter.Client, printer string, step func(string, ...any)) error {
	counters, err := c.Printers.Counters(ctx, printer)
	if err != nil {
		return fmt.Errorf("counters: %w", err)
	}
	step("counters: %d triggers, %d bounces, %d labels printed", counters.Triggers, counters.TriggerBounces, counters.PrintedLabels)

	hist, err := c.Printers.History(ctx, printer, &labelprinter.HistoryOptions{
		Resolution: labelprinter.ResolutionHours, Start: time.Now().Add(-24 * time.Hour)})
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	buckets, err := hist.Buckets()
	if err != nil {
		return fmt.Errorf("history: %w", err)
	}
	var total int64
	for _, b := range buckets {
		total += b.Count
	}
	step("history: %d labels in %d hourly bucket(s) over the last 24 h", total, len(buckets))
	return nil
}

// compact renders a JSON answer on one line, or says there was none.
func compact(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(no body)"
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	if b.Len() > 160 {
		return b.String()[:157] + "..."
	}
	return b.String()
}
