package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guptarohit/asciigraph"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/spf13/cobra"
)

// The counters, history and status commands.

func (a *app) countersCommand() *cobra.Command {
	var watch bool
	var every time.Duration
	cmd := &cobra.Command{
		Use: "counters", Short: "Show the print counters of --printer", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !watch {
				return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
					pc, err := c.Printers.Counters(ctx, a.printer)
					if err != nil {
						return err
					}
					return a.printCounters(pc)
				})
			}
			return a.watchCounters(cmd, every)
		},
	}
	cmd.Flags().BoolVar(&watch, "watch", false, "print a line per change until Ctrl-C (as 'watch counters')")
	cmd.Flags().DurationVar(&every, "interval", time.Second, "polling interval with --watch")
	return cmd
}

func (a *app) printCounters(pc *labelprinter.PrintCounters) error {
	if a.output == "json" {
		return a.printJSON(pc)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "TRIGGERS\tBOUNCES\tPRINTED\n%d\t%d\t%d\n", pc.Triggers, pc.TriggerBounces, pc.PrintedLabels)
	return tw.Flush()
}

func (a *app) historyCommand() *cobra.Command {
	var resolution, start, end string
	var since, until time.Duration
	var chart bool
	cmd := &cobra.Command{
		Use: "history", Short: "Show the print history of --printer", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := &labelprinter.HistoryOptions{Resolution: labelprinter.Resolution(strings.ToUpper(resolution))}
			f := cmd.Flags()
			relative, absolute := f.Changed("since") || f.Changed("until"), f.Changed("start") || f.Changed("end")
			if relative && absolute {
				return usagef("give --since/--until or --start/--end, not both")
			}
			now := time.Now()
			if f.Changed("until") && f.Changed("since") && until >= since {
				return usagef("--since %v --until %v is an empty range: --since must reach further back than --until", since, until)
			}
			if f.Changed("since") {
				opts.Start = now.Add(-since)
			}
			if f.Changed("until") {
				opts.End = now.Add(-until)
			}
			for _, t := range []struct {
				flag, value string
				dst         *time.Time
			}{{"--start", start, &opts.Start}, {"--end", end, &opts.End}} {
				if t.value == "" {
					continue
				}
				v, err := time.Parse(time.RFC3339, t.value)
				if err != nil {
					return usagef("%s wants an RFC 3339 time such as 2026-11-22T08:00:00Z", t.flag)
				}
				*t.dst = v
			}
			if absolute && !opts.Start.IsZero() && !opts.End.IsZero() && !opts.End.After(opts.Start) {
				return usagef("--end must be after --start")
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				h, err := c.Printers.History(ctx, a.printer, opts)
				if err != nil {
					return err
				}
				if a.output == "json" {
					return a.printJSON(h)
				}
				buckets, err := h.Buckets()
				if err != nil {
					return err
				}
				if chart {
					return a.chart(buckets, opts.Resolution)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "START\tCOUNT")
				for _, b := range buckets {
					fmt.Fprintf(tw, "%s\t%d\n", b.Start.Format(time.RFC3339), b.Count)
				}
				return tw.Flush()
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&resolution, "resolution", "", "MINUTES, HOURS, DAYS or WEEKS (default: the printer's, DAYS)")
	f.DurationVar(&since, "since", 0, "start of the range, this long ago, such as 24h")
	f.DurationVar(&until, "until", 0, "end of the range, this long ago (default: now)")
	f.StringVar(&start, "start", "", "start of the range, RFC 3339")
	f.StringVar(&end, "end", "", "end of the range, RFC 3339")
	f.BoolVar(&chart, "chart", false, "draw the counts as a chart")
	_ = cmd.RegisterFlagCompletionFunc("resolution", cobra.FixedCompletions([]string{"MINUTES", "HOURS", "DAYS", "WEEKS"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// chart draws the bucket counts in the terminal, with the empty buckets the printer leaves
// out drawn as zero and the bucket start times along the bottom.
func (a *app) chart(buckets []labelprinter.Bucket, res labelprinter.Resolution) error {
	if len(buckets) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no labels printed in this range")
		return err
	}
	step, layout, unit := bucketStep(res)
	buckets, err := fillBuckets(buckets, step)
	if err != nil {
		return err
	}
	series := make([]float64, len(buckets))
	for i, b := range buckets {
		series[i] = float64(b.Count)
	}
	first, last := buckets[0].Start, buckets[len(buckets)-1].Start
	if len(series) == 1 {
		series = append(series, series[0])
		last = last.Add(step)
	}
	caption := fmt.Sprintf("labels printed per %s, %s to %s", unit, first.Format(time.RFC3339), last.Format(time.RFC3339))
	// Stretch by a whole number of columns per bucket, so each bucket lands on a column, and
	// put ticks only where buckets start.
	gaps := len(series) - 1
	perGap := max(1, (60+gaps-1)/gaps)
	ticks := 2
	for d := 5; d > 1; d-- {
		if gaps%d == 0 {
			ticks = d + 1
			break
		}
	}
	plot := asciigraph.Plot(series, asciigraph.Height(10), asciigraph.Width(gaps*perGap+1),
		asciigraph.XAxisRange(float64(first.Unix()), float64(last.Unix())), asciigraph.XAxisTickCount(ticks),
		asciigraph.XAxisValueFormatter(func(v float64) string { return time.Unix(int64(v), 0).UTC().Format(layout) }),
		asciigraph.Caption(caption))
	_, err = fmt.Fprintln(a.stdout, plot)
	return err
}

// bucketStep is the length of one bucket of res (the printer's default is DAYS), the layout of
// its times on the chart's axis and its name.
func bucketStep(res labelprinter.Resolution) (time.Duration, string, string) {
	switch res {
	case labelprinter.ResolutionMinutes:
		return time.Minute, "15:04", "minute"
	case labelprinter.ResolutionHours:
		return time.Hour, "01-02 15h", "hour"
	case labelprinter.ResolutionWeeks:
		return 7 * 24 * time.Hour, "2006-01-02", "week"
	}
	return 24 * time.Hour, "01-02", "day"
}

// maxChartBuckets bounds the buckets a chart fills in, so a range of years at MINUTES (or a
// printer's odd times) cannot make labelctl build millions of points.
const maxChartBuckets = 100_000

// fillBuckets returns buckets with a zero bucket in each gap of step or more, as the printer
// leaves empty buckets out. A gap within half a step is not filled, so a 25-hour day across a
// clock change is not taken for two. Buckets out of order are refused, and the result never
// holds more than maxChartBuckets, whatever times the printer sent.
func fillBuckets(buckets []labelprinter.Bucket, step time.Duration) ([]labelprinter.Bucket, error) {
	span := buckets[len(buckets)-1].Start.Sub(buckets[0].Start)
	if span < 0 || span/step >= maxChartBuckets || len(buckets) > maxChartBuckets {
		return nil, fmt.Errorf("the history spans %v in buckets of %v, too many to chart; give a shorter range or a coarser --resolution", span, step)
	}
	out := make([]labelprinter.Bucket, 0, int(span/step)+1)
	for i, b := range buckets {
		if i > 0 {
			prev := out[len(out)-1].Start
			if !b.Start.After(prev) {
				return nil, fmt.Errorf("the printer's history buckets are out of order (%s after %s); see them with -o json", b.Start.Format(time.RFC3339), prev.Format(time.RFC3339))
			}
			for t := prev.Add(step); b.Start.Sub(t) >= step/2; t = t.Add(step) {
				out = append(out, labelprinter.Bucket{Start: t})
			}
		}
		out = append(out, b)
	}
	return out, nil
}

func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use: "status", Short: "Show the printer status", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				status, err := c.Printers.Status(ctx)
				if err != nil {
					return err
				}
				if a.output == "json" {
					return a.printRaw(status.Raw)
				}
				return a.printStatus(status)
			})
		},
	}
}

// printStatus writes the status as an operator reads it: the printer's state, whether it can
// print, its red/amber/green summary and errors, then one line per ink.
func (a *app) printStatus(st *labelprinter.PrinterStatus) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	printable := "no"
	if st.State.Printable() {
		printable = "yes"
	}
	fmt.Fprintf(tw, "STATE\t%s\nPRINTABLE\t%s\nRAG\t%s\nERRORS\t%s\n", st.State, printable, st.RAGStatus, list(st.Errors))
	var doc struct {
		Printers []string `json:"printers"`
	}
	if json.Unmarshal(st.Raw, &doc) == nil && len(doc.Printers) > 0 {
		fmt.Fprintf(tw, "PRINTERS\t%s\n", strings.Join(doc.Printers, ", "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(st.Ink) == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout)
	tw = tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INK\tSTATE\tRAG\tLEVEL\tERRORS\tWARNINGS")
	for i, ink := range st.Ink {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, ink.State, ink.RAGStatus, ink.Level, list(ink.Errors), list(ink.Warnings))
	}
	return tw.Flush()
}

// list joins messages on one line, or "-" for none.
func list(msgs []string) string {
	if len(msgs) == 0 {
		return "-"
	}
	return oneLine(strings.Join(msgs, "; "))
}
