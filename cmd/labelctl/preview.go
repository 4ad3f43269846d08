package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"strings"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/labelprinter/go-labelprinter/label/preview"
	"github.com/spf13/cobra"
)

// previewWarnings is a preview drawn with warnings, or of a label with problems, under
// --strict: exit 1, the PNG written and the problems and warnings already on stderr.
type previewWarnings struct{ n, problems int }

func (e previewWarnings) Error() string {
	var parts []string
	if e.problems > 0 {
		parts = append(parts, plural(e.problems, "problem"))
	}
	if e.n > 0 {
		parts = append(parts, plural(e.n, "warning"))
	}
	return "the preview has " + strings.Join(parts, " and ") + " (--strict)"
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// labelsPreviewCommand is labels preview: a label drawn to a PNG, offline or from the printer.
func (a *app) labelsPreviewCommand() *cobra.Command {
	var (
		file, out    string
		dpi          float64
		fonts        []string
		strict       bool
		row          fillRow
		sim          labelprinter.SimulationOptions
		completeName = a.completeNames(func(ctx context.Context, c *labelprinter.Client) (map[string]json.RawMessage, error) {
			return c.Labels.List(ctx)
		})
	)
	cmd := &cobra.Command{
		Use:   "preview NAME|--file=FILE",
		Short: "Draw a label to a PNG as it would print (approximately), warnings on stderr",
		Long: "preview draws the label NAME stored on the printer (filled by the printer's own simulation\n" +
			"when --table, --key-column and --key name a row) or the label in --file (- for stdin,\n" +
			"offline; dynamic text is filled at this computer's clock) to the PNG -o/--out (- for\n" +
			"stdout), at --dpi or the label's resolution (else 300 dpi). What the preview cannot draw\n" +
			"as the label asks (a font not given with --font, an unknown object, a stored image it\n" +
			"cannot read, another object in a symbol's quiet zone) is listed on stderr, one a line, and\n" +
			"so is each problem lint finds in the label as filled and drawn (problem: PATH: MESSAGE) and\n" +
			"each of lint's warnings (where a GS1 symbol breaks the GS1 symbol rules); the exit code is 0,\n" +
			"or 1 with --strict when there is any; 2 for a usage mistake, a file that cannot be read or\n" +
			"one that is not a JSON object. --row COLUMN=VALUE fills {{COLUMN}} of a --file offline.\n" +
			"--font FAMILY[:STYLE]=FILE draws a family (in one style, or all) with a TrueType or\n" +
			"OpenType file; other families are drawn with Go's fonts.",
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case file != "" && len(args) > 0:
				return usagef("give a label NAME or --file, not both")
			case file == "" && len(args) != 1:
				return usagef("labels preview needs a label NAME (with --url) or --file FILE")
			}
			return nil
		},
		ValidArgsFunction: completeName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("labels preview needs -o/--out FILE.png (- for stdout)")
			}
			if dpi > 10000 {
				return usagef("--dpi %v: must be at most 10000", dpi)
			}
			if file != "" && (sim != labelprinter.SimulationOptions{}) {
				return usagef("--table, --key-column and --key fill a label stored on the printer: give its NAME, not --file (or fill the file with --row COLUMN=VALUE)")
			}
			if file == "" && row.set() {
				return usagef("--row fills a --file offline; a label on the printer is filled from the row named by --table, --key-column and --key")
			}
			if file == "" && a.url == "" {
				if fi, err := os.Stat(args[0]); err == nil && fi.Mode().IsRegular() {
					return usagef("labels preview %s: a NAME is a label on the printer (--url); to draw the file give --file %s", args[0], args[0])
				}
				return usagef("labels preview %s: no printer to read the label from: give --url, or --file FILE to draw a file offline", args[0])
			}
			if file != "" && file != "-" && out != "-" {
				fi, err1 := os.Stat(file)
				fo, err2 := os.Stat(out)
				if err1 == nil && err2 == nil && os.SameFile(fi, fo) {
					return usagef("-o %s is the label file --file %s: the PNG would overwrite it", out, file)
				}
			}
			opts := &preview.Options{DPI: dpi}
			var err error
			if opts.Fonts, err = parseFonts(fonts); err != nil {
				return err
			}
			if file != "" {
				if opts.Env, err = a.fillEnv(cmd, &row); err != nil {
					return err
				}
				body, err := a.readInput(file)
				if err != nil {
					return err
				}
				l, err := label.Parse(body)
				if errors.Is(err, label.ErrNotJSONObject) {
					return usagef("%s: %v", file, err)
				} else if err != nil {
					return fmt.Errorf("%s: %w", file, err) // a JSON object, but no label: exit 1
				}
				if a.url == "" {
					return a.writePreview(context.Background(), l, opts, out, strict)
				}
				return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
					opts.Images = preview.ImagesFrom(c) // stored images from the printer given
					return a.writePreview(ctx, l, opts, out, strict)
				})
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				var raw []byte
				var err error
				if sim != (labelprinter.SimulationOptions{}) {
					raw, err = c.Labels.Simulate(ctx, args[0], &sim)
				} else {
					raw, err = c.Labels.Get(ctx, args[0])
				}
				if err != nil {
					return err
				}
				l, err := label.Parse(raw)
				if err != nil {
					return fmt.Errorf("label %q: %w", args[0], err)
				}
				opts.Images = preview.ImagesFrom(c)
				return a.writePreview(ctx, l, opts, out, strict)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&file, "file", "", "label JSON file to draw offline (- for stdin)")
	// -o is this command's own: the global -o table|json means nothing for a picture. A local
	// flag named output hides the global one, so that its -o shorthand is free for --out.
	f.StringVarP(&out, "out", "o", "", "PNG file to write (- for stdout)")
	f.StringVar(&out, "output", "", "same as --out")
	_ = f.MarkHidden("output")
	f.Float64Var(&dpi, "dpi", 0, "resolution in dots per inch (default: the label's hdpi/vdpi, else 300)")
	f.StringArrayVar(&fonts, "font", nil, "FAMILY[:STYLE]=FILE: draw a font family (or one style of it) with a TrueType/OpenType file; repeatable")
	f.BoolVar(&strict, "strict", false, "exit 1 when the preview has any warning or the label any problem")
	row.register(f, false)
	f.StringVar(&sim.TableName, "table", "", "table to fill the label from (by the printer's simulation)")
	f.StringVar(&sim.KeyColumn, "key-column", "", "column searched for --key")
	f.StringVar(&sim.Key, "key", "", "value searched in --key-column")
	return cmd
}

// parseFonts reads --font FAMILY[:STYLE]=FILE values, each file read and parsed now so that a
// bad one is a usage error naming it.
func parseFonts(specs []string) (map[preview.FontKey]preview.FontSource, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	m := map[preview.FontKey]preview.FontSource{}
	for _, s := range specs {
		name, path, ok := strings.Cut(s, "=")
		if !ok || name == "" || path == "" {
			return nil, usagef("--font %q: want FAMILY[:STYLE]=FILE", s)
		}
		family, style, _ := strings.Cut(name, ":")
		f, err := preview.LoadFont(path)
		if err != nil {
			return nil, usagef("--font %q: %v", s, err)
		}
		m[preview.FontKey{Family: family, Style: style}] = preview.FontSource{Font: f}
	}
	return m, nil
}

// writePreview draws l, writes the PNG to out, and to stderr the problems of the label as
// filled and drawn (what lint reports of it) and the preview's warnings.
func (a *app) writePreview(ctx context.Context, l *label.Label, opts *preview.Options, out string, strict bool) error {
	env := label.Env{}
	if opts.Env != nil {
		env = *opts.Env
	}
	now := time.Now()
	if env.Clock != nil {
		now = env.Clock()
	}
	env.Clock = func() time.Time { return now } // the label drawn and the label checked are one
	opts.Env = &env
	var problems label.Problems
	if filled, _ := l.Fill(&env); filled != nil {
		problems = filled.Problems() // codes it could not fill are the preview's warnings
	}
	img, warns, err := preview.RenderContext(ctx, l, opts)
	if err == nil {
		warns = append(warns, symbolWarnings(l, opts)...)
	}
	for _, p := range problems {
		fmt.Fprintln(a.stderr, "problem: "+oneLine(p.Error()))
	}
	for _, w := range warns {
		fmt.Fprintln(a.stderr, "warning: "+oneLine(w.String()))
	}
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := encodePNG(&buf, img); err != nil {
		return err
	}
	if out == "-" {
		if _, err := a.stdout.Write(buf.Bytes()); err != nil {
			return err
		}
	} else if err := os.WriteFile(out, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if strict && len(warns)+len(problems) > 0 {
		return previewWarnings{n: len(warns), problems: len(problems)}
	}
	return nil
}

// symbolWarnings are the label's warnings of the GS1 symbol rules (label.Warnings), judged
// filled and at the preview's resolution, as the preview's.
func symbolWarnings(l *label.Label, opts *preview.Options) preview.Warnings {
	var o preview.Options
	if opts != nil {
		o = *opts
	}
	filled, _ := l.Fill(o.Env) // what cannot be filled the preview has warned about
	if filled == nil {
		return nil
	}
	var ws preview.Warnings
	for _, p := range filled.Warnings(o.DPI) {
		ws = append(ws, preview.Warning{Path: p.Path, Msg: p.Msg})
	}
	return ws
}

func encodePNG(w io.Writer, img image.Image) error {
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	return enc.Encode(w, img)
}
