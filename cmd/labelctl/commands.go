package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
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
	var size int64
	put := &cobra.Command{
		Use: "put NAME FILE|-", Short: "Upload a PNG, JPEG or TIFF image, or the JSON form", Args: exactArgs(2, "a name and a file (or - for stdin)"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts := &labelprinter.ImagePutOptions{Intent: labelprinter.Intent(intent)}
			if args[1] == "-" {
				return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
					return a.putStdin(ctx, c, args[0], size, opts)
				})
			}
			if size != 0 {
				return usagef("--size is for stdin (-); a file's size is read from the file")
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
	put.Flags().Int64Var(&size, "size", 0, "length of stdin in bytes, sent as Content-Length (without it stdin is sent chunked)")
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

// putStdin streams stdin to the image called name: the first bytes are read to tell the
// content type, the rest follow without being held, so memory stays flat whatever the size.
// With size the body goes out with that Content-Length; without, it goes chunked, and a
// printer that wants a length (411) is answered with the flag to pass.
func (a *app) putStdin(ctx context.Context, c *labelprinter.Client, name string, size int64, opts *labelprinter.ImagePutOptions) error {
	if size == 0 {
		size = regularFileLeft(a.stdin) // "< logo.png" tells its length; a pipe does not
	}
	head := make([]byte, 512)
	n, err := io.ReadFull(a.stdin, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return fmt.Errorf("reading stdin: %w", err)
	}
	head = head[:n]
	ct := sniff(head)
	if ct == "" {
		return usagef("stdin is not PNG, JPEG, TIFF or the JSON form")
	}
	opts.Size = size
	total := size
	if total == 0 {
		total = -1 // unknown: a spinner
	}
	bar, finish := a.progress(total, "uploading")
	// A plain reader, never the *os.File: a pipe cannot seek, and the SDK must not try.
	body := &countReader{r: io.TeeReader(io.MultiReader(bytes.NewReader(head), a.stdin), bar)}
	err = c.Images.Put(ctx, name, body, ct, opts)
	finish()
	var apiErr *labelprinter.APIError
	switch {
	case err == nil:
		return a.done("uploaded image %q (%s, %d bytes)", name, ct, body.n)
	case opts.Size == 0 && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusLengthRequired:
		return fmt.Errorf("%w; stdin was sent chunked, as its length is unknown: pass --size with its length in bytes", apiErr)
	}
	return err
}

// regularFileLeft returns the bytes left to read in r when it is a regular file (stdin
// redirected from one), else 0.
func regularFileLeft(r io.Reader) int64 {
	f, ok := r.(*os.File)
	if !ok {
		return 0
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	off, err := f.Seek(0, io.SeekCurrent)
	if err != nil || off > st.Size() {
		return 0
	}
	return st.Size() - off
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
