package main

// How labelctl aims at a queue in PostgreSQL: the queues a database holds, and the refusal of
// one that it does not, before anything is created or read from it.

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	labelprinter "github.com/labelprinter/go-labelprinter"
	"github.com/labelprinter/go-labelprinter/internal/suggest"
	"github.com/labelprinter/go-labelprinter/outbox"
	"github.com/spf13/pflag"
)

// queueExists refuses, as a usage error (exit 2), a queue the database at dsn (--db as typed:
// db) does not hold, naming those it does.
func queueExists(ctx context.Context, dsn, db, queue string) error {
	qs, err := outbox.PostgresQueues(ctx, dsn)
	if err != nil {
		return outboxError("open", "", outboxName(db, queue), err)
	}
	names := make([]string, len(qs))
	for i, q := range qs {
		if q.Name == queue {
			return nil
		}
		names[i] = q.Name
	}
	msg := fmt.Sprintf("%s does not exist: ", outboxName(db, queue))
	if len(names) == 0 {
		msg += "that database holds no queue yet"
	} else {
		msg += "its queues are " + strings.Join(names, ", ")
		if c := suggest.Closest(queue, names); c != "" {
			msg += " (did you mean --queue-name " + c + "?)"
		}
	}
	return usagef("%s; 'labelctl outbox queues' lists them, 'labelctl outbox enqueue --create' makes one", msg)
}

// printQueues prints the queues, one a line: name, controller and the entries by state.
func (a *app) printQueues(qs []outbox.QueueInfo) error {
	if a.output == "json" {
		type queueJSON struct {
			Queue      string         `json:"queue"`
			Controller string         `json:"controller"`
			Entries    map[string]int `json:"entries"`
		}
		out := make([]queueJSON, len(qs))
		for i, q := range qs {
			e := map[string]int{}
			for _, s := range outboxStates {
				e[string(s)] = q.Entries[s]
			}
			out[i] = queueJSON{Queue: q.Name, Controller: q.Controller, Entries: e}
		}
		return a.printJSON(out)
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	head := "QUEUE\tCONTROLLER"
	for _, s := range outboxStates {
		head += "\t" + strings.ToUpper(string(s))
	}
	fmt.Fprintln(tw, head)
	for _, q := range qs {
		line := q.Name + "\t" + printerName(q.Controller)
		for _, s := range outboxStates {
			line += fmt.Sprintf("\t%d", q.Entries[s])
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}

// enqueueKind reads enqueue's --trigger and --deselect: the kind of intent and, for a print
// job, the job. A trigger or deselect takes no job flag, and a trigger needs --printer.
func enqueueKind(f *pflag.FlagSet, jf *jobFlags, trigger, deselect bool, printer string) (outbox.Kind, labelprinter.PrintJob, error) {
	if !trigger && !deselect {
		j, err := jf.build(f)
		return outbox.KindPrintJob, j, err
	}
	if trigger && deselect {
		return 0, labelprinter.PrintJob{}, usagef("give --trigger or --deselect, not both: each is one intent")
	}
	kind, flag := outbox.KindTrigger, "--trigger"
	if deselect {
		kind, flag = outbox.KindDeselect, "--deselect"
	}
	jobFlagNames := pflag.NewFlagSet("", pflag.ContinueOnError)
	(&jobFlags{}).declare(jobFlagNames)
	var given []string
	f.Visit(func(fl *pflag.Flag) {
		if jobFlagNames.Lookup(fl.Name) != nil {
			given = append(given, "--"+fl.Name)
		}
	})
	if len(given) > 0 {
		return 0, labelprinter.PrintJob{}, usagef("%s sends no job: %s is for a print job", flag, strings.Join(given, ", "))
	}
	if kind == outbox.KindTrigger && printer == "" {
		return 0, labelprinter.PrintJob{}, usagef("--trigger needs --printer (or LABELPRINTER_PRINTER): the printer's API has no trigger without a printer's name")
	}
	return kind, labelprinter.PrintJob{}, nil
}
