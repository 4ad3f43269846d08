package main

import (
	"context"
	"encoding/json"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The print command group: jobs, deselect, abort and trigger.

// jobFlags is a print job as "print job" and "outbox enqueue" read it from their flags.
type jobFlags struct {
	job                       labelprinter.PrintJob
	queue, freeze, checkpoint bool
}

func (jf *jobFlags) declare(f *pflag.FlagSet) {
	job := &jf.job
	f.StringVar(&job.LabelName, "label", "", "label to print")
	f.StringVar(&job.LabelColumn, "label-column", "", "table column holding the label name")
	f.StringVar(&job.TableName, "table", "", "table for a database selection")
	f.StringVar(&job.KeyColumn, "key-column", "", "column searched for --key")
	f.StringVar(&job.Key, "key", "", "value searched in --key-column")
	f.IntVar(&job.Copies, "copies", 0, "number of copies (0: every trigger prints until the job is deselected)")
	f.StringVar(&job.CopiesColumn, "copies-column", "", "table column holding the number of copies")
	f.BoolVar(&jf.queue, "queue", false, "add to the queue instead of replacing it")
	f.BoolVar(&jf.freeze, "freeze", false, "freeze the label's content at selection")
	f.IntVar(&job.FirstRow, "first-row", 0, "first table row used")
	f.IntVar(&job.RowCount, "row-count", 0, "number of table rows used (0: all remaining)")
	f.StringVar(&job.PrintedColumn, "printed-column", "", "table column counting printed labels")
	f.Float64Var(&job.PrintDelay, "print-delay", 0, "print delay override, in mm")
	f.Float64Var(&job.AutoPrintGap, "auto-print-gap", 0, "auto-print gap")
	f.Float64Var(&job.AutoPrintInterval, "auto-print-interval", 0, "auto-print interval")
	f.BoolVar(&jf.checkpoint, "checkpoint", false, "set the checkpoint flag")
	f.StringVar(&job.Description, "description", "", "text shown on the printer's overview")
}

// build returns the job the flags describe, checked: a flag left unset is not sent at all, so
// the printer's own default applies, and a job the SDK would refuse is a usage error. The
// ranges of the numeric flags are checked with every other flag's (flagcheck.go); check says
// which flags go together, in the flags' own names.
func (jf *jobFlags) build(f *pflag.FlagSet) (labelprinter.PrintJob, error) {
	if err := jf.check(); err != nil {
		return labelprinter.PrintJob{}, err
	}
	j := jf.job
	if f.Changed("queue") {
		j.Queue = labelprinter.Ptr(jf.queue)
	}
	if f.Changed("freeze") {
		j.Freeze = labelprinter.Ptr(jf.freeze)
	}
	if f.Changed("checkpoint") {
		j.Checkpoint = labelprinter.Ptr(jf.checkpoint)
	}
	if err := j.Validate(); err != nil {
		return j, usageError{err}
	}
	return j, nil
}

// check refuses the combinations of job flags the printer cannot act on, before the SDK sees
// them, so the message names the flags a person typed.
func (jf *jobFlags) check() error {
	j := &jf.job
	if j.LabelName == "" && j.LabelColumn == "" {
		return usagef("give --label, or --label-column with --table")
	}
	if j.Key != "" && (j.TableName == "" || j.KeyColumn == "") {
		return usagef("--key needs --table and --key-column")
	}
	if j.TableName == "" {
		for _, f := range []struct {
			name string
			set  bool
		}{
			{"--label-column", j.LabelColumn != ""}, {"--key-column", j.KeyColumn != ""},
			{"--first-row", j.FirstRow != 0}, {"--row-count", j.RowCount != 0},
			{"--copies-column", j.CopiesColumn != ""}, {"--printed-column", j.PrintedColumn != ""},
		} {
			if f.set {
				return usagef("%s needs --table", f.name)
			}
		}
	}
	return nil
}

func (a *app) printCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "print", Short: "Select, deselect, abort and trigger print jobs (never retried on their own)"}
	var jf jobFlags
	var wait bool
	var waitTimeout time.Duration
	jobCmd := &cobra.Command{
		Use: "job", Short: "Select a print job on --printer", Args: exactArgs(0, "flags only"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := jf.build(cmd.Flags())
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("wait-timeout") && !wait {
				return usagef("--wait-timeout needs --wait")
			}
			if wait {
				if j.Copies <= 0 {
					return usagef("--wait needs --copies N, the number of labels to wait for")
				}
				return a.printAndWait(cmd, &j, waitTimeout)
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				raw, err := c.Printers.PrintJob(ctx, a.printer, &j)
				if err != nil {
					return err
				}
				return a.printRaw(raw)
			})
		},
	}
	f := jobCmd.Flags()
	jf.declare(f)
	f.BoolVar(&wait, "wait", false, "after selecting, wait until --copies labels are printed (Ctrl-C stops waiting)")
	f.DurationVar(&waitTimeout, "wait-timeout", 0, "with --wait, stop waiting after this long and exit 1 (0: no limit)")
	_ = jobCmd.RegisterFlagCompletionFunc("label", a.completeFlagNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
		return c.Labels.List(ctx)
	}))
	_ = jobCmd.RegisterFlagCompletionFunc("table", a.completeFlagNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
		return c.Tables.List(ctx)
	}))

	simple := func(use, short string, needName bool, do func(context.Context, *labelprinter.Client) (json.RawMessage, error)) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Args: exactArgs(0, "no argument"),
			RunE: func(cmd *cobra.Command, _ []string) error {
				if needName {
					if err := a.needPrinter("print " + use); err != nil {
						return err
					}
				}
				return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
					raw, err := do(ctx, c)
					if err != nil {
						return err
					}
					return a.printRaw(raw)
				})
			},
		}
	}
	cmd.AddCommand(jobCmd,
		simple("deselect", "Deselect every job on --printer (an empty printJob)", false, func(ctx context.Context, c *labelprinter.Client) (json.RawMessage, error) {
			return c.Printers.DeselectJobs(ctx, a.printer)
		}),
		simple("abort", "Abort printing on --printer", true, func(ctx context.Context, c *labelprinter.Client) (json.RawMessage, error) {
			return c.Printers.AbortPrint(ctx, a.printer)
		}),
		a.triggerCommand(simple("trigger", "Trigger one print on --printer", true, func(ctx context.Context, c *labelprinter.Client) (json.RawMessage, error) {
			return c.Printers.Trigger(ctx, a.printer)
		})))
	return cmd
}

func (a *app) completeFlagNames(list func(context.Context, *labelprinter.Client) (map[string]json.RawMessage, error)) cobra.CompletionFunc {
	complete := a.completeNames(list)
	return func(cmd *cobra.Command, _ []string, s string) ([]cobra.Completion, cobra.ShellCompDirective) {
		return complete(cmd, nil, s)
	}
}
