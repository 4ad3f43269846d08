package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/spf13/cobra"
)

// The labels and tables command groups.

func (a *app) labelsCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "labels", Short: "Manage labels"}
	s := func(c *labelprinter.Client) store {
		st := store{noun: "label", lint: a.lintLabel}
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
	cmd.AddCommand(&cobra.Command{
		Use:   "lint FILE|NAME",
		Short: "Check a label offline: every problem on stdout, one a line; exit 1 if any",
		Long: "lint reads FILE (- for stdin) or, when no such file exists and a printer is given with --url,\n" +
			"the label NAME stored on the printer, and checks it as package label does: mandatory\n" +
			"properties, their shapes and values, barcode data and check digits, GS1 element strings\n" +
			"and dynamic-text braces. Each problem is printed as PATH: MESSAGE, PATH in the maker's\n" +
			"property names (objs[3].barHeight); the exit code is 1 when there is any.",
		Args: exactArgs(1, "a label file (or - for stdin) or, with --url, a label name"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			arg := args[0]
			if arg == "-" || a.url == "" {
				body, err := a.readInput(arg)
				if err != nil {
					return err
				}
				return a.lintLabel(arg, body)
			}
			if _, err := os.Stat(arg); err == nil || !errors.Is(err, fs.ErrNotExist) {
				body, err := a.readInput(arg)
				if err != nil {
					return err
				}
				return a.lintLabel(arg, body)
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				raw, err := c.Labels.Get(ctx, arg)
				if err != nil {
					return err
				}
				return a.lintLabel(fmt.Sprintf("label %q", arg), raw)
			})
		},
	})
	cmd.AddCommand(a.labelsPreviewCommand())
	return cmd
}

// lintFailed is a label with problems: exit 1, the problems already on stdout.
type lintFailed struct {
	what string
	n    int
}

func (e lintFailed) Error() string {
	if e.n == 1 {
		return e.what + " has 1 problem"
	}
	return fmt.Sprintf("%s has %d problems", e.what, e.n)
}

// lintLabel prints the problems of the label body (named what in the summary), one a line, or
// as a JSON array of {"path", "msg"} with -o json, and fails when there is any. A body that is
// not a label at all is one problem.
func (a *app) lintLabel(what string, body []byte) error {
	type problem struct {
		Path string `json:"path"`
		Msg  string `json:"msg"`
	}
	if what == "-" {
		what = "the label on stdin"
	}
	var ps []problem
	l, err := label.Parse(body)
	if err != nil {
		ps = append(ps, problem{Msg: err.Error()})
	} else {
		for _, p := range label.ProblemsOf(l.Validate()) {
			ps = append(ps, problem{Path: p.Path, Msg: p.Msg})
		}
	}
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
			if _, err := fmt.Fprintln(a.stdout, oneLine(line)); err != nil {
				return err
			}
		}
	}
	if len(ps) > 0 {
		return lintFailed{what: what, n: len(ps)}
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
