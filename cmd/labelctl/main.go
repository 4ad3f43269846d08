// Command labelctl drives a label printer from the command line: labels, images, tables,
// print jobs, counters and history, and a built-in simulator to try it all without a printer.
//
//	labelctl sim --printers line1,line2            # in one terminal
//	labelctl --url http://127.0.0.1:8631 counters --watch --printer line1
//	labelctl --url http://127.0.0.1:8631 print job --printer line1 --label L --copies 5 --wait
//
// labelctl --version (or labelctl version) prints the version, commit, build date, Go version
// and licence.
//
// Exit codes: 0 on success, 1 when the printer or the network failed, 2 for a usage error.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/buildinfo"
	"github.com/spf13/cobra"
	"golang.org/x/term"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// app holds the global flags and the streams of one invocation.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	env            func(string) string
	// terminal reports whether w is a terminal, for progress bars and in-place redraws.
	terminal func(w io.Writer) bool

	url, printer, token, caCert string
	cert, certKey               string
	insecure, verbose           bool
	timeout                     time.Duration
	output                      string

	client *labelprinter.Client
}

// usageError marks a mistake in the command line (exit code 2).
type usageError struct{ error }

// Unwrap lets message and errors.Is see the error a usage error holds.
func (u usageError) Unwrap() error { return u.error }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// run executes labelctl with args and returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, env func(string) string) int {
	a := &app{stdin: stdin, stdout: stdout, stderr: stderr, env: env, terminal: isTerminal}
	root := a.rootCommand()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if a.client != nil {
		_ = a.client.Close()
	}
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "labelctl: "+message(err))
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	if errors.As(err, &ue) || errors.Is(err, labelprinter.ErrInvalidArgument) {
		return 2
	}
	// cobra's own argument and flag errors are plain errors.
	msg := err.Error()
	for _, p := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "invalid argument", "accepts ", "requires at least", "flag needs an argument", "required flag"} {
		if strings.Contains(msg, p) {
			return 2
		}
	}
	return 1
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func (a *app) rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:               "labelctl",
		Short:             "Drive a label printer over its HTTP control service (API v3)",
		SilenceErrors:     true,
		SilenceUsage:      true,
		PersistentPreRunE: a.checkUsage,
	}
	root.SetFlagErrorFunc(flagError)
	// cobra prints the template for --version; the text is kept in an annotation so that no
	// part of it is read as a template.
	info := buildinfo.Get()
	root.Version = info.Version
	root.Annotations = map[string]string{"buildinfo": info.Print("labelctl")}
	root.SetVersionTemplate(`{{index .Annotations "buildinfo"}}`)
	root.Flags().Bool("version", false, "print the version, the commit and date it was built from, the Go version and the licence")
	pf := root.PersistentFlags()
	pf.StringVar(&a.url, "url", a.env("LABELPRINTER_URL"), "printer base URL, such as http://192.168.1.50 (env LABELPRINTER_URL)")
	pf.StringVar(&a.printer, "printer", a.env("LABELPRINTER_PRINTER"), "printer name; empty uses the single-printer paths (env LABELPRINTER_PRINTER)")
	pf.StringVar(&a.token, "token", "", "bearer token (env LABELPRINTER_TOKEN; never printed)")
	pf.BoolVar(&a.insecure, "insecure-skip-verify", false, "do not verify the printer's TLS certificate")
	pf.StringVar(&a.caCert, "ca-cert", "", "PEM file with the CA that signed the printer's certificate")
	pf.StringVar(&a.cert, "cert", a.env("LABELPRINTER_CERT"), "PEM file with a client certificate, for a printer behind mTLS (env LABELPRINTER_CERT)")
	pf.StringVar(&a.certKey, "cert-key", a.env("LABELPRINTER_KEY"), "PEM file with the private key of --cert (env LABELPRINTER_KEY)")
	pf.DurationVar(&a.timeout, "timeout", 30*time.Second, "time limit of each request, retries included")
	pf.StringVarP(&a.output, "output", "o", "table", "output format: table or json")
	pf.BoolVarP(&a.verbose, "verbose", "v", false, "log each request and each answer (status, duration) on stderr (never credentials)")
	_ = root.RegisterFlagCompletionFunc("printer", a.completePrinters)
	_ = root.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json"}, cobra.ShellCompDirectiveNoFileComp))

	root.AddCommand(a.labelsCommand(), a.imagesCommand(), a.tablesCommand(), a.printCommand(),
		a.countersCommand(), a.historyCommand(), a.statusCommand(), a.simCommand(), a.watchCommand(), a.outboxCommand(),
		a.sparkplugCommand(), versionCommand(root.Annotations["buildinfo"]))
	// cobra adds these while executing; adding them now lets requireSubcommand reach them. The
	// completion commands keep the output stream they are created with, so it is set first.
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	requireSubcommand(root)
	checkUsageFirst(root, a.checkUsage)
	return root
}

// versionCommand is labelctl version: what --version prints, for those who type it as a command.
func versionCommand(text string) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the commit and date it was built from, the Go version and the licence",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), text)
			return err
		},
	}
}

// checkUsage refuses a bad -o and any flag value out of its range (flagcheck.go), before a
// command opens or sends anything.
func (a *app) checkUsage(cmd *cobra.Command, _ []string) error {
	switch a.output {
	case "table", "json":
	default:
		return usagef("-o must be table or json, not %q", a.output)
	}
	return checkFlags(cmd)
}

// checkUsageFirst makes check run before the PersistentPreRunE of every command group that has
// its own: cobra runs only the nearest one, which would skip the root's.
func checkUsageFirst(cmd *cobra.Command, check func(*cobra.Command, []string) error) {
	for _, sub := range cmd.Commands() {
		checkUsageFirst(sub, check)
		if plain := sub.PersistentPreRun; plain != nil && sub.PersistentPreRunE == nil {
			sub.PersistentPreRun = nil
			sub.PersistentPreRunE = func(c *cobra.Command, args []string) error { plain(c, args); return nil }
		}
		if own := sub.PersistentPreRunE; own != nil {
			sub.PersistentPreRunE = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return err
				}
				return own(c, args)
			}
		}
	}
}

// requireSubcommand makes running a command group without a known subcommand a usage error
// (exit 2, help on stderr). cobra would print the group's help and exit 0, so a script with a
// typo in a subcommand would believe it succeeded.
func requireSubcommand(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		requireSubcommand(sub)
	}
	if !cmd.HasSubCommands() || cmd.Runnable() {
		return
	}
	cmd.Args = cobra.ArbitraryArgs
	cmd.SuggestionsMinimumDistance = 2 // cobra sets its default only on the root, while executing
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(args) > 0 {
			msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				msg += " (did you mean " + strings.Join(s, " or ") + "?)"
			}
			return usageError{errors.New(msg)}
		}
		cmd.SetOut(cmd.ErrOrStderr())
		_ = cmd.Help()
		return usagef("%s needs a subcommand", cmd.CommandPath())
	}
}

// call runs f with a client and a context bounded by --timeout.
func (a *app) call(cmd *cobra.Command, f func(ctx context.Context, c *labelprinter.Client) error) error {
	c, err := a.connect()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(cmd.Context(), a.timeout)
	defer cancel()
	return f(ctx, c)
}

// printJSON writes v as indented JSON.
func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// printRaw writes a JSON body from the printer, indented, or "(no body)".
func (a *app) printRaw(raw json.RawMessage) error {
	if len(raw) == 0 {
		if a.output == "json" {
			_, err := fmt.Fprintln(a.stdout, "null")
			return err
		}
		_, err := fmt.Fprintln(a.stdout, "ok")
		return err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	return a.printJSON(v)
}

// needPrinter refuses commands that have no single-printer form.
func (a *app) needPrinter(what string) error {
	if a.printer == "" {
		return usagef("%s needs --printer (or LABELPRINTER_PRINTER)", what)
	}
	return nil
}
