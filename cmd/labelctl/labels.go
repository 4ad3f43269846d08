package main

import (
	"context"
	"encoding/json"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/spf13/cobra"
)

// The labels and tables command groups.

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
