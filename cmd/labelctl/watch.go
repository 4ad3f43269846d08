package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// --- watch: a line per change, from the SDK's watch streams ---

func (a *app) watchCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "watch", Short: "Print a line per change of the counters or the status, until Ctrl-C"}
	var every, statusEvery time.Duration
	counters := &cobra.Command{
		Use: "counters", Short: "Print the counters of --printer, then a line each time they change", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.watchCounters(cmd, every) },
	}
	counters.Flags().DurationVar(&every, "interval", time.Second, "wait between two polls (at least 10ms)")
	status := &cobra.Command{
		Use: "status", Short: "Print the printer status, then a line each time it changes", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.watchStatus(cmd, statusEvery) },
	}
	status.Flags().DurationVar(&statusEvery, "interval", time.Second, "wait between two polls (at least 10ms)")
	cmd.AddCommand(counters, status)
	return cmd
}

// watchOptions turns --interval into WatchOptions. flagRules refuses 0 (the SDK's default, a
// mistake on the command line) and negative values; the SDK refuses one below its floor, which
// exits 2 like every ErrInvalidArgument.
func watchOptions(every time.Duration) *labelprinter.WatchOptions {
	return &labelprinter.WatchOptions{Interval: every}
}

// jsonLine encodes v on one line, without HTML escaping, as printJSON does.
func jsonLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// watchCounters prints a line (or a JSON object) per change until Ctrl-C; failed polls go to
// stderr and the watch goes on. It serves 'watch counters' and 'counters --watch'.
func (a *app) watchCounters(cmd *cobra.Command, every time.Duration) error {
	opts := watchOptions(every)
	c, err := a.connect()
	if err != nil {
		return err
	}
	for ch, err := range c.Printers.WatchCounters(cmd.Context(), a.printer, opts) {
		if err != nil {
			if errors.Is(err, labelprinter.ErrInvalidArgument) || isFinal(err) {
				return err
			}
			fmt.Fprintf(a.stderr, "%s %s\n", time.Now().Format(time.TimeOnly), oneLine(err.Error()))
			continue
		}
		pc := ch.Counters
		if a.output == "json" {
			_ = a.printJSONLine(map[string]any{
				"time": ch.Time.Format(time.RFC3339Nano), "triggers": pc.Triggers, "triggerBounces": pc.TriggerBounces,
				"printedLabels": pc.PrintedLabels, "delta": ch.Delta, "reset": ch.Reset,
			})
			continue
		}
		note := ""
		switch {
		case ch.Reset:
			note = "  (counters went down: printer restarted or reset)"
		case ch.Delta != (labelprinter.PrintCounters{}):
			note = fmt.Sprintf("  (+%d printed, +%d bounces)", ch.Delta.PrintedLabels, ch.Delta.TriggerBounces)
		}
		fmt.Fprintf(a.stdout, "%s triggers=%d bounces=%d printed=%d%s\n", ch.Time.Format(time.TimeOnly), pc.Triggers, pc.TriggerBounces, pc.PrintedLabels, note)
	}
	return nil
}

// isFinal reports the errors the SDK ends a watch with, which end the command too.
func isFinal(err error) bool {
	return errors.Is(err, labelprinter.ErrNotFound) || errors.Is(err, labelprinter.ErrUnauthorized) ||
		errors.Is(err, labelprinter.ErrForbidden)
}

// watchStatus prints the status and then a line per change until Ctrl-C.
func (a *app) watchStatus(cmd *cobra.Command, every time.Duration) error {
	opts := watchOptions(every)
	c, err := a.connect()
	if err != nil {
		return err
	}
	for ch, err := range c.Printers.WatchStatus(cmd.Context(), opts) {
		if err != nil {
			if errors.Is(err, labelprinter.ErrInvalidArgument) || isFinal(err) {
				return err
			}
			fmt.Fprintf(a.stderr, "%s %s\n", time.Now().Format(time.TimeOnly), oneLine(err.Error()))
			continue
		}
		st := ch.Status
		if a.output == "json" {
			_ = a.printJSONLine(map[string]any{
				"time": ch.Time.Format(time.RFC3339Nano), "state": st.State, "ragStatus": st.RAGStatus,
				"printable": st.State.Printable(), "errors": st.Errors, "ink": st.Ink,
			})
			continue
		}
		line := fmt.Sprintf("%s %s %s printable=%v", ch.Time.Format(time.TimeOnly), st.State, st.RAGStatus, st.State.Printable())
		if len(st.Errors) > 0 {
			line += " errors: " + strings.Join(st.Errors, "; ")
		}
		for i, ink := range st.Ink {
			line += fmt.Sprintf(" ink%d=%s/%s/%s", i+1, ink.State, ink.RAGStatus, ink.Level)
		}
		fmt.Fprintln(a.stdout, oneLine(line))
	}
	return nil
}

// printJSONLine writes v as one JSON line, for streams.
func (a *app) printJSONLine(v any) error {
	b, err := jsonLine(v)
	if err != nil {
		return err
	}
	_, err = a.stdout.Write(b)
	return err
}

// --- print job --wait, print trigger --confirm ---

// printAndWait reads the counters, selects job, and waits until job.Copies labels are printed,
// with a progress bar on a terminal. Ctrl-C stops the wait (not the job) and exits 1.
func (a *app) printAndWait(cmd *cobra.Command, job *labelprinter.PrintJob, timeout time.Duration) error {
	c, err := a.connect()
	if err != nil {
		return err
	}
	var since *labelprinter.PrintCounters
	err = a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
		if since, err = c.Printers.Counters(ctx, a.printer); err != nil {
			return err
		}
		_, err := c.Printers.PrintJob(ctx, a.printer, job)
		return err
	})
	if err != nil {
		return err
	}
	n := int64(job.Copies)
	where := "the printer"
	if a.printer != "" {
		where = a.printer
	}
	fmt.Fprintf(a.stderr, "selected %q on %s; waiting for %d label(s)\n", job.LabelName, where, n)
	var bar *progressbar.ProgressBar
	if a.terminal(a.stderr) {
		bar = progressbar.NewOptions64(n, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription("printed"),
			progressbar.OptionShowCount(), progressbar.OptionClearOnFinish())
	}
	// --wait-timeout counts from the selection, so the wait ends then whatever the printer does.
	waitCtx := cmd.Context()
	if timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(waitCtx, timeout)
		defer cancel()
	}
	// One WaitPrinted per step of progress: each returns as soon as one more label shows.
	var p labelprinter.PrintProgress
	for p.Printed < n {
		var q labelprinter.PrintProgress
		q, err = c.Printers.WaitPrinted(waitCtx, a.printer, *since, min(p.Printed+1, n), nil)
		// A step stopped before its first reading starts from nothing; what earlier steps
		// counted still stands, so a Ctrl-C never reports fewer labels than were seen.
		if q.Printed >= p.Printed {
			p = q
		}
		if bar != nil {
			_ = bar.Set64(min(p.Printed, n))
		}
		if err != nil {
			break
		}
	}
	if bar != nil {
		_ = bar.Finish()
	}
	switch {
	case err == nil:
		if a.output == "json" {
			return a.printJSON(map[string]any{"printed": p.Printed, "target": n, "bounces": p.Bounces, "counters": p.Counters})
		}
		_, err := fmt.Fprintf(a.stdout, "printed %d of %d label(s) on %s (%d bounce(s))\n", p.Printed, n, where, p.Bounces)
		return err
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("stopped waiting after %d of %d label(s); the job is still selected on %s", p.Printed, n, where)
	case errors.Is(err, context.DeadlineExceeded) && timeout > 0 && cmd.Context().Err() == nil:
		return fmt.Errorf("gave up waiting after --wait-timeout %v: %d of %d label(s) printed; the job is still selected on %s", timeout, p.Printed, n, where)
	case errors.Is(err, labelprinter.ErrCountersReset):
		return fmt.Errorf("%d of %d label(s) counted, then the counters went down (printer restarted or reset); the job may still be selected on %s", p.Printed, n, where)
	}
	return err
}

// triggerCommand adds --confirm to the trigger command: the trigger is settled from the
// counters around it, and only "printed" exits 0.
func (a *app) triggerCommand(trigger *cobra.Command) *cobra.Command {
	var confirm bool
	plain := trigger.RunE
	trigger.RunE = func(cmd *cobra.Command, args []string) error {
		if !confirm {
			return plain(cmd, args)
		}
		if err := a.needPrinter("print trigger"); err != nil {
			return err
		}
		return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
			res, err := c.Printers.ConfirmTrigger(ctx, a.printer)
			if err != nil && res.Outcome == 0 {
				return err // the first reading failed: nothing was sent
			}
			if a.output == "json" {
				doc := map[string]any{"outcome": res.Outcome.String(), "before": res.Before, "after": res.After}
				if res.Err != nil {
					doc["triggerError"] = oneLine(res.Err.Error())
				}
				if perr := a.printJSON(doc); perr != nil {
					return perr
				}
			} else {
				fmt.Fprintf(a.stdout, "outcome: %s\nbefore:  triggers=%d bounces=%d printed=%d\nafter:   triggers=%d bounces=%d printed=%d\n",
					res.Outcome, res.Before.Triggers, res.Before.TriggerBounces, res.Before.PrintedLabels,
					res.After.Triggers, res.After.TriggerBounces, res.After.PrintedLabels)
				if res.Err != nil {
					fmt.Fprintf(a.stdout, "trigger answer: %s\n", oneLine(res.Err.Error()))
				}
			}
			switch {
			case err != nil:
				return err
			case res.Outcome != labelprinter.TriggerPrinted:
				return fmt.Errorf("trigger %s", res.Outcome)
			}
			return nil
		})
	}
	trigger.Flags().BoolVar(&confirm, "confirm", false, "read the counters around the trigger and say whether it printed (exit 0 only then)")
	return trigger
}
