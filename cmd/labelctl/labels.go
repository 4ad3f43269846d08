package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/spf13/cobra"
)

// The labels and tables command groups.

func (a *app) labelsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "labels", Short: "Manage labels"}
	putRow := &fillRow{}
	s := func(c *labelprinter.Client) store {
		st := store{noun: "label", lint: a.lintLabel, fill: putRow}
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
	lintRow := &fillRow{}
	var strict bool
	lint := &cobra.Command{
		Use:   "lint FILE|NAME",
		Short: "Check a label offline, filled as it will print: every problem on stdout, one a line; exit 1 if any",
		Long: "lint reads FILE (- for stdin) or, when no such file exists and a printer is given with --url,\n" +
			"the label NAME stored on the printer, and checks it as package label does: mandatory\n" +
			"properties, their shapes and values, misspelt types and properties, barcode data and check\n" +
			"digits, GS1 element strings and dynamic-text codes. The label is checked as written and\n" +
			"filled as it will print: dates today, on 31 December, 1 January and 29 February, counters at\n" +
			"their least and largest values, {{Column}} from the row given with --row COLUMN=VALUE or read\n" +
			"from the printer's --table by --key-column and --key. Each problem is printed as PATH: MESSAGE,\n" +
			"PATH in the maker's property names (objs[3].barHeight). Exit 1 when there is any problem; 2 for\n" +
			"a usage mistake, a file that cannot be read or one that is not a JSON object. Then each\n" +
			"warning, where a GS1 symbol of the filled label breaks the GS1 symbol rules (X-dimension, bar\n" +
			"height, 48 characters of GS1-128), as warning: PATH: MESSAGE; they exit 1 only with --strict.",
		Args: exactArgs(1, "a label file (or - for stdin) or, with --url, a label name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := args[0]
			env, err := a.fillEnv(cmd, lintRow)
			if err != nil {
				return err
			}
			if arg == "-" || a.url == "" {
				body, err := a.readInput(arg)
				if err != nil {
					return err
				}
				return a.lintWarn(arg, body, env, strict)
			}
			if _, err := os.Stat(arg); err == nil || !errors.Is(err, fs.ErrNotExist) {
				body, err := a.readInput(arg)
				if err != nil {
					return err
				}
				return a.lintWarn(arg, body, env, strict)
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				raw, err := c.Labels.Get(ctx, arg)
				if err != nil {
					return err
				}
				return a.lintWarn(fmt.Sprintf("label %q", arg), raw, env, strict)
			})
		},
	}
	lintRow.register(lint.Flags(), true)
	lint.Flags().BoolVar(&strict, "strict", false, "exit 1 when there is a warning too")
	cmd.AddCommand(lint)
	cmd.AddCommand(a.labelsPreviewCommand())
	return cmd
}

// lintFailed is a label with problems, or warnings under --strict: exit 1, both already on
// stdout.
type lintFailed struct {
	what  string
	n     int
	warns int // counted under --strict only
}

func (e lintFailed) Error() string {
	var parts []string
	if e.n > 0 || e.warns == 0 {
		parts = append(parts, plural(e.n, "problem"))
	}
	if e.warns > 0 {
		parts = append(parts, plural(e.warns, "warning")+" (--strict)")
	}
	return e.what + " has " + strings.Join(parts, " and ")
}

// lintLabel prints the problems of the label body (named what in the summary) as it will
// print, filled from env (label.Lint), one a line, or as a JSON array of {"path", "msg"} with
// -o json, and fails when there is any (exit 1). A body that is not a JSON object at all is a
// usage error (exit 2), as it is for preview; a JSON object that Parse refuses is one problem.
func (a *app) lintLabel(what string, body []byte, env *label.Env) error {
	return a.lint(what, body, env, false, false)
}

// lintWarn is lintLabel that also prints the warnings of the label as it will print, filled
// from env (label.LintWarnings: the GS1 symbol rules), after the problems, as "warning: PATH: MESSAGE" or
// with "warning": true in JSON; they fail it only when strict.
func (a *app) lintWarn(what string, body []byte, env *label.Env, strict bool) error {
	return a.lint(what, body, env, true, strict)
}

func (a *app) lint(what string, body []byte, env *label.Env, warnings, strict bool) error {
	type problem struct {
		Path    string `json:"path"`
		Msg     string `json:"msg"`
		Warning bool   `json:"warning,omitempty"`
	}
	if what == "-" {
		what = "the label on stdin"
	}
	var ps []problem
	l, err := label.Parse(body)
	switch {
	case errors.Is(err, label.ErrNotJSONObject):
		return usagef("%s: %v", what, err)
	case err != nil:
		ps = append(ps, problem{Msg: err.Error()})
	default:
		for _, p := range l.Lint(env) {
			ps = append(ps, problem{Path: p.Path, Msg: p.Msg})
		}
	}
	problems := len(ps)
	if l != nil && warnings {
		for _, p := range l.LintWarnings(env, 0) {
			ps = append(ps, problem{Path: p.Path, Msg: p.Msg, Warning: true})
		}
	}
	warns := len(ps) - problems
	if a.output == "json" {
		if ps == nil {
			ps = []problem{}
		}
		if err := a.printJSON(ps); err != nil {
			return err
		}
	} else {
		for _, p := range ps {
			line := p.Msg
			if p.Path != "" {
				line = p.Path + ": " + p.Msg
			}
			if p.Warning {
				line = "warning: " + line
			}
			if _, err := fmt.Fprintln(a.stdout, oneLine(line)); err != nil {
				return err
			}
		}
	}
	if !strict {
		warns = 0
	}
	if problems > 0 || warns > 0 {
		return lintFailed{what: what, n: problems, warns: warns}
	}
	return nil
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
