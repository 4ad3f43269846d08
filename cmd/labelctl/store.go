package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/label"
	"github.com/spf13/cobra"
)

// Shared shapes of the store groups: JSON documents stored under a name (labels, tables),
// reading input, listing names and shell completion.

func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %s", cmd.CommandPath(), names)
		}
		return nil
	}
}

type store struct {
	noun   string
	list   func(context.Context) (map[string]json.RawMessage, error)
	get    func(context.Context, string) (json.RawMessage, error)
	put    func(context.Context, string, any) error
	delete func(context.Context, string) error
	// lint, when set, backs put's --check: it prints the document's problems, filled from
	// the Env, and fails when there is any (lintLabel).
	lint func(what string, body []byte, env *label.Env) error
	// fill, with lint, is the row put --check fills the document from (--row, --table ...).
	fill *fillRow
}

func (a *app) storeCommands(parent *cobra.Command, s func(*labelprinter.Client) store, complete cobra.CompletionFunc) {
	noun := s(nil).noun
	var check bool
	put := &cobra.Command{
		Use: "put NAME FILE|-", Short: "Create or replace a " + noun + " from a JSON file or stdin", Args: exactArgs(2, "a name and a file (or - for stdin)"), ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			body, err := a.readInput(args[1])
			if err != nil {
				return err
			}
			if !json.Valid(body) {
				return usagef("%s is not valid JSON", args[1])
			}
			if st := s(nil); st.fill != nil && st.fill.set() && !check {
				return usagef("--row, --table, --key-column and --key fill the %s for --check: give --check", noun)
			}
			if check {
				st := s(nil)
				env, err := a.fillEnv(cmd, st.fill)
				if err != nil {
					return err
				}
				// Checked before the label is sent: a label with problems sends nothing.
				if err := st.lint(args[1], body, env); err != nil {
					return err
				}
			}
			return a.call(cmd, func(ctx context.Context, c *labelprinter.Client) error {
				if err := s(c).put(ctx, args[0], json.RawMessage(body)); err != nil {
					return err
				}
				return a.done("stored %s %q", noun, args[0])
			})
		},
	}
	if st := s(nil); st.lint != nil {
		put.Flags().BoolVar(&check, "check", false, "check the "+noun+" first, as lint does, and send nothing if it has problems")
		st.fill.register(put.Flags(), true)
	}
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
	}, put, &cobra.Command{
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
