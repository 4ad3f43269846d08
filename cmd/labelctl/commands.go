package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guptarohit/asciigraph"
	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s", cmd.CommandPath(), names)
		}
		return nil
	}
}

// --- shared shapes: JSON documents stored under a name (labels, tables) ---

type store struct {
	noun   string
	list   func(context.Context) (map[string]json.RawMessage, error)
	get    func(context.Context, string) (json.RawMessage, error)
	put    func(context.Context, string, any) error
	delete func(context.Context, string) error
}

func (a *app) storeCommands(parent *cobra.Command, s func(*labelprinter.Client) store, complete cobra.CompletionFunc) {
	noun := s(nil).noun
	parent.AddCommand(&cobra.Command{
		Use: "list", Short: "List the " + noun + "s", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				m, err := s(c).list(ctx)
				if err != nil {
					return err
				}
				return a.printNames(m)
			})
		},
	}, &cobra.Command{
		Use: "get NAME", Short: "Print a " + noun + " as JSON", Args: exactArgs(1, "a name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				raw, err := s(c).get(ctx, args[0])
				if err != nil {
					return err
				}
				return a.printRaw(raw)
			})
		},
	}, &cobra.Command{
		Use: "put NAME FILE|-", Short: "Create or replace a " + noun + " from a JSON file or stdin", Args: exactArgs(2, "a name and a file (or - for stdin)"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := a.readInput(args[1])
			if err != nil {
				return err
			}
			if !json.Valid(body) {
				return usagef("%s is not valid JSON", args[1])
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				if err := s(c).put(ctx, args[0], json.RawMessage(body)); err != nil {
					return err
				}
				return a.done("stored %s %q", noun, args[0])
			})
		},
	}, &cobra.Command{
		Use: "delete NAME", Short: "Delete a " + noun, Args: exactArgs(1, "a name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				if err := s(c).delete(ctx, args[0]); err != nil {
					return err
				}
				return a.done("deleted %s %q", noun, args[0])
			})
		},
	})
}

// done confirms a change in table mode; JSON mode stays silent so scripts see only data.
func (a *app) done(format string, args ...any) error {
	if a.output == "json" {
		return a.printJSON(map[string]bool{"ok": true})
	}
	_, err := fmt.Fprintf(a.stdout, format+"\n", args...)
	return err
}

func (a *app) readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(a.stdin)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, usagef("%v", err)
	}
	return b, nil
}

func (a *app) printNames(m map[string]json.RawMessage) error {
	if a.output == "json" {
		return a.printJSON(m)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	fmt.Fprintln(a.stdout, "NAME")
	for _, n := range names {
		fmt.Fprintln(a.stdout, n)
	}
	return nil
}

// completeNames completes a positional name from the printer's list.
func (a *app) completeNames(list func(context.Context, *labelprinter.Client) (map[string]json.RawMessage, error)) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveDefault
		}
		c, err := a.connect()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
		defer cancel()
		m, err := list(ctx, c)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		out := make([]cobra.Completion, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completePrinters reads printer names from the status, where the printer lists them.
func (a *app) completePrinters(cmd *cobra.Command, _ []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := a.connect()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
	defer cancel()
	status, err := c.Printers.Status(ctx)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var st struct {
		Printers []string `json:"printers"`
	}
	_ = json.Unmarshal(status.Raw, &st)
	return st.Printers, cobra.ShellCompDirectiveNoFileComp
}

// --- labels, tables ---

func (a *app) labelsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "labels", Short: "Manage labels"}
	s := func(c *labelprinter.Client) store {
		st := store{noun: "label"}
		if c != nil {
			st.list, st.get, st.put, st.delete = c.Labels.List, c.Labels.Get, c.Labels.Put, c.Labels.Delete
		}
		return st
	}
	complete := a.completeNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
		return c.Labels.List(ctx)
	})
	a.storeCommands(cmd, s, complete)
	var opts labelprinter.SimulationOptions
	sim := &cobra.Command{
		Use: "simulate NAME", Short: "Print the printer's simulation of a label, filled from a table row", Args: exactArgs(1, "a label name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				var o *labelprinter.SimulationOptions
				if opts != (labelprinter.SimulationOptions{}) {
					o = &opts
				}
				raw, err := c.Labels.Simulate(ctx, args[0], o)
				if err != nil {
					return err
				}
				return a.printRaw(raw)
			})
		},
	}
	sim.Flags().StringVar(&opts.TableName, "table", "", "table to fill the label from")
	sim.Flags().StringVar(&opts.KeyColumn, "key-column", "", "column searched for --key")
	sim.Flags().StringVar(&opts.Key, "key", "", "value searched in --key-column")
	cmd.AddCommand(sim)
	return cmd
}

func (a *app) tablesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "tables", Short: "Manage data tables"}
	s := func(c *labelprinter.Client) store {
		st := store{noun: "table"}
		if c != nil {
			st.list, st.get, st.put, st.delete = c.Tables.List, c.Tables.Get, c.Tables.Put, c.Tables.Delete
		}
		return st
	}
	a.storeCommands(cmd, s, a.completeNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
		return c.Tables.List(ctx)
	}))
	return cmd
}

// --- images ---

// progressFile reports upload progress while keeping the file seekable, so the SDK can still
// re-send it whole on a retry.
type progressFile struct {
	f   *os.File
	bar io.Writer
}

func (p progressFile) Read(b []byte) (int, error) {
	n, err := p.f.Read(b)
	_, _ = p.bar.Write(b[:n])
	return n, err
}

func (p progressFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := p.f.ReadAt(b, off)
	_, _ = p.bar.Write(b[:n])
	return n, err
}

func (p progressFile) Seek(off int64, whence int) (int64, error) { return p.f.Seek(off, whence) }

// progress returns a progress bar on stderr when it is a terminal, else a writer that discards.
func (a *app) progress(size int64, what string) (io.Writer, func()) {
	if !a.terminal(a.stderr) {
		return io.Discard, func() {}
	}
	bar := progressbar.NewOptions64(size, progressbar.OptionSetWriter(a.stderr), progressbar.OptionSetDescription(what),
		progressbar.OptionShowBytes(true), progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.stderr) }))
	return bar, func() { _ = bar.Finish() }
}

// sniff adds the JSON form to the image types the SDK recognises.
func sniff(b []byte) string {
	if ct := labelprinter.DetectImageType(b); ct != "" {
		return ct
	}
	if bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
		return "application/json"
	}
	return ""
}

func (a *app) imagesCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "images", Short: "Manage images"}
	complete := a.completeNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
		return c.Images.List(ctx, nil)
	})
	var details bool
	list := &cobra.Command{
		Use: "list", Short: "List the images", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				m, err := c.Images.List(ctx, &labelprinter.ImageListOptions{Details: details})
				if err != nil {
					return err
				}
				if !details || a.output == "json" {
					return a.printNames(m)
				}
				tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSTATE\tSIZE\tPIXELS\tINTENT")
				names := make([]string, 0, len(m))
				for k := range m {
					names = append(names, k)
				}
				sort.Strings(names)
				for _, n := range names {
					var info labelprinter.ImageInfo
					_ = json.Unmarshal(m[n], &info)
					fmt.Fprintf(tw, "%s\t%s\t%d\t%dx%d\t%s\n", n, info.State, info.FileSize, info.Width, info.Height, info.Intent)
				}
				return tw.Flush()
			})
		},
	}
	list.Flags().BoolVar(&details, "details", false, "show each image's details")
	info := &cobra.Command{
		Use: "info NAME", Short: "Show what the printer knows of an image", Args: exactArgs(1, "an image name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				info, err := c.Images.Info(ctx, args[0])
				if err != nil {
					return err
				}
				return a.printInfo(info)
			})
		},
	}
	wait := &cobra.Command{
		Use: "wait NAME", Short: "Wait until the printer has processed an image", Args: exactArgs(1, "an image name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				info, err := c.Images.WaitReady(ctx, args[0])
				if info != nil {
					if perr := a.printInfo(info); perr != nil {
						return perr
					}
				}
				return err
			})
		},
	}
	var file string
	get := &cobra.Command{
		Use: "get NAME", Short: "Download an image to --file or stdout", Args: exactArgs(1, "an image name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				var w io.Writer = a.stdout
				size := int64(-1)
				if file != "" {
					f, err := os.Create(file)
					if err != nil {
						return usagef("--file: %v", err)
					}
					defer f.Close()
					w = f
					if info, err := c.Images.Info(ctx, args[0]); err == nil {
						size = info.FileSize
					}
				}
				bar, finish := a.progress(size, "downloading")
				ct, err := c.Images.Download(ctx, args[0], io.MultiWriter(w, bar))
				finish()
				if err != nil {
					return err
				}
				if file != "" {
					fmt.Fprintf(a.stderr, "wrote %s (%s)\n", file, ct)
				}
				return nil
			})
		},
	}
	get.Flags().StringVar(&file, "file", "", "write the image to this file instead of stdout")
	var intent string
	put := &cobra.Command{
		Use: "put NAME FILE|-", Short: "Upload a PNG, JPEG or TIFF image, or the JSON form", Args: exactArgs(2, "a name and a file (or - for stdin)"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &labelprinter.ImagePutOptions{Intent: labelprinter.Intent(intent)}
			if args[1] == "-" {
				data, err := io.ReadAll(a.stdin)
				if err != nil {
					return err
				}
				ct := sniff(data)
				if ct == "" {
					return usagef("stdin is not PNG, JPEG, TIFF or the JSON form")
				}
				return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
					if err := c.Images.Put(ctx, args[0], bytes.NewReader(data), ct, opts); err != nil {
						return err
					}
					return a.done("uploaded image %q (%s, %d bytes)", args[0], ct, len(data))
				})
			}
			f, err := os.Open(args[1])
			if err != nil {
				return usagef("%v", err)
			}
			defer f.Close()
			head := make([]byte, 512)
			n, _ := f.ReadAt(head, 0)
			ct := sniff(head[:n])
			if ct == "" {
				return usagef("%s is not PNG, JPEG, TIFF or the JSON form", args[1])
			}
			st, err := f.Stat()
			if err != nil {
				return err
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				bar, finish := a.progress(st.Size(), "uploading")
				err := c.Images.Put(ctx, args[0], progressFile{f: f, bar: bar}, ct, opts)
				finish()
				if err != nil {
					return err
				}
				return a.done("uploaded image %q (%s, %d bytes)", args[0], ct, st.Size())
			})
		},
	}
	put.Flags().StringVar(&intent, "intent", "", "render intent: RAW, SPOT_COLOR, PERCEPTUAL, RELATIVE_COLORIMETRIC, SATURATION or ABSOLUTE_COLORIMETRIC")
	_ = put.RegisterFlagCompletionFunc("intent", cobra.FixedCompletions([]string{"RAW", "SPOT_COLOR", "PERCEPTUAL", "RELATIVE_COLORIMETRIC", "SATURATION", "ABSOLUTE_COLORIMETRIC"}, cobra.ShellCompDirectiveNoFileComp))
	del := &cobra.Command{
		Use: "delete NAME", Short: "Delete an image", Args: exactArgs(1, "an image name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				if err := c.Images.Delete(ctx, args[0]); err != nil {
					return err
				}
				return a.done("deleted image %q", args[0])
			})
		},
	}
	cmd.AddCommand(list, info, get, put, del, wait)
	return cmd
}

func (a *app) printInfo(info *labelprinter.ImageInfo) error {
	if a.output == "json" {
		return a.printJSON(info)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "STATE\t%s\nSIZE\t%d bytes\nPIXELS\t%dx%d\nMILLIMETRES\t%.1fx%.1f\nFORMAT\t%d channel(s), %d bits, alpha %s, %s\nINTENT\t%s\nUID\t%s\n",
		info.State, info.FileSize, info.Width, info.Height, info.WidthMM, info.HeightMM,
		info.Format.Channels, info.Format.BitsPerChannel, info.Format.Alpha, info.Format.ColorSpace, info.Intent, info.UID)
	return tw.Flush()
}

// --- printing ---

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
	f.IntVar(&job.Copies, "copies", 0, "number of copies (0: unlimited)")
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
// the printer's own default applies, and a job the SDK would refuse is a usage error.
func (jf *jobFlags) build(f *pflag.FlagSet) (labelprinter.PrintJob, error) {
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

func (a *app) printCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "print", Short: "Select, deselect, abort and trigger print jobs (never retried on their own)"}
	var jf jobFlags
	var wait bool
	jobCmd := &cobra.Command{
		Use: "job", Short: "Select a print job on --printer", Args: exactArgs(0, "flags only"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			j, err := jf.build(cmd.Flags())
			if err != nil {
				return err
			}
			if wait {
				if j.Copies <= 0 {
					return usagef("--wait needs --copies N, the number of labels to wait for")
				}
				return a.printAndWait(cmd, &j)
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

// --- counters, history, status ---

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
	var since time.Duration
	var chart bool
	cmd := &cobra.Command{
		Use: "history", Short: "Show the print history of --printer", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts := &labelprinter.HistoryOptions{Resolution: labelprinter.Resolution(strings.ToUpper(resolution))}
			if since > 0 && (start != "" || end != "") {
				return usagef("give --since or --start/--end, not both")
			}
			if since > 0 {
				opts.Start = time.Now().Add(-since)
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
					return a.chart(buckets)
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
	f.DurationVar(&since, "since", 0, "how far back, such as 24h")
	f.StringVar(&start, "start", "", "start of the range, RFC 3339")
	f.StringVar(&end, "end", "", "end of the range, RFC 3339")
	f.BoolVar(&chart, "chart", false, "draw the counts as a chart")
	_ = cmd.RegisterFlagCompletionFunc("resolution", cobra.FixedCompletions([]string{"MINUTES", "HOURS", "DAYS", "WEEKS"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// chart draws the bucket counts in the terminal.
func (a *app) chart(buckets []labelprinter.Bucket) error {
	if len(buckets) == 0 {
		_, err := fmt.Fprintln(a.stdout, "no labels printed in this range")
		return err
	}
	series := make([]float64, len(buckets))
	for i, b := range buckets {
		series[i] = float64(b.Count)
	}
	if len(series) == 1 {
		series = append(series, series[0])
	}
	caption := fmt.Sprintf("labels printed, %s to %s", buckets[0].Start.Format(time.RFC3339), buckets[len(buckets)-1].Start.Format(time.RFC3339))
	_, err := fmt.Fprintln(a.stdout, asciigraph.Plot(series, asciigraph.Height(10), asciigraph.Caption(caption)))
	return err
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
				return a.printRaw(status.Raw)
			})
		},
	}
}

// --- sim ---

func (a *app) simCommand() *cobra.Command {
	var f printersim.Flags // the flags and defaults cmd/printersim has too
	cmd := &cobra.Command{
		Use: "sim", Short: "Run a simulated printer to try every command without one", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, names, err := f.Options()
			if err != nil {
				return usageError{err}
			}
			srv, err := printersim.Listen(f.Addr, opts...)
			if err != nil {
				return err
			}
			defer srv.Close()
			fmt.Fprintf(a.stdout, "simulated printer at %s with printers %s\n", srv.URL, strings.Join(names, ", "))
			fmt.Fprintf(a.stdout, "try: labelctl --url %s --printer %s counters --watch\n", srv.URL, names[0])
			<-cmd.Context().Done()
			if errors.Is(context.Cause(cmd.Context()), context.Canceled) {
				fmt.Fprintln(a.stdout, "stopped")
			}
			return nil
		},
	}
	f.Register(cmd.Flags())
	return cmd
}
