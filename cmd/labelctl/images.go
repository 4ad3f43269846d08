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
	"text/tabwriter"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
)

// The images command group: uploads with progress, downloads and image information.

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
