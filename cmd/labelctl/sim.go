package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/labelprinter/go-labelprinter/printersim"
	"github.com/labelprinter/go-labelprinter/printersim/pictures"
	"github.com/spf13/cobra"
)

// The sim command: a simulated printer on loopback.

func (a *app) simCommand() *cobra.Command {
	var f printersim.Flags // the flags and defaults cmd/printersim has too
	cmd := &cobra.Command{
		Use: "sim", Short: "Run a simulated printer to try every command without one", Args: exactArgs(0, "no argument"),
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, names, err := f.Options()
			if err != nil {
				return usageError{err}
			}
			opts = append(opts, printersim.WithPictures(pictures.Draw)) // the page's pictures of the labels printed
			srv, err := printersim.Listen(f.Addr, opts...)
			if err != nil {
				return err
			}
			defer srv.Close()
			fmt.Fprintf(a.stdout, "simulated printer at %s with printers %s\n", srv.URL, strings.Join(names, ", "))
			if f.UI {
				fmt.Fprintf(a.stdout, "open %s/ in a browser to see every label it prints\n", srv.URL)
			}
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
